package wasi

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// headerDefines is every `#define NAME number` of a header of the WASI
// build (decimal, octal with a leading 0, hex, negative).
func headerDefines(t *testing.T, path string) map[string]int64 {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defines := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^#define (\w+) (-?(?:0x[0-9a-fA-F]+|[0-9]+))\s*(?:/\*.*)?$`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, m[1], err)
		}
		defines[m[1]] = v
	}
	return defines
}

// TestTermiosHeaderIsTheNativeModules: termios/termios.h defines every
// name the native guest's termios module has, with its number, and no
// other (CPython's termios.c exports a name when its macro exists).
func TestTermiosHeaderIsTheNativeModules(t *testing.T) {
	var native map[string]int64
	askNativeGuest(t, `
import json, termios
print(json.dumps({n: getattr(termios, n) for n in dir(termios) if n.isupper()}))
`, &native)
	defines := headerDefines(t, "termios/termios.h")
	for name, want := range native {
		if got, ok := defines[name]; !ok || got != want {
			t.Errorf("termios.h: %s = %d (defined: %v), the native module's %d", name, got, ok, want)
		}
	}
	for name := range defines {
		if _, ok := native[name]; !ok {
			t.Errorf("termios.h defines %s, which the native module has not", name)
		}
	}
}

// TestNetdbHeaderIsTheNativeModules: the resolver's and the socket
// module's numbers that include/netdb.h defines are the native guest's
// socket module's, and every AI_, NI_ and EAI_ name it has is there.
func TestNetdbHeaderIsTheNativeModules(t *testing.T) {
	var native map[string]int64
	askNativeGuest(t, `
import json, socket
print(json.dumps({n: int(getattr(socket, n)) for n in dir(socket) if n.isupper() and isinstance(getattr(socket, n), int)}))
`, &native)
	defines := headerDefines(t, "include/netdb.h")
	// Names the socket module does not export: glibc's h_errno codes.
	// (The PF_ aliases are defined by name, not number: not read.)
	internal := map[string]bool{"HOST_NOT_FOUND": true, "TRY_AGAIN": true, "NO_RECOVERY": true, "NO_DATA": true}
	for name, got := range defines {
		if internal[name] {
			continue
		}
		if want, ok := native[name]; !ok || got != want {
			t.Errorf("netdb.h: %s = %d, the native module's %d (has it: %v)", name, got, want, ok)
		}
	}
	for name := range native {
		for _, prefix := range []string{"AI_", "NI_", "EAI_", "SOCK_", "MSG_", "SHUT_"} {
			if len(name) > len(prefix) && name[:len(prefix)] == prefix {
				if _, ok := defines[name]; !ok {
					t.Errorf("netdb.h lacks %s, which the native module has", name)
				}
			}
		}
	}
}

// TestSyslogHeaderIsTheNativeModules: include/syslog.h defines every
// number the native guest's syslog module has, with its value (CPython's
// syslogmodule.c exports LOG_ names from the header), and its other
// numbers are glibc's masks and the one facility the module leaves out.
func TestSyslogHeaderIsTheNativeModules(t *testing.T) {
	var native map[string]int64
	askNativeGuest(t, `
import json, syslog
print(json.dumps({n: getattr(syslog, n) for n in dir(syslog) if n.startswith("LOG_") and isinstance(getattr(syslog, n), int)}))
`, &native)
	defines := headerDefines(t, "include/syslog.h")
	for name, want := range native {
		if got, ok := defines[name]; !ok || got != want {
			t.Errorf("syslog.h: %s = %d (defined: %v), the native module's %d", name, got, ok, want)
		}
	}
	notExported := map[string]int64{"LOG_PRIMASK": 0x07, "LOG_FACMASK": 0x03f8, "LOG_NFACILITIES": 24, "LOG_FTP": 11 << 3}
	for name, got := range defines {
		if _, ok := native[name]; ok {
			continue
		}
		if want, ok := notExported[name]; !ok || got != want {
			t.Errorf("syslog.h: %s = %d, which the native module has not (glibc's: %d, known: %v)", name, got, want, ok)
		}
	}
}
