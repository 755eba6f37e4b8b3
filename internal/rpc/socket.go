package rpc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// File names inside a run directory; the sandbox mounts the directory at
// /run/apysup, so the guest finds /run/apysup/channel.json.
const (
	SocketName      = "rpc.sock"
	ChannelFileName = "channel.json"
)

// maxSocketPath is what fits in sockaddr_un.sun_path with its NUL.
const maxSocketPath = 107

// Owner is the host uid/gid a run's guest runs as.
type Owner struct {
	UID, GID int
}

// RunSocket is a per-run directory (mode 0700) holding the channel socket
// (mode 0600) and channel.json. With an Owner both belong to the guest's
// host uid/gid, so only that uid (and root) can reach the socket.
type RunSocket struct {
	Dir      string
	Path     string // the socket's host path
	Listener *net.UnixListener
	owner    *Owner
}

// ListenRunSocket creates a fresh run directory under parent and listens on
// its socket. owner may be nil (the guest runs as the caller's uid).
func ListenRunSocket(parent string, owner *Owner) (*RunSocket, error) {
	dir, err := os.MkdirTemp(parent, "apysup-run-")
	if err != nil {
		return nil, fmt.Errorf("rpc: run dir: %w", err)
	}
	rs := &RunSocket{Dir: dir, Path: filepath.Join(dir, SocketName), owner: owner}
	if err := rs.listen(); err != nil {
		rs.Close()
		return nil, err
	}
	return rs, nil
}

func (rs *RunSocket) listen() error {
	if len(rs.Path) > maxSocketPath {
		return fmt.Errorf("rpc: socket path longer than %d bytes: %s", maxSocketPath, rs.Path)
	}
	// MkdirTemp made the directory 0700 and ours: until the chmod and
	// chown below, nobody else can reach the socket whatever the umask.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: rs.Path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("rpc: listen: %w", err)
	}
	rs.Listener = l
	if err := os.Chmod(rs.Path, 0o600); err != nil {
		return fmt.Errorf("rpc: socket mode: %w", err)
	}
	return rs.chown(rs.Path, rs.Dir)
}

func (rs *RunSocket) chown(paths ...string) error {
	if rs.owner == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, rs.owner.UID, rs.owner.GID); err != nil {
			return fmt.Errorf("rpc: chown: %w", err)
		}
	}
	return nil
}

// WriteChannelFile writes channel.json (mode 0400, the guest's) into the
// run directory. It holds the credential: it is the one place it is written.
func (rs *RunSocket) WriteChannelFile(f ChannelFile) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	p := filepath.Join(rs.Dir, ChannelFileName)
	if err := os.WriteFile(p, data, 0o400); err != nil {
		return fmt.Errorf("rpc: channel file: %w", err)
	}
	return rs.chown(p)
}

// Close stops listening and removes the run directory with everything in it.
func (rs *RunSocket) Close() error {
	var errs []error
	if rs.Listener != nil {
		if err := rs.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(rs.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ChannelFile is channel.json, what the guest bridge reads to reach its
// channel. Socket is the path as the guest sees it.
type ChannelFile struct {
	Socket       string `json:"socket"`
	ChannelID    string `json:"channel_id"`
	InvocationID string `json:"invocation_id"`
	ExecutionID  string `json:"execution_id"`
	PlanSHA256   string `json:"plan_sha256"`
	Credential   string `json:"credential"` // base64url, no padding
}

// NewChannelFile describes ch for a guest that reaches the socket at
// guestSocket.
func NewChannelFile(ch *Channel, guestSocket string, credential []byte) ChannelFile {
	return ChannelFile{
		Socket:       guestSocket,
		ChannelID:    ch.cfg.ChannelID,
		InvocationID: ch.cfg.InvocationID,
		ExecutionID:  ch.cfg.ExecutionID,
		PlanSHA256:   ch.cfg.PlanSHA256,
		Credential:   base64.RawURLEncoding.EncodeToString(credential),
	}
}

// String and GoString leave the credential out, so that printing a
// ChannelFile never leaks it into a log.
func (f ChannelFile) String() string {
	return fmt.Sprintf("rpc.ChannelFile{Socket:%q ChannelID:%q InvocationID:%q ExecutionID:%q PlanSHA256:%q Credential:<redacted>}",
		f.Socket, f.ChannelID, f.InvocationID, f.ExecutionID, f.PlanSHA256)
}

func (f ChannelFile) GoString() string { return f.String() }
