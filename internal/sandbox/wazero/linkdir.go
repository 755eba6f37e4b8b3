package wazero

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// linkDir gives a writable mount the guest's symlinks. The host kernel
// never follows one: linkDir resolves every link on a path itself, as the
// native guest's kernel would in its own tree, and hands the mount below
// (budgetDir over confinedDir) a path with no link on it, but for a last
// component the call does not follow (lstat, readlink, unlink, rename,
// mkdir, symlink, link, utime without following, an open with O_NOFOLLOW,
// which confinedDir answers ELOOP, and one with O_CREAT|O_EXCL, which the
// kernel answers EEXIST). confinedDir still refuses
// any path through a link, the second wall.
//
// A link's target is the guest's path: relative to the link's directory,
// or absolute in the guest's tree. One that leads to another of the
// guest's mounts (/workspace/t -> /tmp/t, or ../etc/hostname) is followed
// there: the call goes on in that mount (guestMounts), which resolves
// links of its own the same way, and answers as it does for the path (a
// read-only mount's EROFS, its own view of a file's owner and bits); two
// paths on two mounts are ENOSYS, which the WASI build makes EXDEV, as
// for any rename or link across mounts. A path that no mount holds is
// ENOENT, as it is natively; nothing is ever looked up on the host
// outside the guest's mounts.
//
// Paths come without dots: the WASI build's C library resolves them
// first, reading each name that a ".." follows as a link (through this
// type's Readlink) and walking on through its target, as the kernel
// climbs from a link's target (python/wasi/_apysup_paths.c,
// fs_symlinks_dotdot.py); wazero then cleans them lexically.
type linkDir struct {
	experimentalsys.FS
	at     []string     // the mount's path in the guest, by component: ["workspace"]
	mounts *guestMounts // where links to other mounts lead; nil: nowhere (ENOENT)
}

func newLinkDir(fsys experimentalsys.FS, guestPath string, mounts *guestMounts) *linkDir {
	return &linkDir{FS: fsys, at: components(guestPath), mounts: mounts}
}

// guestMounts is a guest's mounts, by their path in the guest, as the
// guest sees each (nativeView): where a link that leaves its mount leads.
type guestMounts struct {
	byPath map[string]experimentalsys.FS
	// hops counts the calls in progress that a link led from one mount to
	// another: links that lead back and forth between two mounts end in
	// ELOOP after maxLinks, as within one.
	hops atomic.Int32
}

// find answers the mount that holds the guest's path abs (components from
// the root) and the path in it, "." for the mount's own directory.
func (m *guestMounts) find(abs []string) (experimentalsys.FS, string, bool) {
	for n := len(abs); n >= 0; n-- {
		if fsys, ok := m.byPath["/"+strings.Join(abs[:n], "/")]; ok {
			if n == len(abs) {
				return fsys, ".", true
			}
			return fsys, strings.Join(abs[n:], "/"), true
		}
	}
	return nil, "", false
}

// maxLinks is how many links one path may pass through (Linux's
// MAXSYMLINKS): more is ELOOP.
const maxLinks = 40

func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// resolve answers where name, a path in the mount, leads with every link
// on it resolved, the last component's only when last is set: this mount
// (d.FS) and a path in it that passes through no link, or another mount
// and a path there that it resolves itself. More than maxLinks links are
// ELOOP.
func (d *linkDir) resolve(name string, last bool) (experimentalsys.FS, string, experimentalsys.Errno) {
	todo := components(name)
	if lf, ok := d.FS.(linkFreer); ok && !slices.Contains(todo, "..") && lf.linkFree(name, last) {
		// The common case: no link on the way.
		return d.FS, withSlash(name, strings.Join(todo, "/")), 0
	}
	// The path walked so far, from the guest's root: the mount's own path,
	// then what lies below it.
	walked := append([]string(nil), d.at...)
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			if len(walked) > 0 {
				walked = walked[:len(walked)-1]
			}
			continue
		}
		walked = append(walked, c)
		rel, inside := d.below(walked)
		if !inside {
			if d.above(walked) {
				// A directory the read-only root makes to hold the mount:
				// a path may climb and come back down (../workspace/x).
				continue
			}
			return d.elsewhere(walked, todo)
		}
		if len(todo) == 0 && !last {
			break
		}
		st, errno := d.FS.Lstat(rel)
		if errno != 0 {
			// Missing, or not a directory: the call's own answer (ENOENT,
			// ENOTDIR) comes from the path as it stands, unless it would
			// climb back out of what is not there.
			for _, c := range todo {
				if c == ".." {
					return nil, "", errno
				}
			}
			walked = append(walked, todo...)
			break
		}
		if st.Mode&fs.ModeSymlink == 0 {
			continue
		}
		if links++; links > maxLinks {
			return nil, "", experimentalsys.ELOOP
		}
		target, errno := d.FS.Readlink(rel)
		if errno != 0 {
			return nil, "", errno
		}
		if target == "" {
			return nil, "", experimentalsys.ENOENT
		}
		walked = walked[:len(walked)-1]
		if strings.HasPrefix(target, "/") {
			walked = walked[:0]
		}
		todo = append(components(target), todo...)
	}
	rel, inside := d.below(walked)
	if !inside {
		fsys, rel, errno := d.elsewhere(walked, nil)
		return fsys, withSlash(name, rel), errno
	}
	return d.FS, withSlash(name, rel), 0
}

// withSlash is rel, the path name resolved to, with the slash name ends
// in (a path that must name a directory: "f/" is ENOTDIR), or "." for
// none.
func withSlash(name, rel string) string {
	switch {
	case rel == "" || rel == ".":
		return "."
	case strings.HasSuffix(name, "/"):
		return rel + "/"
	}
	return rel
}

// linkFreer is a mount that tells at once whether a path passes through no
// link (confinedDir, through budgetDir): then there is nothing to resolve.
type linkFreer interface {
	linkFree(path string, last bool) bool
}

// elsewhere answers the mount that holds walked, then todo, a path that
// left this mount: the rest of it, cleaned, is that mount's to resolve.
func (d *linkDir) elsewhere(walked, todo []string) (experimentalsys.FS, string, experimentalsys.Errno) {
	if d.mounts == nil {
		return nil, "", experimentalsys.ENOENT
	}
	abs := components(path.Clean("/" + strings.Join(append(walked, todo...), "/")))
	fsys, rel, ok := d.mounts.find(abs)
	if !ok {
		return nil, "", experimentalsys.ENOENT
	}
	return fsys, rel, 0
}

// below answers the part of walked below the mount ("." for the mount's
// directory), and whether walked is the mount's directory or below it.
// walked holds names only (no "", "." or ".."), so neither is the answer.
func (d *linkDir) below(walked []string) (string, bool) {
	if len(walked) < len(d.at) {
		return "", false
	}
	for i, c := range d.at {
		if walked[i] != c {
			return "", false
		}
	}
	if len(walked) == len(d.at) {
		return ".", true
	}
	return strings.Join(walked[len(d.at):], "/"), true
}

// above says whether walked is one of the directories that lead to the
// mount.
func (d *linkDir) above(walked []string) bool {
	if len(walked) >= len(d.at) {
		return false
	}
	for i, c := range walked {
		if d.at[i] != c {
			return false
		}
	}
	return true
}

// on runs op where name leads (resolve).
func (d *linkDir) on(name string, last bool, op func(fsys experimentalsys.FS, p string) experimentalsys.Errno) experimentalsys.Errno {
	fsys, p, errno := d.resolve(name, last)
	if errno != 0 {
		return errno
	}
	return d.hop(fsys, func() experimentalsys.Errno { return op(fsys, p) })
}

// on2 runs op on two paths, both resolved without their last components;
// on two mounts it is ENOSYS, wazero's answer for a rename or a link
// across mounts.
func (d *linkDir) on2(from, to string, op func(fsys experimentalsys.FS, f, t string) experimentalsys.Errno) experimentalsys.Errno {
	ffs, f, errno := d.resolve(from, false)
	if errno != 0 {
		return errno
	}
	tfs, t, errno := d.resolve(to, false)
	if errno != 0 {
		return errno
	}
	if ffs != tfs {
		return experimentalsys.ENOSYS
	}
	return d.hop(ffs, func() experimentalsys.Errno { return op(ffs, f, t) })
}

// hop runs call, which acts on fsys: in this mount at once, in another
// counted as a hop (guestMounts.hops).
func (d *linkDir) hop(fsys experimentalsys.FS, call func() experimentalsys.Errno) experimentalsys.Errno {
	if fsys == d.FS {
		return call()
	}
	defer d.mounts.hops.Add(-1)
	if d.mounts.hops.Add(1) > maxLinks {
		return experimentalsys.ELOOP
	}
	return call()
}

func (d *linkDir) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (f experimentalsys.File, errno experimentalsys.Errno) {
	follow := flag&experimentalsys.O_NOFOLLOW == 0 && !exclusive(flag)
	errno = d.on(name, follow, func(fsys experimentalsys.FS, p string) (e experimentalsys.Errno) {
		f, e = fsys.OpenFile(p, flag, perm)
		return e
	})
	return f, errno
}

func (d *linkDir) Lstat(name string) (st wsys.Stat_t, errno experimentalsys.Errno) {
	errno = d.on(name, false, func(fsys experimentalsys.FS, p string) (e experimentalsys.Errno) {
		st, e = fsys.Lstat(p)
		return e
	})
	return st, errno
}

func (d *linkDir) Stat(name string) (st wsys.Stat_t, errno experimentalsys.Errno) {
	errno = d.on(name, true, func(fsys experimentalsys.FS, p string) (e experimentalsys.Errno) {
		st, e = fsys.Stat(p)
		return e
	})
	return st, errno
}

func (d *linkDir) Readlink(name string) (target string, errno experimentalsys.Errno) {
	errno = d.on(name, false, func(fsys experimentalsys.FS, p string) (e experimentalsys.Errno) {
		target, e = fsys.Readlink(p)
		return e
	})
	return target, errno
}

func (d *linkDir) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	return d.on(name, false, func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Mkdir(p, perm) })
}

func (d *linkDir) Chmod(name string, perm fs.FileMode) experimentalsys.Errno {
	return d.on(name, true, func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Chmod(p, perm) })
}

func (d *linkDir) Rmdir(name string) experimentalsys.Errno {
	return d.on(name, false, experimentalsys.FS.Rmdir)
}

func (d *linkDir) Unlink(name string) experimentalsys.Errno {
	return d.on(name, false, experimentalsys.FS.Unlink)
}

// Symlink makes a link whose target is the guest's text, whatever it
// names: nothing on the host follows it.
func (d *linkDir) Symlink(target, linkName string) experimentalsys.Errno {
	return d.on(linkName, false, func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Symlink(target, p) })
}

func (d *linkDir) Utimens(name string, atim, mtim int64) experimentalsys.Errno {
	return d.on(name, true, func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Utimens(p, atim, mtim) })
}

// Lutimens sets the times of name itself, a link's own (lutimens).
func (d *linkDir) Lutimens(name string, atim, mtim int64) experimentalsys.Errno {
	return d.on(name, false, func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return lutimens(fsys, p, atim, mtim) })
}

func (d *linkDir) Rename(from, to string) experimentalsys.Errno {
	return d.on2(from, to, experimentalsys.FS.Rename)
}

func (d *linkDir) Link(oldName, newName string) experimentalsys.Errno {
	return d.on2(oldName, newName, experimentalsys.FS.Link)
}
