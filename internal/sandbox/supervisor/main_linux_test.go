package supervisor

import (
	"os"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
)

func TestMain(m *testing.M) {
	native.MaybeInit()
	os.Exit(m.Run())
}
