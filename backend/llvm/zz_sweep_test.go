package llvm

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

func TestZZSweepControl(t *testing.T) {
	b := testBackend(t)
	n := 0
	for seed := int64(0); seed < 300; seed++ {
		m := progen.Generate(seed, progen.Config{})
		found := false
		for _, f := range m.Funcs {
			f.Body.Walk(func(in *ir.Instr) { found = found || ir.IsControl(in.Op) })
		}
		if !found {
			continue
		}
		n++
		exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			for s := int64(0); s < 3; s++ {
				differential(t, b, exe.Module, exe.Entry, seed*10+s)
			}
		})
	}
	t.Logf("%d programs with control flow", n)
}
