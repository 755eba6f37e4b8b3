package report

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// TerminalSafe escapes what a terminal would act on rather than show:
// control characters (C0, DEL, C1), format characters such as bidi
// overrides, every other non-printing rune and invalid UTF-8. The escapes
// are JSON's \uXXXX, so a JSON preview still reads as the same JSON.
func TerminalSafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// GuestLines makes guest text safe for a terminal line by line, keeping
// its newlines and tabs.
func GuestLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = TerminalSafe(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// ShortDigest keeps "sha256:" and 12 hex digits: enough to tell receipts apart on screen.
func ShortDigest(d string) string {
	if len(d) > 19 {
		return d[:19] + "…"
	}
	return d
}

// Truncate cuts s to n bytes, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// GoPackages are the Go packages whose names prefix their errors.
const GoPackages = `native|wazero|supervisor|sandbox|broker|handlers|rpc|plan|doctor|seccomp|libcontainer|canonjson|python|wasi|journal`

// UserMessage is an error message as a user reads it: without the Go
// package names (GoPackages) that prefix it for the programmer, at the
// start of a line or of a wrapped part ("native: refused (invalid_job):
// ..."). It does without regexp, which initialises too late for package
// earlyclient (a test compares it with the expression).
func UserMessage(s string) string {
	for {
		t := stripGoPrefixes(s)
		if t == s {
			return s
		}
		s = t
	}
}

// goPackageNames is GoPackages as a list.
var goPackageNames = strings.Split(GoPackages, "|")

// stripGoPrefixes removes, left to right, each "PKG: " that starts a line
// or follows ": ".
func stripGoPrefixes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i == 0 || s[i-1] == '\n' {
			if n := goPrefixLen(s[i:]); n > 0 {
				i += n
				continue
			}
		}
		if strings.HasPrefix(s[i:], ": ") {
			if n := goPrefixLen(s[i+2:]); n > 0 {
				b.WriteString(": ")
				i += 2 + n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// goPrefixLen is the length of the "PKG: " s starts with, or 0.
func goPrefixLen(s string) int {
	for _, name := range goPackageNames {
		if len(s) > len(name)+1 && s[:len(name)] == name && s[len(name)] == ':' && s[len(name)+1] == ' ' {
			return len(name) + 2
		}
	}
	return 0
}

// IsTerminal reports whether v is an *os.File on a terminal. It goes
// through SyscallConn so that the file keeps its non-blocking mode (Fd
// would make a pending Read impossible to interrupt with Close).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno = syscall.ENOTTY
	if raw.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	}) != nil {
		return false
	}
	return errno == 0
}
