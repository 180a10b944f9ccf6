package trace

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func TestPackagePath(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/tpucc/tpucc/tensor.(*Tensor).Add":    "github.com/tpucc/tpucc/tensor",
		"github.com/tpucc/tpucc/tensor_test.TestX.func1": "github.com/tpucc/tpucc/tensor_test",
		"main.main": "main",
		"github.com/tpucc/tpucc/compile.Func[go.shape.func(*github.com/x/y.T) *z.T].func1": "github.com/tpucc/tpucc/compile",
		"github.com/tpucc/tpucc/engine.(*Cache).Get":                                       "github.com/tpucc/tpucc/engine",
		"runtime.goexit": "runtime",
	} {
		if got := packagePath(fn); got != want {
			t.Errorf("packagePath(%q) = %q, want %q", fn, got, want)
		}
	}
}

// Frames of this package are skipped, however many: from a test of package
// trace itself, 100 calls deep, CallerPos reaches the testing package.
func TestCallerPosSkipsLibrary(t *testing.T) {
	var deep func(n int) ir.Pos
	deep = func(n int) ir.Pos {
		if n == 0 {
			return CallerPos(0)
		}
		return deep(n - 1)
	}
	for _, n := range []int{0, 100} {
		if p := deep(n); !strings.HasSuffix(p.File, "testing.go") || !p.Known() {
			t.Errorf("depth %d: CallerPos inside package trace reported %s, want testing.go", n, p)
		}
	}
}
