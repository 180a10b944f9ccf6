package tpucompile

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// hasControl reports whether a source parses to a program with a while or a
// case anywhere.
func hasControl(s source) bool {
	m, err := tir.Parse(s.id, []byte(s.text))
	if err != nil {
		return false
	}
	found := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) { found = found || ir.IsControl(in.Op) })
	}
	return found
}

// TestCompileLoopsForTPU: XLA:TPU (compile-only, v5e and v6e) compiles every
// golden program with a while or a case (data-dependent trip counts, nested
// regions, loops over stacked weights), after the tpu-v6e pipeline. It is
// the loop programs' part of TestCompileForTPU, small enough to run alone.
func TestCompileLoopsForTPU(t *testing.T) {
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("TPU compile-only checks are part of the test suite: %v", err)
	}
	var mods []xlacheck.TPUModule
	for _, s := range sources(t, h.Root) {
		if !s.golden || !hasControl(s) {
			continue
		}
		hlo, stage, err := lower(s)
		if err != nil {
			t.Errorf("%s: %s: %v", s.id, stage, err)
			continue
		}
		mods = append(mods, xlacheck.TPUModule{ID: s.id, Text: hlo})
	}
	if len(mods) < 5 {
		t.Fatalf("found %d golden loop programs, want at least 5", len(mods))
	}
	topos := xlacheck.DefaultTPUTopologies
	rs, err := h.CompileTPU(mods, topos)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(mods)*len(topos) {
		t.Fatalf("%d results for %d modules on %d topologies", len(rs), len(mods), len(topos))
	}
	for k, r := range rs {
		m := mods[k/len(topos)]
		if !r.OK {
			t.Errorf("%s on %s (%s): %s\n%s", m.ID, r.Topology, r.DeviceKind, r.Error, m.Text)
		}
	}
	var ids []string
	for _, m := range mods {
		ids = append(ids, m.ID)
	}
	t.Logf("compiled for %s: %s", strings.Join(topos, ", "), strings.Join(ids, ", "))
}
