package integration

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestNoNetwork: every socket family but AF_UNIX is refused, the host's
// TCP listener on 127.0.0.1 and its abstract Unix socket are unreachable,
// and the guest's network namespace holds only lo.
func TestNoNetwork(t *testing.T) {
	t.Parallel()
	need(t)
	var accepted atomic.Int64
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	abstract := "apysup-escape-" + randomHex(t, 8)
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + abstract, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	for _, l := range []net.Listener{tcp, ul} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
	}
	port := tcp.Addr().(*net.TCPAddr).Port
	res := runGuest(t, "network.py", sandbox.Limits{}, strconv.Itoa(port), abstract, syscallNumber(t, "socket"))
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	want := map[string]string{
		"socketpair:AF_INET":  "EAFNOSUPPORT",
		"tcp:127.0.0.1":       "EAFNOSUPPORT",
		"tcp:localhost":       "EAFNOSUPPORT",
		"tcp6:::1":            "EAFNOSUPPORT",
		"dns:example.com":     "", // getaddrinfo's own codes (gaierror)
		"unix:abstract":       "ECONNREFUSED",
		"unix:abstract-dgram": "ECONNREFUSED",
	}
	for _, fam := range []string{"AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", "AF_ALG", "AF_VSOCK", "AF_KEY",
		"AF_TIPC", "AF_BLUETOOTH", "AF_CAN", "AF_RDS", "AF_QIPCRTR"} {
		for _, typ := range []string{"SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW"} {
			want[fmt.Sprintf("socket:%s:%s", fam, typ)] = "EAFNOSUPPORT"
		}
	}
	for fam := 0; fam < 46; fam++ {
		if fam != 1 { // AF_UNIX
			want[fmt.Sprintf("socket:raw:%d", fam)] = "EAFNOSUPPORT"
		}
	}
	m := parseMarkers(t, res)
	m.expect(t, want, "unix:listen-own-abstract")
	var ifaces, unixNames []string
	var tcpLines [][]string
	m.infoAs(t, "interfaces", &ifaces)
	m.infoAs(t, "tcp", &tcpLines)
	m.infoAs(t, "unix_names", &unixNames)
	if !slices.Equal(ifaces, []string{"lo"}) {
		t.Errorf("guest network interfaces %v, want [lo]", ifaces)
	}
	if len(tcpLines) != 0 {
		t.Errorf("guest sees TCP sockets %v", tcpLines)
	}
	// Only its own socket: not the host's abstract one, not the channel's
	// (its namespace holds the guest's end only while connected).
	if !slices.Equal(unixNames, []string{"@guest-" + abstract}) {
		t.Errorf("guest's /proc/net/unix names %v, want only its own @guest-%s", unixNames, abstract)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host's listeners accepted %d connections from the guest", n)
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
