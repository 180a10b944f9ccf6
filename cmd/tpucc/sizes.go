package main

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// checkSizes refuses a program with a value whose element count or size in bytes does
// not fit in an int64. Such a type parses and verifies (a dimension is an int64), but no
// runtime can hold it and XLA refuses it, so build says so at the value instead of
// writing a module that cannot be compiled or a cost report that cannot be made.
// Every such value is reported, parameters first, then results in program order.
func checkSizes(m *ir.Module) error {
	var errs []*ir.Error
	for _, f := range m.Funcs {
		names := ir.ValueNames(f)
		check := func(v *ir.Value) {
			if msg := sizeProblem(v.Type); msg != "" {
				errs = append(errs, ir.Errorf(v.Pos, "%%%s: %s", names[v], msg))
			}
		}
		for _, p := range f.Params {
			check(p)
		}
		f.Body.Walk(func(in *ir.Instr) {
			for _, r := range in.Regions {
				for _, p := range r.Params {
					check(p)
				}
			}
			for _, r := range in.Results {
				check(r)
			}
		})
	}
	if len(errs) == 0 {
		return nil
	}
	return &ir.ErrorList{Errs: errs}
}

// sizeProblem says what overflows in a static type t, or "" when nothing does.
func sizeProblem(t ir.Type) string {
	if !t.IsStatic() {
		return ""
	}
	n := uint64(1)
	for _, d := range t.Dims() {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return "the element count of " + t.String() + " overflows int64"
		}
		n = lo
	}
	size := uint64(t.DType.Size())
	if hi, lo := bits.Mul64(n, size); hi != 0 || lo > math.MaxInt64 {
		return "the size in bytes of " + t.String() + " (" + itoa(n) + " elements of " + itoa(size) + " bytes) overflows int64"
	}
	return ""
}

// paddedSizes refuses, for --report, a value of f whose size padded to t's tiles
// overflows int64 though its dense size does not: the cost model cannot count it.
func paddedSizes(f *ir.Func, t *target.Target) error {
	names := ir.ValueNames(f)
	var first *ir.Error
	check := func(v *ir.Value) {
		if first == nil && v.Type.IsStatic() && t.Bytes(v.Type) < 0 {
			first = ir.Errorf(v.Pos, "%%%s: the size in bytes of %s on %s, padded to its tiles, overflows int64", names[v], v.Type, t.Name())
		}
	}
	for _, p := range f.Params {
		check(p)
	}
	f.Body.Walk(func(in *ir.Instr) {
		for _, r := range in.Results {
			check(r)
		}
	})
	if first == nil {
		return nil
	}
	return first
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
