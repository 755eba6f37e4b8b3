package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DefaultSocket is where `apysup serve` listens without --listen.
const DefaultSocket = "/run/apysup/api.sock"

// minTokenBytes bounds a bearer token from below: a guessable token is
// no token.
const minTokenBytes = 16

// A Listener is a listening socket and the check of who may use it.
type Listener struct {
	net.Listener
	Name  string // unix:PATH or tcp:HOST:PORT, as listening
	check func(*http.Request) *Error
	conn  func(context.Context, net.Conn) context.Context
}

// Listen opens a listener: "unix:PATH" (mode 0660; peers must be root or
// in the socket's group) or "tcp:HOST:PORT" (every request must carry the
// bearer token read from tokenFile; no TCP without one).
func Listen(spec, tokenFile string) (*Listener, error) {
	kind, addr, ok := strings.Cut(spec, ":")
	switch {
	case ok && kind == "unix" && addr != "":
		return listenUnix(addr)
	case ok && kind == "tcp" && addr != "":
		if tokenFile == "" {
			return nil, errors.New("a tcp listener needs --token-file: the API runs code as root")
		}
		token, err := readToken(tokenFile)
		if err != nil {
			return nil, err
		}
		return listenTCP(addr, token)
	}
	return nil, fmt.Errorf("--listen %q: want unix:PATH or tcp:HOST:PORT", spec)
}

// readToken reads a bearer token: one line of at least minTokenBytes
// printable bytes, from a file nobody else may read.
func readToken(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s: not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s: mode %v lets others read it; chmod 600", path, st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	token := strings.TrimSpace(string(data))
	if len(token) < minTokenBytes || strings.ContainsAny(token, " \t\r\n") {
		return nil, fmt.Errorf("token file %s: want one token of at least %d bytes", path, minTokenBytes)
	}
	return []byte(token), nil
}

func listenTCP(addr string, token []byte) (*Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	want := sha256.Sum256(token)
	return &Listener{Listener: l, Name: "tcp:" + l.Addr().String(), check: func(r *http.Request) *Error {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got)) // fixed length: the compare's time says nothing of the token
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			return refusal(CodeUnauthorized, "a valid bearer token is required")
		}
		return nil
	}}, nil
}

// peerKey holds a Unix connection's peer credentials in its context.
type peerKey struct{}

type peer struct {
	uid, gid uint32
	pid      int32
	err      error
}

func listenUnix(path string) (*Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o660); err != nil {
		l.Close()
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		l.Close()
		return nil, err
	}
	group := st.Sys().(*syscall.Stat_t).Gid
	return &Listener{Listener: l, Name: "unix:" + path,
		conn: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, peerOf(c))
		},
		check: func(r *http.Request) *Error {
			p, _ := r.Context().Value(peerKey{}).(peer)
			if p.err != nil || !(p.uid == 0 || inGroup(p, group)) {
				return refusal(CodeForbidden, "the peer is neither root nor in the socket's group")
			}
			return nil
		}}, nil
}

// removeStaleSocket removes a socket left at path by a server that died;
// one that answers is another server's, and path stays.
func removeStaleSocket(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s: another server listens there", path)
	}
	return os.Remove(path)
}

// inGroup reports whether the peer's primary or a supplementary group is
// gid (the supplementary ones from /proc/PID/status, read while the
// connection is open).
func inGroup(p peer, gid uint32) bool {
	if p.gid == gid {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if groups, ok := strings.CutPrefix(line, "Groups:"); ok {
			for _, g := range strings.Fields(groups) {
				if g == fmt.Sprint(gid) {
					return true
				}
			}
		}
	}
	return false
}
