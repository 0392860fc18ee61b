"""The build step of pyproject.toml: `make` in the project's root for
libroformer.so, copied into the package (roformer/libroformer.so, where
roformer._capi looks first after $ROFORMER_LIBRARY). The wheel is therefore
platform-specific. $ROFORMER_BUILD names the build folder (default build/);
$MAKEFLAGS and $MAKE are the usual make controls. setuptools' own build
files go under that folder too, so that the source tree stays clean."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("ROFORMER_BUILD", "build")


def library():
    """Runs make for the shared library; returns its path."""
    if not os.path.exists(os.path.join(ROOT, "Makefile")):
        raise RuntimeError("roformer: no Makefile at %s; build from the roformer.c source tree "
                           "(pip install ./tools/python)" % ROOT)
    target = os.path.join(BUILD, "libroformer.so")
    subprocess.check_call([os.environ.get("MAKE", "make"), "-C", ROOT, "BUILD=" + BUILD, target])
    return os.path.join(ROOT, target)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "roformer", "libroformer.so")
        shutil.copyfile(library(), dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # a platform wheel: it carries a compiled library


scratch = os.path.join(ROOT, BUILD, "python")
os.makedirs(scratch, exist_ok=True)
setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(scratch, "build")},
               "egg_info": {"egg_base": scratch}})
