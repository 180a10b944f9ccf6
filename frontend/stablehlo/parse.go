package stablehlo

import (
	"errors"
	"unicode/utf8"

	"github.com/tpucc/tpucc/ir"
)

// Parse reads StableHLO MLIR text into a verified module. The entry is the
// public function @main when there is one. Errors are *ir.Error at the
// offending text.
func Parse(file string, src []byte) (m *ir.Module, err error) {
	start := ir.Pos{File: file, Line: 1, Col: 1}
	if len(src) > MaxSource {
		return nil, ir.Errorf(start, "the file is %d bytes, more than the %d a .mlir file may have", len(src), MaxSource)
	}
	if !utf8.Valid(src) {
		return nil, ir.Errorf(start, "the file is not UTF-8 text")
	}
	s := newScanner(file, string(src))
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(syntaxPanic)
			if !ok {
				panic(r)
			}
			m, err = nil, p.err
		}
	}()
	fns := s.module()
	if len(fns) == 0 {
		return nil, ir.Errorf(start, "no functions")
	}
	m = build(s, fns)
	if err := ir.Verify(m); err != nil {
		var e *ir.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, err
	}
	return m, nil
}
