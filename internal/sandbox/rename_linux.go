package sandbox

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to atomically, failing with EEXIST when
// to exists: renameat2(RENAME_NOREPLACE).
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}
