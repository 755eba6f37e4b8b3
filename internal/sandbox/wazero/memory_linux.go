package wazero

import "golang.org/x/sys/unix"

// adviseHuge asks the kernel for transparent huge pages on a guest memory
// mapping (MADV_HUGEPAGE): where the kernel's THP mode is "madvise" (or
// "always"), the guest's first touch of each 2 MiB costs one fault, not
// 512. An empty run touches about 1,500 pages of its 16 MiB, python.wasm's
// 3.6 MB of data segments among them: with the advice a one-shot run
// takes 15-20 ms less of wall time here (RATIONALE.md "Huge pages for the
// wazero guest's memory"). The memory a run may use is still counted in
// wasm pages by Reallocate; what the advice changes is only how the
// kernel backs it. It is advice: a kernel without THP refuses it, and the
// memory works as before.
func adviseHuge(mapping []byte) { _ = unix.Madvise(mapping, unix.MADV_HUGEPAGE) }
