package tpucompile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/frontend/tir"
)

// moduleRoot is the directory holding go.mod, above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// pjrtTopologies are the topologies the Go path compiles for: the same as
// the Python path's.
var pjrtTopologies = []string{"v5e:2x2", "v6e:2x2"}

// TestCompileForTPUThroughPJRT is TestCompileForTPU through tpucc's own PJRT
// client (backend/pjrt on libtpu) instead of JAX: every module that gets to
// StableHLO compiles and serializes for each topology. Compiles run two at a
// time, one per topology.
func TestCompileForTPUThroughPJRT(t *testing.T) {
	path, err := pjrt.Find(pjrt.KindTPU)
	if err != nil {
		t.Fatalf("TPU compile-only checks are part of the test suite: %v", err)
	}
	p, err := pjrt.LoadForCompile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mods []lowered
	for _, s := range sources(t, moduleRoot(t)) {
		if hlo, _, err := lower(s); err == nil {
			mods = append(mods, lowered{s, hlo})
		} else if !s.golden {
			t.Errorf("%s: %v", s.id, err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, name := range pjrtTopologies {
		wg.Go(func() { compileAll(t, p, name, mods) })
	}
	wg.Wait()
	t.Logf("%d modules x %d topologies compiled and serialized in %.1fs", len(mods), len(pjrtTopologies), time.Since(start).Seconds())
	if live := p.Live(); live != 0 {
		t.Errorf("%d PJRT handles left open", live)
	}
}

// compileAll compiles every module for one topology, reporting each failure.
func compileAll(t *testing.T, p *pjrt.Plugin, name string, mods []lowered) {
	topo, err := p.Topology(name)
	if err != nil {
		t.Error(err)
		return
	}
	defer topo.Close()
	var failed []string
	for _, m := range mods {
		if err := compileOne(topo, m); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %s: %v\n--- StableHLO ---\n%s", m.id, name, err, m.hlo))
		}
	}
	t.Logf("%s: %d/%d modules compiled", name, len(mods)-len(failed), len(mods))
	if len(failed) > 0 {
		t.Errorf("XLA:TPU (through backend/pjrt) rejects %d modules:\n%s", len(failed), strings.Join(failed, "\n"))
	}
}

// compileOne compiles m for topo: a program split over a mesh of several
// devices for every chip (its mesh must have the topology's chip count), any
// other for one.
func compileOne(topo *pjrt.Topology, m lowered) error {
	mod, err := tir.Parse(m.id, []byte(m.text))
	if err != nil {
		return err
	}
	var exe *pjrt.Executable
	if len(mod.Meshes) > 0 && mod.Meshes[0].Devices() > 1 {
		exe, _, err = topo.CompileSharded(m.hlo, mod.Meshes[0])
	} else {
		exe, err = topo.Compile(m.hlo, pjrt.DefaultCompileOptions)
	}
	if err != nil {
		return err
	}
	defer exe.Close()
	blob, err := exe.Serialize()
	if err == nil && len(blob) == 0 {
		err = fmt.Errorf("empty serialized executable")
	}
	return err
}
