# Tersa - top-level build.
#
#   make test    install what is needed, build and run every implementation's tests
#   make bench   the benchmark suite (see bench/)
#   make bench-node  npm ci in bench/node (section 7: Redis and HTTP, Node.js)
#   make c       build the C core, the tersa CLI and the C benchmark (c/build)
#   make ruby    compile the Ruby gem in place (ruby -Iruby/lib -e 'require "tersa"')
#   make memcheck  the Ruby tests under valgrind (part of make test)
#   make js      install and build the TypeScript package (js/dist)
#   make python  build the Python package into python/.venv
#   make fuzz    long fuzzing, in parallel: the C decoder (libFuzzer), the Python
#                extension (atheris) and every implementation against the reference
#                codec (crossfuzz), FUZZ_SECONDS each (default 3600)
#   make test-crossfuzz  a bounded crossfuzz run (part of make test)
#   make vectors regenerate spec/vectors from the reference codec
#
# Every install step a fresh Debian machine needs is here: CI runs `make test`
# on a clean clone.

SHELL := /bin/bash
ROOT := $(abspath .)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTHON ?= python3
FUZZ_SECONDS ?= 3600
FUZZ_TEST_SECONDS ?= 60
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

C_BUILD := c/build
C_ASAN := c/build-asan
C_FUZZ := c/build-fuzz

.PHONY: all c test test-c test-vectors test-corpus test-differential test-fuzz fuzz bench vectors deps-c clean \
	crossfuzz-build test-crossfuzz crossfuzz-run fuzz-python-build fuzz-python fuzz-python-run \
	deps-ruby ruby test-ruby test-gem memcheck deps-js js test-js deps-python python test-python test-wheel test-bench bench-node \
	tags test-tags test-install-c test-npm-pack

all: c

# --------------------------------------------------------------------------
# Dependencies (Debian packages), installed only when missing
# --------------------------------------------------------------------------
APT_INSTALL = DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends
define apt_need
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(APT_INSTALL) $$missing >/dev/null || { $(SUDO) apt-get update -q >/dev/null && $(APT_INSTALL) $$missing >/dev/null; }; \
	fi
endef

deps-c:
	$(call apt_need,cmake ninja-build gcc clang libclang-rt-14-dev xz-utils python3 pkg-config)

# Node.js 20 and npm come with the machine; Debian's are the fallback. The
# browser test (js/test/browser.test.js) drives Debian's chromium: playwright-core
# downloads no browser. The dictionary registry's test starts a redis-server.
deps-js:
	@command -v node >/dev/null && command -v npm >/dev/null || { $(APT_INSTALL) nodejs npm >/dev/null; }
	$(call apt_need,chromium xz-utils redis-server)

# The Python package builds in a venv from the machine's python3 (3.10+); the
# dictionary registry's tests (tests/test_registry.py) use a real redis-server
# through redis-py, and the kombu serializer's (tests/test_kombu.py) one as
# kombu's broker.
deps-python:
	$(call apt_need,gcc redis-server)
	@$(PYTHON) -c 'import venv, sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "python3 >= 3.10 with venv is required"; exit 1; }

# Ruby 3.1 and the peers of the benchmark come from Debian, never from rubygems.org;
# the dictionary registry's and the cache coder's tests run against a real redis-server,
# the Rack middleware's through WEBrick.
deps-ruby:
	$(call apt_need,ruby ruby-dev rake ruby-minitest ruby-json ruby-oj ruby-msgpack ruby-cbor gcc make valgrind python3 ruby-redis redis-server ruby-activesupport ruby-rack ruby-webrick)

# --------------------------------------------------------------------------
# C core
# --------------------------------------------------------------------------
c: deps-c
	cmake -S c -B $(C_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERSA_BUILD_TESTS=OFF >/dev/null
	cmake --build $(C_BUILD) -j $(JOBS)

test-c: deps-c
	@# Both compilers must build the core warning-free; the tests run under ASan+UBSan.
	cmake -S c -B c/build-clang -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build c/build-clang -j $(JOBS)
	cmake -S c -B $(C_ASAN) -G Ninja -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DTERSA_SANITIZE=ON >/dev/null
	cmake --build $(C_ASAN) -j $(JOBS)
	cd $(C_ASAN) && ctest --output-on-failure

# The committed vectors must be exactly what the reference codec generates.
test-vectors:
	@tmp=$$(mktemp -d); cp -r spec $$tmp/ ; mkdir -p $$tmp/bench; cp -r bench/corpus $$tmp/bench/; \
	cd $$tmp && $(PYTHON) spec/tools/make_vectors.py >/dev/null && \
	diff -r $(ROOT)/spec/vectors $$tmp/spec/vectors >/dev/null || \
	  { echo "spec/vectors differ from what spec/tools/make_vectors.py generates (run make vectors)"; rm -rf $$tmp; exit 1; }; \
	rm -rf $$tmp; echo "spec/vectors: up to date"

# The kinds corpus must be exactly what its generator writes.
test-corpus:
	$(PYTHON) bench/corpus/kinds/generate.py --check

# Random values from the reference codec, re-encoded and printed by the C CLI.
test-differential: c
	$(PYTHON) spec/tools/differential.py --cli $(C_BUILD)/tersa --count 3000

test-fuzz: deps-c
	cmake -S c -B $(C_FUZZ) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DTERSA_FUZZ=ON \
	  -DTERSA_BUILD_TESTS=OFF -DTERSA_BUILD_CLI=OFF -DTERSA_BUILD_BENCH=OFF >/dev/null
	cmake --build $(C_FUZZ) -j $(JOBS)
	$(PYTHON) c/fuzz/seed_corpus.py $(C_FUZZ)/seeds
	mkdir -p $(C_FUZZ)/corpus
	$(C_FUZZ)/fuzz_decode c/fuzz/regressions/*.tersa
	$(C_FUZZ)/fuzz_decode -dict=c/fuzz/tersa.dict -max_len=4096 -rss_limit_mb=2048 -artifact_prefix=$(C_FUZZ)/ \
	  -max_total_time=$(FUZZ_TEST_SECONDS) -print_final_stats=1 $(C_FUZZ)/corpus $(C_FUZZ)/seeds c/fuzz/regressions

# Everything is built first, so that the three runs only run: each then gets
# FUZZ_SECONDS, and -k lets the others finish when one stops on a finding.
fuzz: deps-c crossfuzz-build fuzz-python-build
	$(MAKE) -k -j 3 --output-sync=target --no-print-directory test-fuzz fuzz-python-run crossfuzz-run \
	  FUZZ_TEST_SECONDS=$(FUZZ_SECONDS)

test: test-c test-install-c test-tags test-vectors test-corpus test-differential test-fuzz test-ruby test-gem memcheck test-js test-npm-pack test-python test-wheel test-bench \
	test-crossfuzz
	@echo "all tests passed"

# The C library as its users install it: cmake --install into a scratch
# prefix, a program built against it through pkg-config (shared, then static),
# the shared library exporting tersa_* symbols only, and the installed CLI.
test-install-c: deps-c
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cmake -S c -B $$tmp/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERSA_BUILD_TESTS=OFF -DTERSA_BUILD_BENCH=OFF \
	  -DCMAKE_INSTALL_PREFIX=$$tmp/prefix >/dev/null; \
	cmake --build $$tmp/build -j $(JOBS) >/dev/null; \
	cmake --install $$tmp/build >/dev/null; \
	pc=$$(find $$tmp/prefix -name tersa.pc); lib=$$(dirname $$(dirname $$pc)); \
	export PKG_CONFIG_PATH=$$(dirname $$pc); \
	cc -std=c11 -Wall -Wextra -Werror c/tests/install/consumer.c $$(pkg-config --cflags --libs tersa) -o $$tmp/shared; \
	LD_LIBRARY_PATH=$$lib $$tmp/shared; \
	LD_LIBRARY_PATH=$$lib ldd $$tmp/shared | grep -q "$$lib/libtersa.so"; \
	cc -std=c11 -Wall -Wextra -Werror c/tests/install/consumer.c $$(pkg-config --cflags tersa) $$lib/libtersa.a \
	  $$(pkg-config --static --libs-only-l tersa | sed 's/-ltersa//') -o $$tmp/static; \
	$$tmp/static; \
	! ldd $$tmp/static | grep -q libtersa; \
	exported=$$(nm -D --defined-only $$lib/libtersa.so | awk '{print $$3}' | grep -v '^tersa_' || true); \
	test -z "$$exported" || { echo "libtersa.so exports non-tersa symbols: $$exported"; exit 1; }; \
	test -f $$tmp/prefix/include/tersa.h; \
	echo '{"a":[1,2.5,"x"]}' | $$tmp/prefix/bin/tersa encode | $$tmp/prefix/bin/tersa decode | grep -q '"a"'; \
	echo "C library: installed, found by pkg-config, linked shared and static, CLI runs"

# --------------------------------------------------------------------------
# Ruby gem
# --------------------------------------------------------------------------
RUBY_MEMCHECK_TESTS := vectors errors types streams sync dictionary extensions options coder property allocations robustness declared_class well_known api_shape

ruby: deps-ruby
	cd ruby && rake compile

# The gem's tests, then the reference codec's random streams re-encoded
# through Ruby objects must come back byte for byte.
test-ruby: ruby
	cd ruby && rake test
	$(PYTHON) spec/tools/differential.py --recode "ruby ruby/test/support/recode.rb" --count 2000 --normalize-decimals

# The gem as users get it, from a clone of the committed tree: gem build
# (vendoring the core) puts LICENSE and every file of the core in the gem;
# gem install into a scratch GEM_HOME, then test/support/installed_gem.rb
# requires it and its integrations from outside the source tree.
test-gem: deps-ruby
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	git clone -q --no-local $(ROOT) $$tmp/repo; \
	(cd $$tmp/repo/ruby && rake build >/dev/null); gem=$$(ls $$tmp/repo/ruby/tersa-*.gem); \
	tar -xOf $$gem data.tar.gz | tar -tz > $$tmp/files; \
	for f in LICENSE ext/tersa/core/include/tersa.h $$(cd $$tmp/repo/c && ls src/*.[ch] | sed 's|^|ext/tersa/core/|'); do \
	  grep -qxF "$$f" $$tmp/files || { echo "$$f is not in $$gem"; exit 1; }; done; \
	GEM_HOME=$$tmp/gems gem install --local --no-document $$gem >/dev/null; \
	cd $$tmp && GEM_HOME=$$tmp/gems ruby repo/ruby/test/support/installed_gem.rb $$tmp/gems

memcheck: ruby
	cd ruby && ruby test/memcheck.rb $(foreach t,$(RUBY_MEMCHECK_TESTS),test/test_$(t).rb)

# --------------------------------------------------------------------------
# TypeScript
# --------------------------------------------------------------------------
js: deps-js
	cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent

# Includes the cross-language tests against the C CLI (c/build/tersa).
test-js: js c
	cd js && TERSA_CLI=$(ROOT)/$(C_BUILD)/tersa npm test --silent

# The npm package as users get it: npm pack in a clean clone (prepack builds
# dist/ and copies LICENSE), the tarball installed into a scratch project,
# then used through import, require and tersa/express, and type-checked.
test-npm-pack: deps-js
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	git clone -q $(ROOT) $$tmp/src; \
	(cd $$tmp/src/js && npm ci --no-audit --no-fund --loglevel=error --prefer-offline >/dev/null && \
	  npm pack --pack-destination $$tmp >$$tmp/pack.log 2>&1) || { cat $$tmp/pack.log; exit 1; }; \
	tgz=$$(ls $$tmp/tersa-*.tgz); files=$$(tar tzf $$tgz); \
	for f in LICENSE README.md package.json dist/esm/index.js dist/cjs/index.js dist/cjs/package.json \
	  dist/esm/express.js dist/cjs/express.js dist/esm/index.d.ts; do \
	  grep -qx "package/$$f" <<<"$$files" || { echo "$$(basename $$tgz) lacks $$f"; exit 1; }; done; \
	if grep -E '^package/(test|node_modules|bench)/' <<<"$$files"; then echo "the tarball ships those"; exit 1; fi; \
	mkdir $$tmp/app; cd $$tmp/app; npm init -y >/dev/null; \
	npm install --no-audit --no-fund --offline --loglevel=error $$tgz >/dev/null; \
	test "$$(ls node_modules)" = tersa || { echo "installing tersa pulled in: $$(ls node_modules)"; exit 1; }; \
	cp $$tmp/src/js/test/support/npm-pack-check.* .; \
	node npm-pack-check.mjs; \
	$$tmp/src/js/node_modules/.bin/tsc --noEmit --strict --module node16 --moduleResolution node16 --target es2022 \
	  npm-pack-check.mts npm-pack-check.cts

# --------------------------------------------------------------------------
# Python
# --------------------------------------------------------------------------
PY_VENV := python/.venv

# pip install ./python rebuilds the extension every time: tests never see a stale build.
# numpy is for tests/test_numpy.py, which never skips.
python: deps-python
	test -x $(PY_VENV)/bin/python || $(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check ./python pytest hypothesis mypy redis==8.1.0 kombu==5.7.0 numpy

test-python: python
	cd python && .venv/bin/python -m pytest -q -p no:cacheprovider tests

# The Python package as users get it, from a clone of the committed tree:
# python -m build (the sdist, then the wheel from it) and pip install ./python
# must leave the clone clean (ignored files included); LICENSE is in both
# archives; the wheel installs into a fresh venv and imports from outside.
PY_BUILD := build==1.6.1

test-wheel: deps-python
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	git clone -q --no-local $(ROOT) $$tmp/repo; \
	$(PYTHON) -m venv $$tmp/tools; \
	$$tmp/tools/bin/pip install -q --disable-pip-version-check $(PY_BUILD); \
	$$tmp/tools/bin/python -m build --outdir $$tmp/dist $$tmp/repo/python >$$tmp/build.log 2>&1 || { cat $$tmp/build.log; exit 1; }; \
	$$tmp/tools/bin/pip install -q --disable-pip-version-check $$tmp/repo/python; \
	dirty=$$(git -C $$tmp/repo status --porcelain --ignored); \
	test -z "$$dirty" || { echo "building the Python package wrote into the source tree:"; echo "$$dirty"; exit 1; }; \
	sdist=$$(ls $$tmp/dist/tersa-*.tar.gz); wheel=$$(ls $$tmp/dist/tersa-*.whl); \
	tar -tzf $$sdist | grep -qE '^tersa-[^/]+/LICENSE$$' || { echo "no LICENSE in $$sdist"; exit 1; }; \
	tar -tzf $$sdist | grep -qE '^tersa-[^/]+/csrc/include/tersa.h$$' || { echo "no C core in $$sdist"; exit 1; }; \
	$$tmp/tools/bin/python -m zipfile -l $$wheel | grep -qE 'dist-info/licenses/LICENSE ' || { echo "no LICENSE in $$wheel"; exit 1; }; \
	$(PYTHON) -m venv $$tmp/venv; \
	$$tmp/venv/bin/pip install -q --disable-pip-version-check $$wheel; \
	cd $$tmp && $$tmp/venv/bin/python -c 'import tersa, sys; \
	  assert tersa.__file__.startswith(sys.prefix), tersa.__file__; \
	  v = {"ok": [1, 2.5, "x"]}; assert tersa.loads(tersa.dumps(v)) == v, "wheel round trip failed"; \
	  print("wheel install: tersa", tersa.__version__, "from", tersa.__file__)'; \
	echo "Python package: sdist and wheel built, LICENSE in both, source tree left clean"

# --------------------------------------------------------------------------
# Differential fuzzing (spec/tools/crossfuzz.py): the C core (under ASan and
# UBSan), Python, Ruby and TypeScript against the reference codec
# --------------------------------------------------------------------------
CROSSFUZZ := $(PYTHON) spec/tools/crossfuzz.py \
	--impl c=$(C_ASAN)/tersa_harness \
	--impl python="$(PY_VENV)/bin/python python/tests/support/harness.py" \
	--impl ruby="ruby -Iruby/lib ruby/test/support/harness.rb" \
	--impl js="node js/test/support/harness.mjs"

crossfuzz-build: deps-c python ruby js
	cmake -S c -B $(C_ASAN) -G Ninja -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DTERSA_SANITIZE=ON >/dev/null
	cmake --build $(C_ASAN) -j $(JOBS) --target tersa_harness

# About 30 s on 2 cores; a disagreement fails with a shrunk reproducer.
test-crossfuzz: crossfuzz-build
	$(CROSSFUZZ) --values 400 --mutations 4000

crossfuzz-run:
	$(CROSSFUZZ) --seconds $(FUZZ_TEST_SECONDS) --save $(C_FUZZ)/crossfuzz-findings

# The Python extension under atheris (python/fuzz/fuzz_tersa.py): a copy of
# python/ built outside the source tree with clang, ASan and libFuzzer's
# coverage, into a venv of its own; atheris's libFuzzer and ASan runtime are
# preloaded. Stops at the first finding (atheris has no fork mode).
PY_FUZZ_SRC := $(C_FUZZ)/py-src
PY_FUZZ_VENV := $(C_FUZZ)/py-venv
ATHERIS := atheris==3.0.0

fuzz-python-build: deps-c deps-python
	test -x $(PY_FUZZ_VENV)/bin/python || $(PYTHON) -m venv $(PY_FUZZ_VENV)
	CC=clang CXX=clang++ $(PY_FUZZ_VENV)/bin/pip install -q --disable-pip-version-check $(ATHERIS)
	rm -rf $(PY_FUZZ_SRC) && mkdir -p $(PY_FUZZ_SRC)
	cp -r python/src python/setup.py python/pyproject.toml python/README.md python/MANIFEST.in $(PY_FUZZ_SRC)/
	CC=clang LDSHARED="clang -shared" CFLAGS="-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer -g" \
	  TERSA_CORE_DIR=$(ROOT)/c $(PY_FUZZ_VENV)/bin/pip install -q --disable-pip-version-check --force-reinstall \
	  --no-deps ./$(PY_FUZZ_SRC)
	$(PY_FUZZ_VENV)/bin/python python/fuzz/fuzz_tersa.py --write-seeds $(C_FUZZ)/py-seeds

fuzz-python: fuzz-python-build
	$(MAKE) --no-print-directory fuzz-python-run

fuzz-python-run:
	mkdir -p $(C_FUZZ)/py-corpus
	LD_PRELOAD="$$($(PY_FUZZ_VENV)/bin/python -c 'import atheris, os; print(os.path.join(atheris.path(), "asan_with_fuzzer.so"))')" \
	  ASAN_OPTIONS=detect_leaks=0 $(PY_FUZZ_VENV)/bin/python python/fuzz/fuzz_tersa.py -max_len=4096 -rss_limit_mb=4096 \
	  -artifact_prefix=$(C_FUZZ)/py- -max_total_time=$(FUZZ_TEST_SECONDS) -print_final_stats=1 \
	  $(C_FUZZ)/py-corpus $(C_FUZZ)/py-seeds

# --------------------------------------------------------------------------
# Benchmarks and generated files
# --------------------------------------------------------------------------
# The benchmark suite (bench/README.md): Ruby peers side by side in one
# process, plus the C core, TypeScript and Python sections, and Redis and
# HTTP (bench/node/: redis-server from bench/setup, npm packages from bench-node).
bench: c ruby js python bench-node
	bench/setup
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check -r bench/python/requirements.txt -r bench/queue/requirements.txt
	ruby bench/run.rb

# A short run of every section: fails on an inexact round trip, bytes that
# differ from spec/vectors/corpus or a section that breaks (Redis and HTTP
# included: their servers are started and loaded for a few seconds).
test-bench: c ruby js python bench-node
	bench/setup
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check -r bench/python/requirements.txt -r bench/queue/requirements.txt
	SMOKE=1 ruby bench/run.rb

# npm ci only when package-lock.json is newer than the installed tree.
bench-node: deps-js
	@test bench/node/node_modules/.package-lock.json -nt bench/node/package-lock.json || \
	  (cd bench/node && npm ci --no-audit --no-fund --loglevel=error)

vectors:
	$(PYTHON) spec/tools/make_vectors.py

# SPEC 5.1's tag table is the source of c/src/tags.h; the reference codec and
# the fuzz dictionary must agree with it.
tags:
	$(PYTHON) spec/tools/tags.py

test-tags:
	$(PYTHON) spec/tools/tags.py --check

clean:
	rm -rf $(C_BUILD) $(C_ASAN) $(C_FUZZ) c/build-clang
