# The WASI CPython build (SPEC.md section 8), included by the Makefile.
#
#   make wasi-python    build once into the cache (a no-op when cached)
#
# WASI_PYTHON_DIR is the cache directory of the build for the current
# inputs (python.wasm, python311.zip, manifest.json), empty until built.
# It is expanded lazily, so recipes that run after wasi-python see it.

# Included before the Makefile's first target: keep that target the default.
wasi_default_goal := $(.DEFAULT_GOAL)

WASI_BUILD := $(patsubst %/mk/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))/python/wasi/build.sh
WASI_PYTHON_DIR = $(shell $(WASI_BUILD) --print-dir 2>/dev/null)

.PHONY: wasi-python
wasi-python: deps
	@GO=$(GO) $(WASI_BUILD) >/dev/null

.DEFAULT_GOAL := $(wasi_default_goal)
