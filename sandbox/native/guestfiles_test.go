package native

import (
	"io/fs"
	"os"
)

// guestFiles are the guest files the tests mount at /opt/apysup.
func guestFiles() fs.FS { return os.DirFS("testdata/guest") }
