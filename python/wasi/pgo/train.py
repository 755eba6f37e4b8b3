# The training run of build.sh's profile-guided stage, run by
# cmd/wasi-pgo on the instrumented python.wasm under apysup's wazero
# backend: CPython's regression tests in their --pgo selection (the
# default PROFILE_TASK of CPython's `make profile-opt`), in process, from
# the test package in /workspace. It always exits 0: tests that fail under
# WASI have still trained, and only an ok run publishes the workspace,
# where the instrumented interpreter writes its profile at its exit
# (/workspace/python.profraw).
import sys

sys.path.insert(0, "/workspace")
sys.argv = ["regrtest", "--pgo"]
from test.libregrtest.main import main

try:
    main()
except SystemExit as e:
    print("regrtest --pgo exited with", e.code)
