# trainguard -- build, run, test.  GNU Make, C11.
#
# Sources are discovered by wildcard: a new file under src/ or tests/unit/ needs no Makefile edit.
# Test suites are collected from `Suite *tg_test_<name>_suite(void)` definitions (git's clar idea).

SHELL := /bin/bash
CC ?= cc
BUILD ?= build
PKGS := libmicrohttpd jansson yaml-0.1 openssl gnutls
# Debian packages every target here needs (make deps installs the missing ones).
DEB_PKGS := build-essential pkg-config libmicrohttpd-dev libjansson-dev libyaml-dev libssl-dev \
            libgnutls28-dev check curl openssl
DEB_EXTRA := wrk clang valgrind jq prometheus
# The prefilter test evaluates the generated CEL with @bufbuild/cel (tests/cel, `npm ci`). A machine
# that already has node and npm (NodeSource's nodejs bundles npm) keeps them.
DEB_NODE := nodejs npm
# The chart test renders templates with Go's text/template and sprig, as Helm does (no Helm here).
DEB_CHART := python3-yaml python3-jsonschema golang-go golang-github-masterminds-sprig-dev \
             golang-gopkg-yaml.v3-dev
# `check` output is validated against its published schemas (tests/schemas/validate.py): JSON
# Schema in Python, JUnit XML with xmllint.
DEB_TEST := python3 python3-jsonschema python3-yaml libxml2-utils

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) check 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# The trainguard binary does not link OpenSSL: it lives in trainguard-x509.so (include/tg/x509.h).
BIN_LIBS := $(shell pkg-config --libs $(filter-out openssl,$(PKGS)) 2>/dev/null) -ldl
X509_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wno-unused-parameter -Werror
OPT ?= -O2 -g -D_FORTIFY_SOURCE=2 -fstack-protector-strong
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD)/gen $(WARN) $(OPT) $(PKG_CFLAGS) $(PIC_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS_ALL = $(EXTRA_LDFLAGS) -pthread

X509_SRC := src/x509/x509.c
LIB_SRC := $(filter-out src/main.c $(X509_SRC),$(shell find src -name '*.c' | sort))
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/gen/embedded.o
TEST_SRC := $(sort $(wildcard tests/unit/*.c) $(wildcard tests/support/*.c))
TEST_OBJ := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(TEST_SRC)) $(BUILD)/obj/tests/check_main.o
EMBED := $(sort $(wildcard src/*/*.embed.yaml))
DEPFILES := $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

CK_FORK ?= yes
CK_TIMEOUT ?= 30
BIN := $(BUILD)/trainguard
X509_SO := $(BUILD)/trainguard-x509.so
X509_OBJ := $(BUILD)/obj/x509/x509.o
UNIT := $(BUILD)/unit_tests

.PHONY: all deps deps-build deps-test deps-node run check catalogue catalogue-check prefilter unit \
        integration corpus check-asan check-valgrind bench soak fuzz \
        format format-check lint clean certs-dev
.DEFAULT_GOAL := all

all: $(BIN) $(X509_SO)

# ---- dependencies -------------------------------------------------------------------------
# make deps: everything (build, tests, benchmarks, fuzzing, chart rendering). A build alone
# (make, make run) installs only what it needs the first time; make check installs the rest.
define install_missing
	@missing=""; for p in $(1); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "make deps: installing$$missing"; \
	    SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PKGS) $(DEB_EXTRA) $(DEB_CHART) $(DEB_TEST))
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory deps-node; fi

deps-node:
	$(call install_missing,$(DEB_NODE))

deps-build:
	$(call install_missing,$(DEB_PKGS))

deps-test:
	$(call install_missing,$(DEB_TEST))

$(BUILD)/.deps-ok:
	@$(MAKE) --no-print-directory deps-build
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/.deps-test-ok:
	@$(MAKE) --no-print-directory deps-test
	@mkdir -p $(BUILD) && touch $@

# ---- build --------------------------------------------------------------------------------
$(BUILD)/obj/%.o: src/%.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(BUILD)/obj/tests/%.o: tests/%.c $(BUILD)/gen/suites.h | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

# Files named src/<module>/<name>.embed.yaml become tg_embed_<name> strings (scripts/embed.sh).
$(BUILD)/gen/embedded.c: scripts/embed.sh $(EMBED)
	@mkdir -p $(dir $@)
	bash scripts/embed.sh $(EMBED) > $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(BUILD)/libtg.a: $(LIB_OBJ)
	@rm -f $@.$$$$.tmp
	ar rcs $@.$$$$.tmp $^ && mv -f $@.$$$$.tmp $@

# x509.o goes into the shared object and, directly, into the unit tests: position-independent,
# and exporting only tg_x509_api.
$(X509_OBJ): PIC_CFLAGS := -fPIC -fvisibility=hidden

$(X509_SO): $(X509_OBJ)
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-z,defs -o $@.$$$$.tmp $^ $(X509_LIBS) && mv -f $@.$$$$.tmp $@

# The binary needs its shared object beside it (order-only: relinking one does not relink the
# other).
$(BIN): $(BUILD)/obj/main.o $(BUILD)/libtg.a | $(X509_SO)
	$(CC) $(LDFLAGS_ALL) -o $@.$$$$.tmp $(filter %.o %.a,$^) $(BIN_LIBS) -lm && mv -f $@.$$$$.tmp $@

$(BUILD)/gen/suites.h: $(wildcard tests/unit/*.c) scripts/gen-suites.sh
	@mkdir -p $(dir $@)
	bash scripts/gen-suites.sh tests/unit/*.c > $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(UNIT): $(TEST_OBJ) $(X509_OBJ) $(BUILD)/libtg.a
	$(CC) $(LDFLAGS_ALL) -o $@.$$$$.tmp $^ $(PKG_LIBS) $(CHECK_LIBS) -ldl -lm && mv -f $@.$$$$.tmp $@

# ---- the rule catalogue --------------------------------------------------------------------
# src/catalogue/rules.def and kinds.def are the single source of truth; the default policy's rules
# block and the README/docs tables are generated from them (scripts/catalogue.sh).
CATALOGUE_GEN := $(BUILD)/catalogue_gen
$(CATALOGUE_GEN): scripts/catalogue_gen.c $(BUILD)/obj/catalogue/catalogue.o
	$(CC) $(CFLAGS_ALL) -o $@.$$$$.tmp $^ && mv -f $@.$$$$.tmp $@

catalogue: $(CATALOGUE_GEN)
	bash scripts/catalogue.sh update $(CATALOGUE_GEN)

catalogue-check: $(CATALOGUE_GEN)
	bash scripts/catalogue.sh check $(CATALOGUE_GEN)
	@echo "catalogue: generated copies match src/catalogue/*.def"

# The webhooks' matchConditions, evaluated with a real CEL evaluator on every fixture and corpus
# object against the pipeline's verdict on it (tests/cel/run.sh).
CEL_JUDGE := $(BUILD)/cel_judge
$(CEL_JUDGE): tests/cel/judge.c $(BUILD)/libtg.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@.$$$$.tmp $< $(BUILD)/libtg.a $(BIN_LIBS) -lm && mv -f $@.$$$$.tmp $@

prefilter: $(CEL_JUDGE) $(CATALOGUE_GEN)
	@TG_JUDGE=$(abspath $(CEL_JUDGE)) TG_GEN=$(abspath $(CATALOGUE_GEN)) bash tests/cel/run.sh

# ---- run ----------------------------------------------------------------------------------
certs-dev: $(BIN)
	@if [ ! -s certs/dev/tls.crt ] || [ ! -s certs/dev/tls.key ]; then \
	    $(BIN) certs --out-dir certs/dev --service trainguard --namespace trainguard \
	        --dns localhost --ip 127.0.0.1 --force >/dev/null && echo "development certificates in certs/dev/"; \
	fi

run: $(BIN) certs-dev
	$(BIN) serve --listen 127.0.0.1:8443 --probe-listen 127.0.0.1:8080 \
	    --tls-cert-file certs/dev/tls.crt --tls-private-key-file certs/dev/tls.key $(RUN_ARGS)

# ---- tests --------------------------------------------------------------------------------
# CK_TIMEOUT_MULTIPLIER gives sanitizer and valgrind builds room; suites are fast otherwise.
check: deps
	@$(MAKE) --no-print-directory catalogue-check prefilter unit integration corpus

unit: $(UNIT) | $(BUILD)/.deps-test-ok
	cd tests && CK_FORK=$(CK_FORK) CK_DEFAULT_TIMEOUT=$(CK_TIMEOUT) ../$(UNIT)

integration: $(BIN) | $(BUILD)/.deps-test-ok
	@set -e; for t in tests/integration/test_*.sh; do \
	    [ -e "$$t" ] || continue; echo "== $$t"; TG_BIN=$(abspath $(BIN)) bash "$$t"; \
	done

corpus: $(BIN) | $(BUILD)/.deps-test-ok
	@if [ -x tests/corpus/run.sh ]; then TG_BIN=$(abspath $(BIN)) bash tests/corpus/run.sh; fi

check-asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" CK_FORK=no CK_TIMEOUT=120 unit integration
	@echo "check-asan: clean"

check-valgrind: $(UNIT) | $(BUILD)/.deps-test-ok
	cd tests && CK_FORK=no CK_DEFAULT_TIMEOUT=300 valgrind --error-exitcode=9 --leak-check=full \
	    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect -q ../$(UNIT)

bench:
	@bash tests/bench/run.sh

soak:
	@bash tests/soak/run.sh

fuzz:
	@bash tests/fuzz/run.sh

# ---- hygiene ------------------------------------------------------------------------------
format:
	clang-format -i $$(find src include tests -name '*.[ch]')

format-check:
	clang-format --dry-run --Werror $$(find src include tests -name '*.[ch]')

lint:
	@! grep -nE '\b(sprintf|strcpy|strcat|strtok|atoi|gets)\s*\(' $$(find src include -name '*.[ch]') \
	    | grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)' || (echo "lint: banned function"; exit 1)
	@bash scripts/layers.sh
	@echo "lint: ok"

clean:
	rm -rf build build-asan build-fuzz build-bench

-include $(DEPFILES)
