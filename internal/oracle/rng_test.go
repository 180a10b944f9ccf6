package oracle

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
)

// TestRngBitGeneratorXLA: the rng_bit_generator goldens (every algorithm,
// widths 8 to 64, both split-axis parities, two- and three-word states)
// give XLA:CPU's bits and new states exactly: once on cpu.RandomInputs and
// once on states whose counters wrap (into philox's high word, and the
// high word itself). The llvm backend generates every one of them and
// gives the same words (the reference's, which are XLA:CPU's).
func TestRngBitGeneratorXLA(t *testing.T) {
	h := harness(t)
	all, _ := goldenChecks(t)
	var checks []*check
	for _, c := range all {
		if !strings.Contains(c.name, "rng_bit_generator") {
			continue
		}
		c.exact = make([]bool, len(c.m.Entry().Results))
		for i := range c.exact {
			c.exact[i] = true
		}
		checks = append(checks, c)
		wrap := *c
		wrap.name += " (wrapping counters)"
		wrap.key += "_wrap"
		wrap.about = "states {7, 2^64-2} and {7, 2^64-2, 2^64-1}"
		wrap.inputs = nil
		for _, p := range c.m.Entry().Params {
			st := backend.New(p.Type)
			for i, v := range []uint64{7, 1<<64 - 2, 1<<64 - 1}[:st.Len()] {
				binary.LittleEndian.PutUint64(st.Bytes()[8*i:], v)
			}
			wrap.inputs = append(wrap.inputs, st)
		}
		checks = append(checks, &wrap)
	}
	if len(checks) < 4 {
		t.Fatalf("want the rng_bit_generator goldens (parse and lower), found %d checks", len(checks))
	}
	if failed := runAll(t, h, checks); failed > 0 {
		t.Errorf("%d of %d checks differ from XLA:CPU", failed, len(checks))
	}
	b, err := backend.Lookup("llvm")
	if err != nil {
		t.Fatalf("the llvm backend: %v", err)
	}
	for _, c := range checks {
		if msgs := llvmAgrees(b, c, "rng_bit_generator"); msgs != nil {
			t.Errorf("%s on llvm: %s", c.name, strings.Join(msgs, "\n  "))
		}
	}
}
