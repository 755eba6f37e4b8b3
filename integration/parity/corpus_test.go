package parity

import (
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/plan"
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
	{script: "std_decimal_precision.py"},
	{script: "std_collections.py"},
	{script: "std_bytes.py"},
	{script: "std_memory.py"},
	{script: "std_math.py"},
	{script: "std_text.py"},
	{script: "std_stdlib_data.py"},
	{script: "std_locale.py"},
	{script: "std_locale_gettext.py"},
	{script: "std_syslog.py"},
	{script: "fs_stat_modes.py"},
	{script: "fs_file_modes.py"},
	{script: "fs_chown.py"},
	{script: "fs_dir_fd.py"},
	{script: "fs_dir_fd_errnos.py"},
	{script: "fs_closerange.py"},
	{script: "fs_symlinks.py"},
	{script: "fs_symlinks_dotdot.py"},
	{script: "fs_last_dot.py"},
	{script: "fs_limits.py"},
	{script: "fs_stat_fields.py"},
	{script: "fs_copy_file_range.py"},
	{script: "fs_pwrite_append.py"},
	{script: "fs_access_nofollow.py"},
	{script: "fs_chmod_descriptors.py"},
	{script: "std_select_exceptional.py"},
	{script: "fs_seek_past_end.py"},
	{script: "fs_file_times.py"},
	{script: "fs_readonly_answers.py"},
	{script: "fs_tmp_pages.py"},
	{script: "std_isatty_devices.py"},
	{script: "fs_errno_matrix.py"},
	{script: "env_host_packages.py"},
	{script: "net_https_refused.py"},
	{script: "std_struct_bool_bytes.py"},
	{script: "fs_dirent_inodes.py"},
	{script: "std_getrandom.py"},
	{script: "std_errno.py"},
	{script: "std_open_flags.py"},
	{script: "std_clock_ids.py"},
	{script: "std_poll.py"},
	{script: "std_inet_aton.py"},
	{script: "std_faulthandler.py"},
	{script: "std_user_base.py"},
	{script: "std_time_huge_years.py"},
	{script: "std_mktime_repeated_hour.py"},
	{script: "sqlite_real_digits.py"},
	{script: "std_cpus.py"},
	{script: "std_nice_loadavg.py"},
	{script: "fs_statvfs.py"},
	{script: "std_random.py"},
	{script: "std_classes.py"},
	{script: "std_csv_io.py"},
	{script: "fs_workspace.py"},
	{script: "imports_workspace.py"},
	{script: "fs_utime_now.py"},
	{script: "fs_missing_paths.py"},
	{script: "fs_set_blocking.py"},
	{script: "fs_read_only.py"},
	{script: "fs_path_resolution.py"},
	{script: "fs_access.py"},
	{script: "fs_devices.py"},
	{script: "fs_tmp.py"},
	{script: "fs_etc.py"},
	{script: "fs_dev_streams.py"},
	{script: "fs_mount_points.py"},
	{script: "std_process_time.py"},
	{script: "std_alarm.py"},
	{script: "std_libm.py"},
	{script: "std_futures.py"},
	{script: "std_lock_timeouts.py"},
	{script: "std_c_recursion.py"},
	{script: "std_identity.py"},
	{script: "std_version.py"},
	{script: "std_netdb.py"},
	{script: "std_termios.py"},
	{script: "std_signal_self.py"},
	{script: "std_users.py"},
	{script: "std_compression.py"},
	{script: "compute.py"},
	{script: "recursion.py"},
	{script: "recursion_deep.py", limits: sandbox.Limits{Timeout: 30 * time.Second}, status: sandbox.StatusError, exit: 1, stdout: "down\n"},
	{script: "nesting_depths.py"},
	{script: "output.py"},
	{script: "sleep.py"},
	{script: "zoneinfo_tz.py"},
	{script: "zoneinfo_links.py"},
	{script: "std_tzset.py"},
	{script: "std_mktime_isdst.py"},
	{script: "std_strftime.py"},
	{script: "std_pid.py"},
	{script: "std_process_groups.py"},
	{script: "std_sched.py"},
	{script: "std_setids.py"},
	{script: "std_os_arguments.py"},
	{script: "std_os_release.py"},
	{script: "std_sysconf.py"},
	{script: "std_thread_ids.py"},
	{script: "std_signal_sets.py"},
	{script: "std_resource.py"},
	{script: "std_fcntl.py"},
	{script: "std_proc.py"},
	{script: "std_asyncio.py"},
	{script: "std_sqlite3.py"},
	{script: "std_sqlite3_wal.py"},
	{script: "std_dbm.py"},
	{script: "std_uuid.py"},

	// The world the guest sees.
	{script: "world.py", args: []string{"first", "two words", "é"}},
	{script: "world_sizes.py", known: map[string]pinned{
		"stdout": {native: "maxsize 9223372036854775807\npointer 8 long 8 size_t 8\nid-is-small False\nsysconf 64 4294967295 -1 1\n", wazero: "maxsize 2147483647\npointer 4 long 4 size_t 4\nid-is-small True\nsysconf 32 -1 1 -1\n"},
	}},

	// Capability calls on every surface, approvals, refusals, budgets.
	{script: "cap_programmatic.py"},
	{script: "cap_threads.py"},
	{script: "cap_result_bytes.py"},
	{script: "cap_direct.py", surface: plan.SurfaceDirect},
	{script: "cap_both.py", surface: plan.SurfaceBoth, parent: "main"},
	{script: "cap_surface_refusals.py"},
	{script: "cap_local_refusals.py"},
	{script: "cap_globals.py", stdout: "{'echo': {'text': 'no import'}}\n" +
		"echo_say __main__ Echo the arguments.\n" +
		"{'echo': {'text': 'from a function'}}\n" +
		"True False True\n" +
		"7\n"},
	{script: "approvals.py"},
	{script: "refusals.py"},
	{script: "budget.py", plan: "budget"},
	{script: "grants.py", plan: "grants", stdout: "granted ok {'echo': {'text': 'Paris'}}\n" +
		"not granted refused grant_denied | the capability's grant does not allow the argument at /text\n" +
		"schema first refused input_schema_violation | the arguments do not match the capability's input schema\n" +
		"granted again ok {'echo': {'text': 'Oslo'}}\n" +
		"third ok {'echo': {'text': 'Paris'}}\n" +
		"budget spent refused grant_denied | the capability's grant allows no more calls in this run (its max_calls)\n" +
		"long note, no approval asked refused grant_denied | the capability's grant does not allow the argument at /text\n" +
		"note ok {'echo': {'text': 'buy milk'}}\n" +
		"second note refused grant_denied | the capability's grant allows no more calls in this run (its max_calls)\n"},
	{script: "malformed_frames.py"},
	{script: "frame_limits.py"},
	{script: "refused_frame_id.py"},
	{script: "reused_id.py", known: map[string]pinned{
		"stdout": {native: "first ok {'echo': {'text': 'same'}}\nsame request again ok {'echo': {'text': 'same'}}\nsame id, other arguments CapabilityError call_identity_mismatch\nnext id ok {'echo': {'text': 'next'}}\n", wazero: "first ok {'echo': {'text': 'same'}}\nsame request again CapabilityError program_sequence_violation\nsame id, other arguments CapabilityError program_sequence_violation\nnext id ok {'echo': {'text': 'next'}}\n"},
	}},
	{name: "reused_id_direct", script: "reused_id.py", surface: plan.SurfaceDirect, known: map[string]pinned{
		"stdout": {native: "first ok {'echo': {'text': 'same'}}\nsame request again ok {'echo': {'text': 'same'}}\nsame id, other arguments CapabilityError call_identity_mismatch\nnext id ok {'echo': {'text': 'next'}}\n", wazero: "first ok {'echo': {'text': 'same'}}\nsame request again CapabilityError call_id_reused\nsame id, other arguments CapabilityError call_id_reused\nnext id ok {'echo': {'text': 'next'}}\n"},
	}},

	// Endings: exceptions, exit codes, results, the workspace.
	{script: "exc_uncaught.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_interrupt.py", status: sandbox.StatusError, exit: 130, stdout: "before\natexit ran\n"},
	{name: "exc_hook_raises", script: "exc_hook.py", args: []string{"original"}, status: sandbox.StatusError, exit: 1, stdout: "hook sees ValueError original\n"},
	{name: "exc_hook_exits", script: "exc_hook.py", args: []string{"exit"}, status: sandbox.StatusError, exit: 9, stdout: "hook sees ValueError exit\n"},
	{script: "exit_signal.py", status: sandbox.StatusError, exit: 143, stdout: "before\n"},
	{script: "exit_rt_signal.py", status: sandbox.StatusError, exit: 168, stdout: "before\n"},
	{script: "exit_alarm.py", status: sandbox.StatusError, exit: 142, stdout: "before\n"},
	{script: "crash_stack.py", status: sandbox.StatusError, exit: 139, stdout: "built\n"},
	{script: "crash_stack_frames.py", status: sandbox.StatusError, exit: 139, stdout: "built\n"},
	{script: "crash_faulthandler_report.py", status: sandbox.StatusError, exit: 139, stdout: "enabled\n"},
	{script: "exc_capability.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_syntax.py", status: sandbox.StatusError, exit: 1},
	{script: "exc_handled.py"},
	{name: "exit_0", script: "exit.py", args: []string{"0"}},
	{script: "exit_flush_fails.py", status: sandbox.StatusError, exit: 120, stdout: "before\nwritten, never flushed by the exit\n"},
	{script: "exit_builtin.py", status: sandbox.StatusError, exit: 4, stdout: "1 Use exit() or Ctrl-D (i.e. EOF) to exit Use quit() or Ctrl-D (i.e. EOF) to exit _Helper\nCopyright (c) 2001-2023 Python Software Foundation. ['Thanks', 'to'] Type license() to see the full license text\nquit raised SystemExit 3\n"},
	{name: "exit_none", script: "exit.py", args: []string{"none"}},
	{name: "exit_3", script: "exit.py", args: []string{"3"}, status: sandbox.StatusError, exit: 3},
	{name: "exit_257", script: "exit.py", args: []string{"257"}, status: sandbox.StatusError, exit: 1},
	{name: "exit_msg", script: "exit.py", args: []string{"bye now"}, status: sandbox.StatusError, exit: 1},
	{script: "exit_finalization.py", stdout: "del finalized\nfinalize callback\nmain done\natexit\nfinalize at exit\n" +
		"generator finally\ndel first\ndel kept\ndel cycle\n"},
	{script: "result_values.py"},
	{script: "result_forged.py", status: sandbox.StatusError, exit: 0},
	{script: "result_error.py", status: sandbox.StatusError, exit: 1},
	{script: "workspace_write.py"},
	// The guest spoils its own outcome: an error on both, never the host's.
	{script: "out_outcome_dir.py", status: sandbox.StatusError, exit: 1},
	{name: "out_outcome_link_workspace", script: "out_outcome_link.py", args: []string{"workspace"}},
	{name: "out_outcome_link_root", script: "out_outcome_link.py", args: []string{"etc"}},
	{script: "fd_exhausted_outcome.py", status: sandbox.StatusError, exit: 1},
	{script: "fd_held_by_globals.py"},
	// The out directory is bounded on both backends, credited when freed.
	{script: "out_dir_full.py"},
	// A run the host ended has no exit status of its own: -1 on both.
	{script: "timeout.py", limits: sandbox.Limits{Timeout: 10 * time.Second}, status: sandbox.StatusTimeout, exit: -1}, // the call needs 0.2 s of CPU after the clock starts: room for a host at load 20 on 2 cores
	{script: "timeout_asyncio.py", limits: sandbox.Limits{Timeout: 10 * time.Second}, status: sandbox.StatusTimeout, exit: -1},
	{script: "signal_stop_self.py", limits: sandbox.Limits{Timeout: 5 * time.Second}, status: sandbox.StatusTimeout, exit: -1},
	{script: "memory.py", limits: sandbox.Limits{MemoryBytes: 256 << 20}, status: sandbox.StatusMemoryLimit, known: map[string]pinned{
		"exit_code":   {native: "137", wazero: "1"},
		"stderr_last": {native: "", wazero: "MemoryError"},
		"guest_error": {native: "", wazero: "MemoryError: "},
	}},
	{script: "memory_huge_request.py", limits: sandbox.Limits{MemoryBytes: 256 << 20}, status: sandbox.StatusMemoryLimit, known: map[string]pinned{
		"exit_code":   {native: "137", wazero: "1"},
		"stderr_last": {native: "", wazero: "MemoryError"},
		"guest_error": {native: "", wazero: "MemoryError: "},
	}},
	{script: "recursion_memory.py", limits: sandbox.Limits{MemoryBytes: 128 << 20}, status: sandbox.StatusMemoryLimit, stdout: "down\n", known: map[string]pinned{
		"exit_code":   {native: "137", wazero: "1"},
		"stderr_last": {native: "", wazero: "MemoryError"},
		"guest_error": {native: "", wazero: "MemoryError: "},
	}},
	{script: "memory_caught.py", limits: sandbox.Limits{MemoryBytes: 256 << 20}, known: map[string]pinned{
		"status":    {native: "memory_limit", wazero: "ok"},
		"exit_code": {native: "137", wazero: "0"},
		"stdout":    {native: "", wazero: "MemoryError\nstill running\n"},
	}},

	// What WASI lacks (documented differences, pinned on both sides).
	{script: "gap_threads.py", known: map[string]pinned{
		"stdout": {native: "_thread importable: True\nthread ran: [1]\nactive: 1\n", wazero: "_thread importable: True\nthread failed: RuntimeError can't start new thread\nactive: 1\n"},
	}},
	{script: "gap_subprocess.py", known: map[string]pinned{
		"stdout": {native: "ran: 0 b'hi\\n'\nfork: True posix_spawn: True system: True\nwhich: /usr/bin/python3.11 /usr/bin/sh /usr/bin/tar\n", wazero: "failed: OSError [Errno 95] wasi does not support processes.\nfork: False posix_spawn: False system: False\nwhich: /usr/bin/python3.11 None None\n"},
	}},
	{script: "gap_sockets.py", known: map[string]pinned{
		"stdout": {native: "inet failed: OSError [Errno 97] Address family not supported by protocol\nunix created\nsocketpair created\nconnect failed: OSError\n", wazero: "inet failed: OSError [Errno 97] Address family not supported by protocol\nunix failed: AttributeError module 'socket' has no attribute 'AF_UNIX'\nsocketpair failed: OSError [Errno 97] Address family not supported by protocol\nconnect failed: OSError\n"},
	}},
	{script: "gap_asyncio.py", known: map[string]pinned{
		"stdout": {native: "run_in_executor: 42\nto_thread: 8\nsubprocess: 0 b'child\\n'\nasyncio.run: done\n", wazero: "run_in_executor: 42\nto_thread: 8\nsubprocess failed: OSError [Errno 95] wasi does not support processes.\nasyncio.run: done\n"},
	}},
	{script: "gap_ctypes.py", known: map[string]pinned{
		"stdout": {native: "ctypes: 8\n", wazero: "ctypes failed: ModuleNotFoundError No module named '_ctypes'\n"},
	}},
	{script: "gap_ssl_hashlib.py", known: map[string]pinned{
		"stdout": {native: "_ssl imported\n_hashlib imported\nssl imported\nsha256 works: ba7816bf8f01cfea\nalgorithms_available has sha256: True\npbkdf2: 0a38253555ce37f5\nscrypt: 722af53bdb882592\n", wazero: "_ssl failed: No module named '_ssl'\n_hashlib failed: No module named '_hashlib'\nssl failed: No module named '_ssl'\nsha256 works: ba7816bf8f01cfea\nalgorithms_available has sha256: True\npbkdf2: 0a38253555ce37f5\nscrypt missing\n"},
	}},
	{script: "gap_sqlite3.py", known: map[string]pinned{
		"stdout": {native: sqliteOut("3", "True"), wazero: sqliteOut("0", "False")},
	}},
	{script: "gap_multiprocessing.py", known: map[string]pinned{
		"stdout": {native: "cpu_count: True\npool fork [1, 2]\npool spawn [1, 2]\npool forkserver [1, 2]\nqueue: {'a': 1}\nvalue: 6\nshared_memory: b'abc'\nexecutor: [4, 5]\n", wazero: "cpu_count: True\nmultiprocessing failed: ModuleNotFoundError No module named '_multiprocessing'\n"},
	}},
	{script: "gap_posix_modules.py", known: map[string]pinned{
		"stderr_last": {native: "  __import__(name)", wazero: ""},
		"stdout":      {native: "fcntl ok\npwd ok\ngrp ok\nresource ok\nmmap ok\ntermios ok\n_posixsubprocess ok\nselect ok\n_bz2 ok\n_lzma ok\nreadline ok\n_curses ok\n_uuid ok\n_dbm ok\npyexpat ok\n_decimal ok\n_multiprocessing ok\n_posixshmem ok\nsyslog ok\nspwd ok\n_crypt ok\n", wazero: "fcntl ok\npwd ok\ngrp ok\nresource ok\nmmap failed\ntermios ok\n_posixsubprocess failed\nselect ok\n_bz2 ok\n_lzma ok\nreadline failed\n_curses failed\n_uuid ok\n_dbm ok\npyexpat ok\n_decimal ok\n_multiprocessing failed\n_posixshmem failed\nsyslog ok\nspwd failed\n_crypt ok\n"},
	}},
	{script: "gap_listdir_root.py", known: map[string]pinned{
		"stdout": {native: "/ ['bin', 'dev', 'etc', 'lib', 'lib64', 'opt']\n/usr/lib/python3.11/json ['__init__.py', 'decoder.py', 'encoder.py', 'scanner.py', 'tool.py']\n/opt/apysup ['_agent_runtime_host.py', '_agent_runtime_wire.py', 'agent_runtime.py', 'apysup_runner.py']\n/run/apysup/job ['.argv', 'gap_listdir_root.py', 'prelude.py']\n/tmp []\n/etc ['alternatives', 'group', 'hostname', 'hosts', 'ld.so.cache', 'nsswitch.conf']\n/proc True\n", wazero: "/ ['dev', 'etc', 'opt', 'proc', 'run', 'tmp']\n/usr/lib/python3.11/json ['__init__.py', 'decoder.py', 'encoder.py', 'scanner.py', 'tool.py']\n/opt/apysup ['_agent_runtime_host.py', '_agent_runtime_wire.py', 'agent_runtime.py', 'apysup_runner.py']\n/run/apysup/job ['.argv', 'gap_listdir_root.py', 'prelude.py']\n/tmp []\n/etc ['group', 'hostname', 'hosts', 'nsswitch.conf', 'passwd', 'python3.11']\n/proc False\n"},
	}},
	{script: "gap_os_host.py", known: map[string]pinned{
		"stdout": {native: "getppid 1\nids (1000, 1000, 1000, 1000)\numask 18\nkill 0 None\nnice 0\ngetloadavg 3\nsched_getaffinity True\ngetlogin OSError: [Errno 6] No such device or address\npwd sandbox\ndup None\npipe [None, None]\nget_inheritable True\nread(10**9) 6\nread(10**6) 6\n", wazero: "getppid 1\nids (1000, 1000, 1000, 1000)\numask 18\nkill 0 None\nnice 0\ngetloadavg 3\nsched_getaffinity True\ngetlogin OSError: [Errno 6] No such device or address\npwd sandbox\ndup OSError: [Errno 95] Operation not supported\npipe AttributeError: module 'os' has no attribute 'pipe'\nget_inheritable True\nread(10**9) MemoryError: \nread(10**6) 6\n"},
	}},
	{script: "gap_platform.py", known: map[string]pinned{
		"stdout": {native: "sys.platform linux\nos.name posix\nuname Linux\ngetpid True getuid 1000\nplatform Linux x86_64 ('64bit', 'ELF') ('glibc', '2.36')\nsysconfig linux-x86_64\n", wazero: "sys.platform wasi\nos.name posix\nuname wasi\ngetpid True getuid 1000\nplatform wasi wasm32 ('32bit', '') ('', '')\nsysconfig wasi-0.0.0-wasm32\n"},
	}},
	{script: "gap_names_not_utf8.py", known: map[string]pinned{
		"stdout": {native: "b'\\xff' made True\n'caf\\udce9' made True\n'café' made True\n", wazero: "b'\\xff' PermissionError EPERM\n'caf\\udce9' PermissionError EPERM\n'café' made True\n"},
	}},
	{script: "gap_stdlib_modules.py", known: map[string]pinned{
		"stdout": {native: "305 names; 9 do not import:\n_msi _overlapped _scproxy _winapi msilib msvcrt nt winreg winsound\n", wazero: "305 names; 26 do not import:\n_ctypes _curses _curses_panel _hashlib _msi _multiprocessing _overlapped _posixshmem _posixsubprocess _scproxy _ssl _winapi ctypes curses mmap msilib msvcrt nis nt ossaudiodev pty readline spwd ssl winreg winsound\n"},
	}},
	{script: "gap_futures.py", known: map[string]pinned{
		"stdout": {native: "the wait saw the set: True setter: None\n", wazero: "the wait saw the set: False setter: None\n"},
	}},
	{script: "gap_sparse_blocks.py", known: map[string]pinned{
		"stdout": {native: "holes 100001 8\ntruncated 1048576 0\n", wazero: "holes 100001 200\ntruncated 1048576 2048\n"},
	}},
	{script: "gap_tz_leap_seconds.py", known: map[string]pinned{
		"stdout": {native: "('UTC', 'UTC') 2023-11-14 22:12:53 UTC 1700000000.0\n", wazero: "('UTC', 'UTC') 2023-11-14 22:13:20 UTC 1700000000.0\n"},
	}},
	{script: "gap_32bit_effects.py", known: map[string]pinned{
		"stdout": {native: "boundary digits 19\nseed 3.5 0.3039190124834461\nseed 35 0.5486946056438222 seed 'abc' 0.7720246314157545\nSysLogHandler('/dev/log') made\n" +
			"<i 2147483648 struct.error: 'i' format requires -2147483648 <= number <= 2147483647\n<I 4294967296 struct.error: 'I' format requires 0 <= number <= 4294967295\n<H 8589934592 struct.error: ushort format requires 0 <= number <= 65535\n<b 1099511627776 struct.error: byte format requires -128 <= number <= 127\n<q 1180591620717411303424 struct.error: argument out of range\n" +
			"venv: ['bin', 'include', 'lib', 'lib64', 'pyvenv.cfg']\n",
			wazero: "boundary digits 10\nseed 3.5 0.6724274693827534\nseed 35 0.5486946056438222 seed 'abc' 0.7720246314157545\nSysLogHandler('/dev/log') AttributeError module 'socket' has no attribute 'AF_UNIX'\n" +
				"<i 2147483648 struct.error: argument out of range\n<I 4294967296 struct.error: argument out of range\n<H 8589934592 struct.error: argument out of range\n<b 1099511627776 struct.error: argument out of range\n<q 1180591620717411303424 struct.error: argument out of range\n" +
				"venv: ['bin', 'include', 'lib', 'pyvenv.cfg']\n"},
	}},
	{script: "gap_hash.py", known: map[string]pinned{
		"stdout": {native: "hash_randomization 1\nstable within the run True True\nwidth 64\nmodulus 2305843009213693951 algorithm siphash13\nhash(2.5) 1152921504606846978 hash((1, 2)) -3550055125485641917\nset of tuples [(1, 2), (3, 4), (7, 8), (5, 6)]\nset of small ints [1, 2, 3, 4, 5]\n", wazero: "hash_randomization 1\nstable within the run True True\nwidth 32\nmodulus 2147483647 algorithm siphash13\nhash(2.5) 1073741826 hash((1, 2)) 994727857\nset of tuples [(1, 2), (3, 4), (5, 6), (7, 8)]\nset of small ints [1, 2, 3, 4, 5]\n"},
	}},
}

// sqliteOut is what gap_sqlite3.py prints: the journal mode a request for
// WAL leaves, sqlite3.threadsafety and whether extensions can be loaded.
func sqliteOut(threadsafety, loadExtension string) string {
	return "journal_mode=wal: wal\nrows: [(42,)]\nthreadsafety: " + threadsafety +
		"\nenable_load_extension: " + loadExtension + "\n"
}
