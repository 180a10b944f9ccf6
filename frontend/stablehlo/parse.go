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
	t, err := parse(file, src, false)
	if err != nil {
		return nil, err
	}
	return t.Module, nil
}

func parse(file string, src []byte, tests bool) (t *Tests, err error) {
	start := ir.Pos{File: file, Line: 1, Col: 1}
	if len(src) > MaxSource {
		return nil, ir.Errorf(start, "the file is %d bytes, more than the %d a .mlir file may have", len(src), MaxSource)
	}
	if !utf8.Valid(src) {
		return nil, ir.Errorf(start, "the file is not UTF-8 text")
	}
	s := newScanner(file, string(src))
	s.tests = tests
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(syntaxPanic)
			if !ok {
				panic(r)
			}
			t, err = nil, p.err
		}
	}()
	fns := s.module()
	if len(fns) == 0 {
		return nil, ir.Errorf(start, "no functions")
	}
	t = build(s, fns)
	s.numReplicas(t.Module)
	if err := ir.Verify(t.Module); err != nil {
		var e *ir.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, err
	}
	return t, nil
}

// numReplicas reads the module's mhlo.num_replicas into m's replica count,
// which the verifier then checks the collectives' groups against.
func (s *scanner) numReplicas(m *ir.Module) {
	a := s.replicas
	if a == nil {
		return
	}
	n := a.int(s, "mhlo.num_replicas")
	if n < 1 {
		s.failf(a.pos, "mhlo.num_replicas = %d: a module has at least 1 replica", n)
	}
	if n > 1 {
		m.Replicas, m.ReplicasPos = n, a.pos
	}
}
