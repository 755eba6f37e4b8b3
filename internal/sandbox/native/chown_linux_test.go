package native

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/testenv"
)

// TestChownTreeDeeperThanPathMax: a guest can build a tree no path reaches
// (3000 levels of "d/" is 6000 bytes); giving the workspace back must
// reach every entry of it anyway, without following symlinks, and without
// holding a descriptor per level.
func TestChownTreeDeeperThanPathMax(t *testing.T) {
	testenv.NeedRoot(t)
	const depth, owner = 3000, 54321
	root := t.TempDir()
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < depth; i++ {
		must(t, unix.Mkdirat(fd, "d", 0o755))
		f, err := unix.Openat(fd, "f", unix.O_CREAT|unix.O_WRONLY, 0o644)
		must(t, err)
		unix.Close(f)
		must(t, unix.Symlinkat(canary, fd, "l"))
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)

	before := openDescriptors(t)
	if err := chownTree(root, owner, owner); err != nil {
		t.Fatalf("chownTree: %v", err)
	}
	if after := openDescriptors(t); after != before {
		t.Errorf("descriptors open: %d before, %d after", before, after)
	}

	var st unix.Stat_t
	must(t, unix.Stat(canary, &st))
	if st.Uid == owner {
		t.Fatal("chownTree followed a symlink")
	}
	fd, err = unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	defer func() { unix.Close(fd) }()
	for i := 0; i < depth; i++ {
		for _, name := range []string{"d", "f", "l"} {
			must(t, unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW))
			if st.Uid != owner || st.Gid != owner {
				t.Fatalf("depth %d: %s owned by %d:%d", i+1, name, st.Uid, st.Gid)
			}
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		unix.Close(fd)
		fd = next
	}
}

func openDescriptors(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	return len(entries)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
