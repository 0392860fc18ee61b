# roformer.c — build, test, install.
#   make              build/libroformer.a, build/libroformer.so, build/roformer
#   make test         build and run every test (one summary line)
#   make asan         the same tests built with AddressSanitizer + UBSan
#   make install PREFIX=/usr/local
#   make bench-tokenizer  tokenizer throughput beside jieba-rs and Python jieba

PREFIX ?= /usr/local
BUILD ?= build
CC ?= cc
PKGS := openblas libcjson libutf8proc

OPT ?= -O2 -g
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -Iinclude -Isrc \
              $(shell pkg-config --cflags $(PKGS)) $(OPT) $(SANITIZE) $(CFLAGS)
LDLIBS_ALL := $(shell pkg-config --libs $(PKGS)) -lpthread -lm $(LDLIBS)
LDFLAGS_ALL := $(SANITIZE) $(LDFLAGS)

LIB_SRC := $(sort $(wildcard src/*.c))
CLI_SRC := $(sort $(wildcard tools/roformer/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
HEADERS := $(wildcard include/*.h src/*.h tools/roformer/*.h tools/roformer/*.def tests/*.h)

.PHONY: all test asan install clean bench-tokenizer
all: $(BUILD)/libroformer.a $(BUILD)/libroformer.so $(BUILD)/roformer

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libroformer.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libroformer.so: $(LIB_OBJ)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/roformer: $(CLI_OBJ) $(BUILD)/libroformer.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libroformer.a $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libroformer.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libroformer.a $(LDLIBS_ALL)

test: all $(TEST_BIN)
	@sh tests/run.sh $(BUILD)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g" \
	    SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test

bench-tokenizer: $(BUILD)/libroformer.a
	sh scripts/bench_tokenizer.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BUILD)/roformer $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libroformer.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libroformer.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/roformer.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define RF_VERSION "\(.*\)"/\1/p' include/roformer.h)|' \
	    scripts/roformer.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/roformer.pc

clean:
	rm -rf build build-asan
