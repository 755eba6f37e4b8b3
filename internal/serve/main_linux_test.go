package serve

import (
	"os"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit() // the native backend re-executes the test binary as the container's init
	os.Exit(m.Run())
}
