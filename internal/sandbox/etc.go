package sandbox

import "fmt"

// GuestUID and GuestGID are the ids every guest runs as: natively inside
// its user namespace, and as the WASI build answers os.getuid and stat.
const (
	GuestUID = 1000
	GuestGID = 1000
)

// EtcFiles returns the guest's generated /etc, by path beneath it: no
// host configuration reaches a guest. The native sandbox writes them
// into its skeleton root; the wazero backend mounts the same files,
// read-only, so that a script reading /etc/passwd or /etc/hosts sees the
// same bytes on both.
func EtcFiles() map[string]string {
	return map[string]string{
		"passwd": fmt.Sprintf("root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"+
			"sandbox:x:%d:%d:sandbox:/workspace:/usr/sbin/nologin\n"+
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", GuestUID, GuestGID),
		"group":         fmt.Sprintf("root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n", GuestGID),
		"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
		"hostname":      "sandbox\n",
		"nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
		"resolv.conf":   "",
		// Debian's /usr/lib/python3.11/sitecustomize.py links here (its file
		// installs the host's apport hook): the guest has no site
		// customisation, and the link resolves.
		"python3.11/sitecustomize.py": "# apysup: the guest has no site customisation.\n",
	}
}
