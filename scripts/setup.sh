#!/bin/sh
# setup.sh [--tests] [--bench] [--arm64] [--x86] — installs the Debian packages roformer.c needs to build
# and test (skipping those already installed). Run as root, or with sudo available.
#
# With no flag: what `make` and most of `make test` need. The suites that need
# more say SKIP, naming the package, until it is there.
#
# --tests adds what the rest of `make test` needs, so that it skips nothing but
# what the CPU lacks (.ci/run uses it): pandas (the Dask DataFrame job's test),
# PyTorch (the sentence-transformers `encode` tests) and Node.js with npm (the
# official npm clients against `roformer serve`, installed into build/).
#
# --bench adds what the comparison and training scripts need, --tests' packages
# among them: PyTorch (scripts/compare.sh's PyTorch peer and ONNX export,
# scripts/train_default_model.py), python3-onnx (the ort-int8 peer, quantized by
# ../shared/tools/quantize_ort_int8.py) and Node.js with npm (compare.sh's ONNX
# Runtime peer, which npm then installs into build/peer). scripts/compare.sh
# runs it itself.
#
# --arm64 adds what `make ARCH=aarch64` and `make test-arm64` need
# (docs/arm64.md): the cross compiler, qemu-user-static, and the libraries
# as arm64 multiarch packages (dpkg --add-architecture arm64 first).
#
# --x86 adds what `make test-x86 CPU=NAME` needs: qemu-user-static, whose
# qemu-x86_64-static runs the native build's tests on other x86-64 CPU models.
set -e
tests=0
bench=0
arm64=0
x86=0
for flag in "$@"; do
    case "$flag" in
        --tests) tests=1 ;;
        --bench) bench=1; tests=1 ;;
        --arm64) arm64=1 ;;
        --x86) x86=1 ;;
        *) echo "usage: sh scripts/setup.sh [--tests] [--bench] [--arm64] [--x86]" >&2; exit 2 ;;
    esac
done
need="build-essential pkg-config libopenblas-dev libcjson-dev libutf8proc-dev python3-jieba python3-numpy"
# roformer pull and -m hf:...: HTTP(S) with libcurl, sha256 with OpenSSL's libcrypto
need="$need libcurl4-openssl-dev libssl-dev"
# the Python package's tests and its Dask jobs
need="$need python3-pytest python3-dask python3-distributed"
# encode's progress bar (python3-tqdm); pip install ./tools/python into a
# virtual environment, as tests/python/test_pip_install.sh does
need="$need python3-tqdm python3-venv python3-pip python3-setuptools"
# roformer serve (HTTP library), its tests (curl, python3-requests) and load test (wrk)
need="$need libmicrohttpd-dev curl python3-requests wrk"
# make fuzz (clang with libFuzzer) and make valgrind
need="$need clang libclang-rt-14-dev valgrind"
if [ "$tests" -eq 1 ]; then
    need="$need python3-pandas python3-torch"
    # Node.js may come from elsewhere (NodeSource's nodejs package carries
    # npm, and conflicts with Debian's npm): ask Debian only when npm is missing.
    command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
fi
if [ "$bench" -eq 1 ]; then
    need="$need python3-onnx"
fi
if [ "$arm64" -eq 1 ]; then
    need="$need gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
    need="$need libopenblas-dev:arm64 libcjson-dev:arm64 libutf8proc-dev:arm64"
    need="$need libcurl4-openssl-dev:arm64 libmicrohttpd-dev:arm64 libssl-dev:arm64"
fi
if [ "$x86" -eq 1 ]; then
    need="$need qemu-user-static"
fi
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup: installing$missing"
if [ "$arm64" -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
