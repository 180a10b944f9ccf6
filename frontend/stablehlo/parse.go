package stablehlo

import (
	"errors"
	"unicode/utf8"

	"github.com/tpucc/tpucc/ir"
)

// Parse reads StableHLO MLIR text into a verified module. The entry is the
// public function @main when there is one. Errors are *ir.Error at the
// offending text.
func Parse(file string, src []byte) (*ir.Module, error) {
	m, _, err := parse(file, src, false)
	return m, err
}

func parse(file string, src []byte, tests bool) (m *ir.Module, checks map[string][]Check, err error) {
	start := ir.Pos{File: file, Line: 1, Col: 1}
	if len(src) > MaxSource {
		return nil, nil, ir.Errorf(start, "the file is %d bytes, more than the %d a .mlir file may have", len(src), MaxSource)
	}
	if !utf8.Valid(src) {
		return nil, nil, ir.Errorf(start, "the file is not UTF-8 text")
	}
	s := newScanner(file, string(src))
	s.tests = tests
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(syntaxPanic)
			if !ok {
				panic(r)
			}
			m, checks, err = nil, nil, p.err
		}
	}()
	fns := s.module()
	if len(fns) == 0 {
		return nil, nil, ir.Errorf(start, "no functions")
	}
	m, checks = build(s, fns)
	if err := ir.Verify(m); err != nil {
		var e *ir.Error
		if errors.As(err, &e) {
			return nil, nil, e
		}
		return nil, nil, err
	}
	return m, checks, nil
}
