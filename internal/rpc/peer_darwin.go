package rpc

import "golang.org/x/sys/unix"

// peerUID is the effective uid of the process at the other end of the Unix
// socket fd, as the kernel recorded it at connect (LOCAL_PEERCRED, what
// getpeereid(3) reads): macOS's counterpart of Linux's SO_PEERCRED.
func peerUID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return cred.Uid, nil
}
