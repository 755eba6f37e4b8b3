package supervisor

import (
	"os"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit()
	os.Exit(m.Run())
}
