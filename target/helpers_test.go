package target_test

import (
	"github.com/tpucc/tpucc/target"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// parseType parses a .tir type, layout included, as the parameter of a function.
func parseType(t *testing.T, s string) ir.Type {
	t.Helper()
	m := parse(t, "func @f(%x: "+s+") -> "+s+" {\n  return %x\n}\n")
	return m.Funcs[0].Params[0].Type
}

// parseLayout parses a layout by parsing a type of the layout's rank that carries it.
func parseLayout(t *testing.T, layout string) *ir.Layout {
	t.Helper()
	rank := 0
	for _, c := range layout {
		if c == ':' || c == '}' {
			break
		}
		if c >= '0' && c <= '9' {
			rank++
		}
	}
	dims := ""
	for i := 0; i < rank; i++ {
		if i > 0 {
			dims += ","
		}
		dims += "1"
	}
	return parseType(t, "f32["+dims+"]"+layout).Layout
}

// parse parses a verified module.
func parse(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return m
}

var refCPU = target.ReferenceCPU
