package handlers

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// szomb is a zombie's p_stat (xnu's sys/proc.h; x/sys/unix does not name it).
const szomb = 5

// waitExited blocks until pid has exited, without reaping it: a kqueue
// NOTE_EXIT event, macOS's counterpart of Linux's waitid(WNOWAIT). When
// the event cannot be had (the process was already a zombie when it was
// registered, or no kqueue), the process table is polled instead.
func waitExited(pid int) {
	if kq, err := unix.Kqueue(); err == nil {
		defer unix.Close(kq)
		change := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC,
			Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
		events := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, change, events, nil)
			if err == unix.EINTR {
				continue
			}
			if err == nil && n == 1 && events[0].Flags&unix.EV_ERROR == 0 {
				return
			}
			break
		}
	}
	for running(pid) {
		time.Sleep(time.Millisecond)
	}
}

// running reports whether pid is neither a zombie nor gone.
func running(pid int) bool {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	return err == nil && len(procs) == 1 && procs[0].Proc.P_stat != szomb
}

// groupAlive reports whether a process of group pgid is neither a zombie
// nor gone, reading the process table (there is no wait for processes one
// did not start).
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return false
	}
	for _, p := range procs {
		if p.Proc.P_stat != szomb {
			return true
		}
	}
	return false
}

// closeOnExec marks every descriptor from 3 up close-on-exec, so that a
// command inherits exactly the three pipes (see exec_linux.go; macOS has
// no close_range, and lists a process's descriptors in /dev/fd).
func closeOnExec() {
	entries, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
