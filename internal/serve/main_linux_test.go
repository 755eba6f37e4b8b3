package serve

import (
	"os"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
)

func TestMain(m *testing.M) {
	native.MaybeInit() // the native backend re-executes the test binary as the container's init
	os.Exit(m.Run())
}
