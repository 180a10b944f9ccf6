package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// dimFlag is --dim, shared by build and run.
var dimFlag = flagSpec{name: "dim", kind: listFlag, arg: "NAME=SIZE",
	doc: "give the symbolic dimension NAME (as in f32[NAME,1024]) the size SIZE; may be repeated"}

// dimSize is one --dim NAME=SIZE, or a size that run read off an input's shape.
type dimSize struct {
	name string
	size int64
}

// parseDims checks every --dim and returns them in command-line order.
func parseDims(list []string) ([]dimSize, error) {
	var dims []dimSize
	for _, d := range list {
		name, size, ok := strings.Cut(d, "=")
		if !ok || !isSymbol(name) {
			return nil, usagef("--dim %s: want NAME=SIZE, NAME a dimension symbol such as B", d)
		}
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 0 {
			return nil, usagef("--dim %s: the size must be a non-negative integer", d)
		}
		if slices.ContainsFunc(dims, func(x dimSize) bool { return x.name == name }) {
			return nil, usagef("--dim %s: %s is given twice", d, name)
		}
		dims = append(dims, dimSize{name, n})
	}
	return dims, nil
}

// readInputs reads run's --input files, one per parameter of f (given[k] and
// arrays[k] are nil for a parameter to be drawn), and gives the symbolic dimensions
// of m their sizes from dims and from the files' shapes (inputDims).
func readInputs(m *ir.Module, f *ir.Func, file string, ins []inputArg, dims []dimSize) (given []*inputArg, arrays []*backend.Buffer, err error) {
	given = make([]*inputArg, len(f.Params))
	for i := range ins {
		k := paramIndex(f, ins[i].name)
		if k < 0 {
			return nil, nil, usagef("--input %s: @%s has no parameter %%%s (%s)", ins[i].name, f.Name, ins[i].name, paramList(f))
		}
		given[k] = &ins[i]
	}
	arrays = make([]*backend.Buffer, len(f.Params))
	for k, in := range given {
		if in != nil {
			if arrays[k], err = readNPY(in.file); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := replicaAxes(m, f, given, arrays); err != nil {
		return nil, nil, err
	}
	if dims, err = inputDims(f, file, dims, given, arrays); err != nil {
		return nil, nil, err
	}
	if len(dims) > 0 {
		if err := bindDims(m, file, dims); err != nil {
			return nil, nil, err
		}
	}
	return given, arrays, nil
}

// sizeSource is where run learnt a symbol's size: a --dim, or an input file.
type sizeSource struct {
	size  int64
	param string // the parameter whose input gave it; "" for --dim
	file  string
	typ   string // the file's array type, as f32[3,4]
}

func (s sizeSource) String() string {
	if s.param == "" {
		return fmt.Sprintf("--dim gives it %d", s.size)
	}
	return fmt.Sprintf("input %%%s (%s, %s) gives it %d", s.param, s.file, s.typ, s.size)
}

// inputDims gives the symbols of f's parameters their sizes for run: from --dim, and
// from the shape of each input file (arrays[k] is parameter k's, nil when drawn at
// random). Two sources that disagree, an input of the wrong rank, and a symbol of a
// parameter that nothing gives a size (a drawn parameter needs --dim) are errors
// naming the symbol and the parameter. The result holds every size, --dim's first.
func inputDims(f *ir.Func, file string, dims []dimSize, given []*inputArg, arrays []*backend.Buffer) ([]dimSize, error) {
	sizes := map[string]sizeSource{}
	out := slices.Clone(dims)
	for _, d := range dims {
		sizes[d.name] = sizeSource{size: d.size}
	}
	for k, p := range f.Params {
		a := arrays[k]
		if a == nil {
			continue
		}
		shape := a.Type().Dims()
		if len(shape) != p.Type.Rank() {
			return nil, fileErrorf(given[k].file, "input %%%s wants %s, file has %s", p.Name, p.Type, a.Type())
		}
		for i, d := range p.Type.Shape {
			if !d.Symbolic() {
				continue
			}
			src := sizeSource{size: shape[i], param: p.Name, file: given[k].file, typ: a.Type().String()}
			if old, ok := sizes[d.Sym]; !ok {
				sizes[d.Sym] = src
				out = append(out, dimSize{d.Sym, src.size})
			} else if old.size != src.size {
				return nil, fileErrorf(src.file, "dimension %s of %%%s (%s) has two sizes: %s, and %s",
					d.Sym, p.Name, p.Type, old, src)
			}
		}
	}
	// Only a drawn parameter can be left with a symbol: an input's shape gives them all.
	for _, p := range f.Params {
		for _, d := range p.Type.Shape {
			if _, ok := sizes[d.Sym]; d.Symbolic() && !ok {
				return nil, diag(file, ir.Errorf(p.Pos, "run needs a size for dimension %s of %%%s (%s): give --dim %s=SIZE or --input %s=FILE.npy",
					d.Sym, p.Name, p.Type, d.Sym, p.Name))
			}
		}
	}
	return out, nil
}
