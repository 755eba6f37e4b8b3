package sandbox

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to atomically, failing with EEXIST when
// to exists: renamex_np(RENAME_EXCL), macOS's counterpart of Linux's
// renameat2(RENAME_NOREPLACE).
func renameNoReplace(from, to string) error {
	return unix.RenamexNp(from, to, unix.RENAME_EXCL)
}
