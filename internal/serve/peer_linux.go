package serve

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// peerOf reads a Unix connection's peer credentials (SO_PEERCRED: what
// the kernel recorded at connect).
func peerOf(c net.Conn) peer {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{err: errors.New("not a unix connection")}
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{err: err}
	}
	var p peer
	if cerr := raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			p.err = err
			return
		}
		p.uid, p.gid, p.pid = cred.Uid, cred.Gid, cred.Pid
	}); cerr != nil {
		return peer{err: cerr}
	}
	return p
}
