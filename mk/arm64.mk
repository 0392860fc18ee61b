# mk/arm64.mk — `make ARCH=aarch64`: the ARM64 cross build (docs/arm64.md).
# The library, the CLI, the examples and the tests, built by $(CROSS)gcc into
# build-arm64/ against Debian's arm64 multiarch packages, found by pkg-config
# in their own directory. Without ARCH the native build is unchanged.
ifeq ($(ARCH),aarch64)
CROSS ?= aarch64-linux-gnu-
CC := $(CROSS)gcc
ifeq ($(origin BUILD),file)
BUILD := build-arm64
endif
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config

# the Debian package that gives each pkg-config name of PKGS and CLI_PKGS
DEB_ARM64_openblas := libopenblas-dev:arm64
DEB_ARM64_libcjson := libcjson-dev:arm64
DEB_ARM64_libutf8proc := libutf8proc-dev:arm64
DEB_ARM64_libcurl := libcurl4-openssl-dev:arm64
DEB_ARM64_libcrypto := libssl-dev:arm64
DEB_ARM64_libmicrohttpd := libmicrohttpd-dev:arm64

ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifeq ($(shell command -v $(CC)),)
$(error make ARCH=aarch64: no $(CC); install the package gcc-aarch64-linux-gnu (sh scripts/setup.sh --arm64))
endif
ARM64_MISSING := $(strip $(foreach p,$(PKGS) $(CLI_PKGS),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo yes),,$(DEB_ARM64_$(p)))))
ifneq ($(ARM64_MISSING),)
$(error make ARCH=aarch64: the arm64 libraries are missing; install the packages $(ARM64_MISSING) (dpkg --add-architecture arm64 first), or run sh scripts/setup.sh --arm64)
endif
endif
else
PKG_CONFIG ?= pkg-config
endif
