#!/bin/sh
# setup.sh — installs the Debian packages roformer.c needs to build and test
# (skipping those already installed). Run as root, or with sudo available.
set -e
need="build-essential pkg-config libopenblas-dev libcjson-dev libutf8proc-dev python3-jieba python3-numpy"
# roformer pull and -m hf:...: HTTP(S) with libcurl, sha256 with OpenSSL's libcrypto
need="$need libcurl4-openssl-dev libssl-dev"
# the Python package's tests and its Dask jobs
need="$need python3-pytest python3-dask python3-distributed"
# roformer serve (HTTP library), its tests (curl, python3-requests) and load test (wrk)
need="$need libmicrohttpd-dev curl python3-requests wrk"
# make fuzz (clang with libFuzzer) and make valgrind
need="$need clang libclang-rt-14-dev valgrind"
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup: installing$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
