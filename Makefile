# Every entry point of apysup. `make demo` and `make test` are the two
# commands a newcomer needs; both install what they need first (make deps).

GO       ?= go
TAGS     := seccomp
BIN      := bin/apysup
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Debian packages the build and the tests need: cgo + libseccomp for the
# seccomp filter, bubblewrap as the benchmark's baseline, vagrant to validate
# the Vagrantfile, strace and the command-line tools a guest commonly runs
# (traced under the filter), pip for the Python client's test. Debian's
# own interpreter for the guest, python3.11, is installed by
# mk/python-revision.sh at the WASI build's revision (one standard library
# for both backends), with CPython's own test modules
# (libpython3.11-testsuite) for make regrtest.
APT_PACKAGES := gcc libc6-dev libseccomp-dev pkg-config bubblewrap vagrant \
	strace tar gzip xz-utils bzip2 zip unzip sqlite3 git python3-pip patch
TEST_TIMEOUT ?= 45m

# Every go command make runs builds against wazero and jsonschema with
# apysup's patches (third_party/*/README.md): a workspace, made by make deps
# (mk/module-patch.sh), that replaces each module by its patched files. A
# plain `go build` outside make gets both as released, slower to start and
# otherwise the same.
export GOWORK := $(CURDIR)/.build/go.work
# The patch's own tests, wazero's tests of the packages it touches, the
# WebAssembly specification's suites, whose invalid modules must still be
# refused, and wazero's own tests of its compiled code against its
# interpreter (fuzzcases, engine): the patch changes the code generator;
# and of the file system and WASI's calls, where it reopens files by
# descriptor.
WAZERO_PATCH_TESTS := github.com/tetratelabs/wazero github.com/tetratelabs/wazero/internal/wasm \
	github.com/tetratelabs/wazero/internal/wasm/binary \
	github.com/tetratelabs/wazero/internal/engine/wazevo \
	github.com/tetratelabs/wazero/internal/engine/wazevo/ssa \
	github.com/tetratelabs/wazero/internal/engine/wazevo/backend \
	github.com/tetratelabs/wazero/internal/engine/wazevo/backend/regalloc \
	github.com/tetratelabs/wazero/internal/engine/wazevo/backend/isa/amd64 \
	github.com/tetratelabs/wazero/internal/engine/wazevo/backend/isa/arm64 \
	github.com/tetratelabs/wazero/internal/filecache \
	github.com/tetratelabs/wazero/internal/integration_test/spectest/... \
	github.com/tetratelabs/wazero/internal/integration_test/fuzzcases \
	github.com/tetratelabs/wazero/internal/integration_test/engine \
	github.com/tetratelabs/wazero/internal/sys \
	github.com/tetratelabs/wazero/internal/sysfs \
	github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1
# jsonschema's own tests, against its patch (third_party/jsonschema), with -race:
# the patch makes its metaschemas' compilation lazy. Example_fromHTTPS
# fetches a schema from GitHub, which CI cannot reach.
JSONSCHEMA_PATCH_TESTS := github.com/santhosh-tekuri/jsonschema/v6

include mk/wasi.mk

.PHONY: all deps build test test-pooled load unit vet lint demo bench fault ci clean docs regrtest regrtest-update

all: build

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@SUDO="$(SUDO)" mk/python-revision.sh
	@# The module graph's go.mod files, not only those the build loads:
	@# tests that build a program against this checkout do so offline
	@# (internal/testenv.BuildProgram) and need every requirement's.
	@GOWORK=off $(GO) list -m all > /dev/null
	@GO="$(GO)" mk/module-patch.sh

# `apysup version` reports the commit (and a release tag, if any) it was built from.
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo +modified)
VERSION  := $(shell git describe --tags --exact-match 2>/dev/null)
LDFLAGS  := -X main.commit=$(COMMIT) -X main.version=$(VERSION)

build: deps
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/apysup

vet: deps
	$(GO) vet -tags $(TAGS) ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	vagrant validate --ignore-provider

# Every test, unit and integration, with the race detector. Tests that need
# a kernel feature or the WASI build skip locally and fail when
# APYSUP_REQUIRE_ALL=1 (as in CI).
test: deps wasi-python lint
	$(GO) test -race -tags $(TAGS) -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(GO) test -count=1 $(WAZERO_PATCH_TESTS)
	$(GO) test -race -count=1 -skip '^Example_fromHTTPS$$' $(JSONSCHEMA_PATCH_TESTS)
	$(MAKE) test-pooled

# 1,000 runs at concurrency 16 through a pooled Supervisor, then through
# an apysup serve process, one in ten hostile (make test runs 100 and 48):
# statuses, bounded memory, no leaks; then the server is SIGKILLed with runs
# in flight and a new one sweeps what it left.
load: deps
	APYSUP_LOAD_RUNS=1000 $(GO) test -race -tags $(TAGS) -count=1 -timeout $(TEST_TIMEOUT) -run 'TestPooledLoad$$' -v ./integration
	# Without -race: the race detector's shadow memory triples the server's
	# resident size (98 -> 286 MiB over 1,000 runs, 37 -> 79 MiB without),
	# and resident memory is what this run bounds.
	APYSUP_LOAD_RUNS=1000 $(GO) test -tags $(TAGS) -count=1 -timeout $(TEST_TIMEOUT) -run 'TestServeLoadThenKill$$' -v ./cmd/apysup

# The escape suite (integration/) and the parity corpus again, through a
# Supervisor with warm pools: every run that finds one ready takes a
# sandbox or a wazero child whose interpreter started ahead.
test-pooled: deps
	APYSUP_TEST_POOL=1 $(GO) test -race -tags $(TAGS) -count=1 -timeout $(TEST_TIMEOUT) ./integration ./integration/parity

unit: deps
	$(GO) test -race -tags $(TAGS) -count=1 -short ./...

# The main job on a built-in example: an agent task reads two records from a
# local HTTP service, summarises them and files the summary through an
# approval-gated capability, natively under full confinement.
demo: build
	examples/demo/run.sh $(BIN)

bench: deps
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem ./...

# The fault campaign of the journal (issue 15) at full size: 1,000 SIGKILLs
# of a real supervisor at its journal boundaries and at random moments
# (make test runs 100).
fault: deps
	APYSUP_FAULT_KILLS=1000 $(GO) test -tags $(TAGS) -count=1 -timeout 120m -run TestFaultCampaign -v ./integration/

ci: test

# CPython's regression tests bare, natively and under wazero, every
# difference checked against integration/regrtest/expected.txt (make test
# runs the modules marked fast). regrtest-update rewrites expected.txt from
# a run: entries that still apply keep their cause, new ones are
# UNEXPLAINED (which fails) unless a rule of the file names their cause.
REGRTEST_FLAGS := -tags $(TAGS) -count=1 -timeout 180m -run '^TestRegrtest$$' -v ./integration/regrtest/
regrtest: deps wasi-python
	mkdir -p bin && APYSUP_REQUIRE_ALL=1 $(GO) test $(REGRTEST_FLAGS) -args -regrtest.all -regrtest.report $(CURDIR)/bin/regrtest.md

regrtest-update: deps wasi-python
	mkdir -p bin && APYSUP_REQUIRE_ALL=1 $(GO) test $(REGRTEST_FLAGS) -args -regrtest.all -regrtest.update -regrtest.report $(CURDIR)/bin/regrtest.md

# docs/cli.md is generated from the CLI definitions; a test fails when stale.
docs: deps
	$(GO) test -tags $(TAGS) -run TestCLIDocsCurrent ./cmd/apysup -update-docs

clean:
	rm -rf bin .build
