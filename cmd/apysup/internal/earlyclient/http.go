package earlyclient

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The bounds of what the early client reads from a server: a status line
// or header line, the headers, and a body other than the event stream.
const (
	maxLineBytes   = 16 << 10
	maxHeaders     = 100
	maxAnswerBytes = 1 << 20
)

// refusal is the API's typed error (serve.Error).
type refusal struct {
	Code    string `json:"error_code"`
	Message string `json:"error"`
}

func (e *refusal) Error() string { return e.Code + ": " + e.Message }

// notSent is a failure to connect: nothing reached the server.
type notSent struct {
	path string
	err  error
}

func (e *notSent) Error() string { return "dial unix " + e.path + ": " + e.err.Error() }

// response is an answer whose body is being read.
type response struct {
	status int
	header map[string]string // by lower-case name; the last of a repeated one
	body   io.Reader
	conn   *os.File
}

func (r *response) Close() error { return r.conn.Close() }

// dial connects to the Unix socket at path with the socket calls
// themselves: the net package initialises after the packages this one
// runs before (see the package doc).
func dial(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// Non-blocking once connected, so that os.File reads it through the
	// runtime's poller: a blocking read would hold a thread, and the
	// runtime would start another for the rest.
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "unix:"+path), nil
}

// open sends one HTTP/1.1 request on a connection of its own and reads
// the answer's head. A failure to connect is a *notSent (nothing reached
// the server); an answer of 300 or more is its refusal, or an error.
func open(path, method, target string, body []byte) (*response, error) {
	conn, err := dial(path)
	if err != nil {
		return nil, &notSent{path: path, err: err}
	}
	head := method + " " + target + " HTTP/1.1\r\nHost: apysup\r\nUser-Agent: apysup\r\nConnection: close\r\n"
	if body != nil {
		head += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	if _, err := conn.Write(append([]byte(head+"\r\n"), body...)); err != nil {
		conn.Close()
		return nil, err
	}
	resp, err := readHead(bufio.NewReader(conn))
	if err != nil {
		conn.Close()
		return nil, err
	}
	resp.conn = conn
	if resp.status >= 300 {
		defer conn.Close()
		e := &refusal{}
		if err := json.NewDecoder(io.LimitReader(resp.body, 64<<10)).Decode(e); err != nil || e.Code == "" {
			return nil, fmt.Errorf("serve: %s %s: HTTP %d", method, target, resp.status)
		}
		return nil, e
	}
	return resp, nil
}

// call sends a request and decodes its JSON answer into out.
func call(path, method, target string, body []byte, out any) error {
	resp, err := open(path, method, target, body)
	if err != nil {
		return err
	}
	defer resp.Close()
	return json.NewDecoder(io.LimitReader(resp.body, maxAnswerBytes)).Decode(out)
}

// readHead reads an answer's status line and headers, and frames its
// body by Content-Length, chunked transfer coding, or the connection's
// end.
func readHead(br *bufio.Reader) (*response, error) {
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || status < 100 || status > 999 {
		return nil, fmt.Errorf("a malformed status line %q", line)
	}
	resp := &response{status: status, header: map[string]string{}}
	length, chunked := int64(-1), false
	for n := 0; ; n++ {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if line == "" {
			break
		}
		if n == maxHeaders {
			return nil, errors.New("too many header lines")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("a malformed header line %q", line)
		}
		value = strings.TrimSpace(value)
		resp.header[strings.ToLower(name)] = value
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.ParseInt(value, 10, 64); err != nil || length < 0 {
				return nil, fmt.Errorf("a malformed Content-Length %q", value)
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(value, "chunked")
			if !chunked {
				return nil, fmt.Errorf("an unknown Transfer-Encoding %q", value)
			}
		}
	}
	switch {
	case chunked:
		resp.body = &chunkedReader{br: br}
	case length >= 0:
		resp.body = io.LimitReader(br, length)
	default:
		resp.body = br
	}
	return resp, nil
}

// readLine reads a CRLF- (or LF-) terminated line of at most maxLineBytes.
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		part, more, err := br.ReadLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if b = append(b, part...); len(b) > maxLineBytes {
			return "", errors.New("a line longer than a server sends")
		}
		if !more {
			return string(b), nil
		}
	}
}

// chunkedReader decodes HTTP/1.1's chunked transfer coding.
type chunkedReader struct {
	br   *bufio.Reader
	left int64 // of the current chunk
	done bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.left == 0 {
		if c.done {
			return 0, io.EOF
		}
		line, err := readLine(c.br)
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(line, ";") // chunk extensions are ignored
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("a malformed chunk size %q", line)
		}
		if n == 0 {
			for { // the trailer, up to its blank line
				if line, err = readLine(c.br); err != nil {
					return 0, err
				}
				if line == "" {
					c.done = true
					return 0, io.EOF
				}
			}
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	if c.left == 0 && err == nil {
		if line, lerr := readLine(c.br); lerr != nil || line != "" {
			return n, errors.New("a chunk without its CRLF")
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
