package native

import (
	"io/fs"

	"github.com/apysup/apysup/python"
)

// guestFiles are the real guest files (runner and agent_runtime modules).
func guestFiles() fs.FS { return python.GuestFiles }
