package parity

import (
	"github.com/apysup/apysup/plan"
	"github.com/apysup/apysup/sandbox"
)

// corpus is every script the suite runs on both backends. Scripts named
// gap_* probe what WASI lacks: their differences are pinned exactly on both
// sides and listed in docs/parity.md.
var corpus = []corpusCase{
	// The standard library.
	{script: "std_json.py"},
	{script: "std_re.py"},
	{script: "std_datetime.py"},
	{script: "std_numbers.py"},
	{script: "std_collections.py"},
	{script: "std_bytes.py"},
	{script: "std_math.py"},
	{script: "std_text.py"},
	{script: "std_random.py"},
	{script: "std_classes.py"},
	{script: "std_csv_io.py"},
	{script: "fs_workspace.py"},
	{script: "compute.py"},
	{script: "recursion.py"},
	{script: "output.py"},

	// The world the guest sees.
	{script: "world.py", args: []string{"first", "two words", "é"}},
	{script: "world_sizes.py"},

	// Capability calls on every surface, approvals, refusals, budgets.
	{script: "cap_programmatic.py"},
	{script: "cap_direct.py", surface: plan.SurfaceDirect},
	{script: "cap_both.py", surface: plan.SurfaceBoth, parent: "main"},
	{script: "cap_surface_refusals.py"},
	{script: "approvals.py"},
	{script: "refusals.py"},
	{script: "budget.py", plan: "budget"},
	{script: "reused_id.py"},
	{name: "reused_id_direct", script: "reused_id.py", surface: plan.SurfaceDirect},

	// Endings: exceptions, exit codes, results, the workspace.
	{script: "exc_uncaught.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_capability.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_syntax.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_handled.py"},
	{name: "exit_0", script: "exit.py", args: []string{"0"}},
	{name: "exit_none", script: "exit.py", args: []string{"none"}},
	{name: "exit_3", script: "exit.py", args: []string{"3"}, status: sandbox.StatusError, exit: 3},
	{name: "exit_257", script: "exit.py", args: []string{"257"}, status: sandbox.StatusError, exit: 1},
	{name: "exit_msg", script: "exit.py", args: []string{"bye now"}, status: sandbox.StatusError, exit: 1},
	{script: "result_values.py"},
	{script: "result_forged.py", status: sandbox.StatusError, exit: 0},
	{script: "result_error.py", status: sandbox.StatusError, exit: 1},
	{script: "workspace_write.py"},

	// What WASI lacks (documented differences, pinned on both sides).
	{script: "gap_threads.py"},
	{script: "gap_subprocess.py"},
	{script: "gap_sockets.py"},
	{script: "gap_asyncio.py"},
	{script: "gap_process_time.py"},
	{script: "gap_ctypes.py"},
	{script: "gap_ssl_hashlib.py"},
	{script: "gap_sqlite3.py"},
	{script: "gap_multiprocessing.py"},
	{script: "gap_posix_modules.py"},
	{script: "gap_listdir_root.py"},
	{script: "gap_platform.py"},
	{script: "gap_tempdir.py"},
}
