//go:build !linux

package serve

import (
	"errors"
	"net"
)

// peerOf refuses: peer credentials are read with Linux's SO_PEERCRED.
func peerOf(net.Conn) peer { return peer{err: errors.New("no SO_PEERCRED")} }
