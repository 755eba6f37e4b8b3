// Package wasi embeds the inputs of the WASI CPython build (build.sh, the
// built-in C module, the stdlib packer) so that the wazero backend can
// compute the build's cache key without the source tree at run time.
//
// It only embeds files; build.sh builds, internal/sandbox/wazero runs.
package wasi

import "embed"

// Inputs holds every file build.sh hashes into its key: build.sh, *.c, *.h
// (include/, libuuid/, pgo/, termios/), *.py (stdlib/*.py and pgo/train.py
// included) and patches/<source package>/*.patch in this directory. A test in internal/sandbox/wazero checks
// that the Go key equals `build.sh --print-key`, so a new kind of input
// must be added to both this list and build.sh's input_files.
//
//go:embed build.sh _agent_runtime_host.c _apysup_errno.c _apysup_fcntl.c _apysup_fcntlmodule.c _apysup_files.c _apysup_flags.c _apysup_host.c _apysup_libm.c _apysup_locale.c _apysup_messages.c _apysup_netdb.c _apysup_os.c _apysup_paths.c _apysup_resource.c _apysup_signal.c _apysup_stat.c _apysup_strftime.c _apysup_string.c _apysup_termios.c include libuuid mkstdlib.py patches pgo/_profile.h pgo/_profile_shim.c pgo/train.py stdlib/*.py termios
var Inputs embed.FS
