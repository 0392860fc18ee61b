"""roformer — RoFormer inference from Python, over the C library
(libroformer.so) through the standard library's ctypes; numpy for arrays.

    import roformer
    with roformer.Model("model.gguf") as m:       # or an HF checkpoint directory
        m.classify("这家酒店服务很好")              # [{"label": ..., "score": ...}]
        m.encode(["今天天气很好", "今天天气不错"])   # float32 array (2, hidden_size)

Numbers are the `roformer` CLI's, to the last bit. roformer.util has
sentence-transformers' cos_sim and semantic_search, roformer.quantization
its quantize_embeddings. roformer.dask runs the
same jobs over a dask.bag on a cluster (imported on its own: `import
roformer.dask`). The library is found through $ROFORMER_LIBRARY, beside
this package, in the build tree, or in the installed prefix's lib/.
"""

from . import quantization, util
from ._capi import library_path
from .model import Error, Model

__version__ = "2.1.0"
__all__ = ["Model", "Error", "library_path", "quantization", "util", "__version__"]
