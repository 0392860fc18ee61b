# roformer.c — build, test, install.
#   make              build/libroformer.a, build/libroformer.so, build/roformer
#   make test         build and run every test, TEST_JOBS at a time (one summary line)
#   make asan         the same tests built with AddressSanitizer + UBSan
#   make ARCH=aarch64 the ARM64 cross build in build-arm64/ (docs/arm64.md)
#   make test-arm64   that build's tests under qemu-aarch64-static
#   make test-x86 CPU=NAME  the native build's tests under qemu-x86_64-static -cpu NAME
#   make install PREFIX=/usr/local   (the Python package too, into PYTHON_DIR; the default
#                     model into $(PREFIX)/share/roformer)
#   make bench-tokenizer  tokenizer throughput beside jieba-rs and Python jieba
#   make fuzz         every libFuzzer target for FUZZ_SECONDS each (clang, build-fuzz/)
#   make fuzz-smoke   the same, half a minute each (FUZZ_SMOKE_SECONDS; CI)
#   make valgrind     the CLI on the reference models under valgrind: no errors, no leaks
#   make mutants      each mutation of tests/mutants/list.tsv must fail its named tests

PREFIX ?= /usr/local
# The Python package (tools/python/roformer) goes where Debian's python3
# looks for it under /usr/local; it finds the library in $(PREFIX)/lib.
PYTHON_DIR ?= $(PREFIX)/lib/python3/dist-packages
BUILD ?= build
CC ?= cc
PKGS := openblas libcjson libutf8proc libcurl libcrypto
# libmicrohttpd: the HTTP server of `roformer serve`, linked into the CLI only
CLI_PKGS := libmicrohttpd
# ARCH=aarch64: CC, BUILD and PKG_CONFIG of the ARM64 cross build
include mk/arm64.mk

OPT ?= -O2 -g
# -Wno-psabi: the 32- and 64-byte vectors of src/kernels/vecmath.h only live in
# always-inlined functions, so the ABI note about passing them concerns no
# real call (GCC prints it even under a diagnostic pragma).
# -ffp-contract=fast: a * b + c becomes one FMA where the target has FMA (the
# AVX2 and AVX-512 kernel builds, simd.h; -std=c11 alone turns it off). The
# baseline x86-64 build has no FMA, so its code is unchanged.
# Only include/ is on everyone's include path: src/ is added for the library
# and the tests of its internals, never for the tools (the CLI, the examples
# and the fuzz targets of the CLI's parts), so that the compiler holds them
# to the public header.
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-psabi -ffp-contract=fast -fPIC \
              -Iinclude \
              $(shell $(PKG_CONFIG) --cflags $(PKGS)) $(OPT) $(SANITIZE) $(CFLAGS)
LDLIBS_ALL := $(shell $(PKG_CONFIG) --libs $(PKGS)) -lpthread -lm $(LDLIBS)
LDFLAGS_ALL := $(SANITIZE) $(LDFLAGS)

# The version, from the header: the shared library is libroformer.so.VERSION,
# its SONAME libroformer.so.MAJOR (docs/architecture.md).
VERSION := $(shell sed -n 's/^\#define RF_VERSION "\(.*\)"/\1/p' include/roformer.h)
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME := libroformer.so.$(VERSION_MAJOR)

LIB_SRC := $(sort $(wildcard src/*.c src/*/*.c src/*/*/*.c src/*/*/*/*.c))
CLI_SRC := $(sort $(wildcard tools/roformer/*.c tools/roformer/serve/*.c))
# The C tests lie in folders by layer (tests/README.md); each binary keeps
# its file's name alone, tests/FOLDER/test_NAME.c building
# $(BUILD)/tests/test_NAME, the name that RF_TEST_EXCLUDE, ARM64_TESTS,
# X86_TESTS, the mutation list and test-times give.
TEST_SRC := $(sort $(wildcard tests/*/test_*.c))
EXAMPLE_SRC := $(sort $(wildcard tools/examples/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(TEST_SRC)))
EXAMPLE_BIN := $(EXAMPLE_SRC:tools/examples/%.c=$(BUILD)/examples/%)
# Each fuzz target also runs its committed inputs as a plain test (replay.c).
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_REPLAY_BIN := $(FUZZ_TARGETS:%=$(BUILD)/tests/test_fuzz_%)
FUZZ_CLI := input serve_request
fuzz_includes = $(if $(filter $(1),$(FUZZ_CLI)),-Itools/roformer,-Isrc)
HEADERS := $(wildcard include/*.h src/*.h src/*/*.h src/*/*/*.h src/*/*/*/*.h tools/roformer/*.h \
             tools/roformer/*.def tests/*.h tests/*/*.h)
# only the CLI and the fuzz targets include the server's headers
SERVE_HEADERS := $(wildcard tools/roformer/serve/*.h)

.PHONY: all test test-build test-arm64 test-x86 asan install clean bench-tokenizer fuzz fuzz-smoke fuzz-build fuzz-lib valgrind
all: $(BUILD)/libroformer.a $(BUILD)/libroformer.so $(BUILD)/roformer $(EXAMPLE_BIN)

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libroformer.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Only the functions include/roformer.h marks RF_API leave the shared
# library; the static archive, which the CLI and the tests link, keeps every
# symbol (hidden visibility binds nothing inside one program).
$(LIB_OBJ): CFLAGS_ALL += -Isrc -fvisibility=hidden

$(BUILD)/libroformer.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/$(SONAME): $(BUILD)/libroformer.so.$(VERSION)
	ln -sf libroformer.so.$(VERSION) $@

$(BUILD)/libroformer.so: $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# The CLI's files include its headers as "name.h" and the server's as
# "serve/name.h", from tools/roformer/ and tools/roformer/serve/ alike.
$(CLI_OBJ): CFLAGS_ALL += -Itools/roformer $(shell $(PKG_CONFIG) --cflags $(CLI_PKGS))
$(CLI_OBJ): $(SERVE_HEADERS)

$(BUILD)/roformer: $(CLI_OBJ) $(BUILD)/libroformer.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libroformer.a \
	    $(shell $(PKG_CONFIG) --libs $(CLI_PKGS)) $(LDLIBS_ALL)

# One pattern rule per test folder: make takes the one whose source exists.
define test_folder_rule
$$(BUILD)/tests/%: $(1)%.c $$(BUILD)/libroformer.a $$(HEADERS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) -Isrc $$(LDFLAGS_ALL) -o $$@ $$< $$(BUILD)/libroformer.a $$(LDLIBS_ALL)
endef
$(foreach d,$(sort $(dir $(TEST_SRC))),$(eval $(call test_folder_rule,$(d))))

# The server's cache on its own: its one file, built into the test.
$(BUILD)/tests/test_serve_cache_lru: tests/serve/test_serve_cache_lru.c \
                                     tools/roformer/serve/cache.c $(HEADERS) $(SERVE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itools/roformer $(LDFLAGS_ALL) -o $@ $< tools/roformer/serve/cache.c \
	    -lpthread

# The server's table of job kinds and their results: its objects from the
# CLI's archive, without a model.
$(BUILD)/tests/test_serve_kinds: tests/serve/test_serve_kinds.c $(BUILD)/libroformer-cli.a \
                                 $(BUILD)/libroformer.a $(HEADERS) $(SERVE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itools/roformer $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libroformer-cli.a \
	    $(BUILD)/libroformer.a $(LDLIBS_ALL)

$(BUILD)/examples/%: tools/examples/%.c $(BUILD)/libroformer.a include/roformer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libroformer.a $(LDLIBS_ALL)

# The CLI's parts (all but main) in one archive, for the fuzz targets of its
# input readers. Those targets (FUZZ_CLI) are front ends, built as the CLI
# is; the others fuzz the library's internals and see src/.
$(BUILD)/libroformer-cli.a: $(filter-out %/main.o,$(CLI_OBJ))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/test_fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/libroformer-cli.a \
                            $(BUILD)/libroformer.a $(HEADERS) $(SERVE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(call fuzz_includes,$*) -DFUZZ_TARGET='"$*"' $(LDFLAGS_ALL) -o $@ $< \
	    tests/fuzz/replay.c $(BUILD)/libroformer-cli.a $(BUILD)/libroformer.a $(LDLIBS_ALL)

# The sub-makes of test, asan, fuzz-build and test-arm64 build JOBS files at
# a time (one per CPU) unless make was given its own -j; the tests run
# TEST_JOBS at a time (tests/run.sh -j).
JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
TEST_JOBS ?= $(JOBS)
SUB_MAKE_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))
test:
	@$(MAKE) --no-print-directory $(SUB_MAKE_JOBS) test-build
	@sh tests/run.sh -j $(TEST_JOBS) $(BUILD) $(TEST_BIN) $(FUZZ_REPLAY_BIN)

test-build: all $(TEST_BIN) $(FUZZ_REPLAY_BIN)
	@:

# The ARM64 cross build's tests under qemu (tests/run_arm64.sh; which run
# where: docs/arm64.md). ARM64_TESTS run on qemu's -cpu max, test_kernels
# also on CPU models without I8MM and BF16.
ARM64_TESTS := kernels threadpool attention parity int8 bf16 batch_invariance v2 tokenizer_units tokenizer_reference \
               jieba_reference convert gguf fp16 corrupt jobs_library
test-arm64:
	@$(MAKE) --no-print-directory $(SUB_MAKE_JOBS) ARCH=aarch64 BUILD=build-arm64 all \
	    $(ARM64_TESTS:%=build-arm64/tests/test_%)
	@sh tests/run_arm64.sh -j $(TEST_JOBS) build-arm64 $(ARM64_TESTS:%=build-arm64/tests/test_%)

# The native build's tests under qemu-x86_64-static -cpu $(CPU) (tests/run_x86.sh;
# docs/reliability.md, "CPU classes"): the kernels and OpenBLAS choose from the
# emulated CPUID, so CPU=Haswell-v4 is the AVX2 class (int8 avx2, bf16 refused)
# and CPU=Nehalem the class without AVX (f32 on OpenBLAS's Nehalem core, int8
# and bf16 refused). The tests that compute numbers with CPU-dependent code
# run, but two named below, test_parity, test_int8 and test_bf16 on three
# reference models. Left out: what
# measures the process, which under qemu is qemu's (test_step_times: time,
# test_page_faults: page faults, test_file_pages: resident pages,
# test_no_alloc: malloc calls); test_blas_core, whose re-execution would
# leave qemu for the host's CPU; the tests of parsing and of the tokenizer,
# hub and fuzz inputs, which run no CPU-dependent code; and for time,
# test_attention (the fused attention against its naive twin) and test_scm
# (the CAIL2019-SCM job to the bit against its own blocks), minutes each under
# emulation, test_partition and test_batch_invariance (f32's products on
# OpenBLAS's cores, which tests/kernels/test_blas_cores.sh runs natively under each
# OPENBLAS_CORETYPE), and the shell tests but three (tests/run_x86.sh, SCRIPTS).
X86_TESTS := kernels threadpool parity int8 bf16 info_kernels fp16 convert v2 context jobs_library \
             windows rerank pooler job_blocks
test-x86:
	@$(if $(CPU),,echo "make test-x86: name a qemu CPU model, as CPU=Haswell-v4 or CPU=Nehalem" >&2; exit 2)
	@$(MAKE) --no-print-directory $(SUB_MAKE_JOBS) all $(X86_TESTS:%=$(BUILD)/tests/test_%)
	@sh tests/run_x86.sh -j $(TEST_JOBS) $(CPU) $(BUILD) $(X86_TESTS:%=$(BUILD)/tests/test_%)

# Not run under the sanitizers, whose allocator and shadow memory are what
# these would measure: test_no_alloc counts malloc calls, test_page_faults
# page faults, test_pip_install builds the shipped (plain) library. Nor
# test_file_cycles, a check of the sources and of objects, not of running
# code, whose ARM64 half needs build-arm64/ (built after make asan in CI).
# Nor test_blas_cores.sh, which runs tests this build runs once again under
# other OpenBLAS cores: only OpenBLAS, which is not instrumented, differs.
ASAN_EXCLUDE := test_no_alloc test_page_faults test_pip_install.sh test_file_cycles.sh \
                test_blas_cores.sh
asan:
	RF_TEST_EXCLUDE="$(ASAN_EXCLUDE)" $(MAKE) BUILD=build-asan OPT="-O1 -g" \
	    SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test

bench-tokenizer: $(BUILD)/libroformer.a
	sh scripts/bench_tokenizer.sh

# ==== Fuzzing (clang + libFuzzer) and valgrind ====
FUZZ_BUILD := build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_JOBS ?= 2
FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

# The library instrumented for coverage is built by a sub-make with
# BUILD=$(FUZZ_BUILD); the targets are then linked against it.
fuzz-lib:
	@$(MAKE) --no-print-directory $(SUB_MAKE_JOBS) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT="-O1 -g" \
	    SANITIZE="-fsanitize=fuzzer-no-link $(FUZZ_SANITIZE)" \
	    $(FUZZ_BUILD)/libroformer.a $(FUZZ_BUILD)/libroformer-cli.a

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libroformer.a $(FUZZ_BUILD)/libroformer-cli.a \
                      $(HEADERS) $(SERVE_HEADERS)
	$(FUZZ_CC) $(filter-out $(SANITIZE),$(CFLAGS_ALL)) $(call fuzz_includes,$*) -O1 -g -fsanitize=fuzzer \
	    $(FUZZ_SANITIZE) -o $@ $< $(FUZZ_BUILD)/libroformer-cli.a $(FUZZ_BUILD)/libroformer.a \
	    $(LDLIBS_ALL)

fuzz-build: all fuzz-lib
	@$(MAKE) --no-print-directory $(SUB_MAKE_JOBS) $(FUZZ_BIN)

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

valgrind: all
	sh tests/valgrind.sh $(BUILD)

# The mutation run (tests/mutants/run.sh, docs/architecture.md "Mutations"): each
# mutation of the list applied alone to a copy of the tree, its named tests
# run on it; one they pass is a promise no test holds. MUTANTS_PICK=N runs N
# of them, drawn by MUTANTS_SEED (CI gives the commit's hash).
.PHONY: mutants
mutants: all
	MUTANTS_PICK="$(MUTANTS_PICK)" MUTANTS_SEED="$(MUTANTS_SEED)" MUTANTS_JOBS=$(JOBS) \
	    sh tests/mutants/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/roformer
	install -m 755 $(BUILD)/roformer $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libroformer.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libroformer.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libroformer.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libroformer.so
	install -m 644 include/roformer.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 models/sentiment-zh-small.gguf $(DESTDIR)$(PREFIX)/share/roformer/
	install -d $(DESTDIR)$(PYTHON_DIR)/roformer
	install -m 644 tools/python/roformer/*.py $(DESTDIR)$(PYTHON_DIR)/roformer/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    scripts/roformer.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/roformer.pc

clean:
	rm -rf build build-asan build-fuzz build-arm64
