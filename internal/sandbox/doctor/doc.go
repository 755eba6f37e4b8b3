// Package doctor checks, one function per host feature, that this machine can
// run the native backend with complete confinement: root, user namespaces,
// mount namespaces and pivot_root, seccomp filters (kernel and libseccomp),
// the memory, pids and cpu cgroup controllers (v1 or v2), overlayfs and
// Debian's /usr/bin/python3.11.
//
// Each result carries a stable reason code, a detail and a one-line fix. The
// native backend refuses a run with the code of the first failed required
// check; it never falls back to weaker confinement. The doctor only reads the
// host and spawns short probes; it must never change host settings.
package doctor
