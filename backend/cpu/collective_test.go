package cpu

import (
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

const gridProgram = `func @f(%x: f32[4]) -> (f32[4], f32[8], f32[2], u32[], u32[]) {
  %s = all_reduce %x {kind=sum, groups=[[1, 0]]}
  %g = all_gather %x {dim=0, groups=[[1, 0]]} : f32[8]
  %r = reduce_scatter %x {kind=max, dim=0, groups=[[0, 1]]} : f32[2]
  %ri = replica_id : u32[]
  %pi = partition_id : u32[]
  return %s, %g, %r, %ri, %pi
}`

func gridModule(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := tir.Parse("grid.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func f32s(vs ...float64) *backend.Buffer {
	b := backend.New(ir.Tensor(ir.F32, int64(len(vs))))
	b.WriteFloat64s(0, vs)
	return b
}

func values(b *backend.Buffer) []float64 {
	out := make([]float64, b.Len())
	b.ReadFloat64s(0, out)
	return out
}

// TestGridCollectives: two replicas sum, gather and reduce-scatter in the
// order of their group ([1, 0]: replica 1's operand first), and each
// reads its own replica id.
func TestGridCollectives(t *testing.T) {
	m := gridModule(t, gridProgram)
	f := m.Func("f")
	args := [][][]*backend.Buffer{{{f32s(1, 2, 3, 4)}}, {{f32s(10, 20, 30, 40)}}}
	res, err := RunGrid(m, [][]*ir.Func{{f}, {f}}, args)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range [][]float64{{10, 20}, {30, 40}} {
		got := res[r][0]
		if v := values(got[0]); !slices.Equal(v, []float64{11, 22, 33, 44}) {
			t.Errorf("replica %d all_reduce: %v", r, v)
		}
		if v := values(got[1]); !slices.Equal(v, []float64{10, 20, 30, 40, 1, 2, 3, 4}) {
			t.Errorf("replica %d all_gather: %v", r, v)
		}
		if v := values(got[2]); !slices.Equal(v, want) {
			t.Errorf("replica %d reduce_scatter: %v, want %v", r, v, want)
		}
		ids := make([]int64, 1)
		got[3].ReadInt64s(0, ids)
		if ids[0] != int64(r) {
			t.Errorf("replica %d reads replica_id %d", r, ids[0])
		}
	}
}

// TestGridErrors: a group naming a process beyond the grid, and a process
// that ends without reaching a collective its group waits in, are errors
// naming the process, never a hang.
func TestGridErrors(t *testing.T) {
	m := gridModule(t, `func @f(%x: f32[2]) -> f32[2] {
  %s = all_reduce %x {kind=sum, groups=[[0, 1, 2]]}
  return %s
}
func @g(%x: f32[2]) -> f32[2] {
  return %x
}`)
	f, g := m.Func("f"), m.Func("g")
	one := func() [][]*backend.Buffer { return [][]*backend.Buffer{{f32s(1, 2)}} }
	_, err := RunGrid(m, [][]*ir.Func{{f}, {f}}, [][][]*backend.Buffer{one(), one()})
	want := "grid.tir:2:3: error: all_reduce's replica groups name 2, but the grid of 2 replicas × 1 partitions has 2 replicas"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
	// A ragged grid is refused before any process starts.
	_, err = RunGrid(m, [][]*ir.Func{{f, f}, {f}}, [][][]*backend.Buffer{{one()[0], one()[0]}, one()})
	want = "cpu.RunGrid: replica 1 has 1 programs and 1 argument lists, want 2"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	m2 := gridModule(t, `func @f(%x: f32[2]) -> f32[2] {
  %s = all_reduce %x {kind=sum, groups=[[0, 1]]}
  return %s
}
func @g(%x: f32[2]) -> f32[2] {
  return %x
}`)
	f, g = m2.Func("f"), m2.Func("g")
	_, err = RunGrid(m2, [][]*ir.Func{{f}, {g}}, [][][]*backend.Buffer{one(), one()})
	want = "process (replica 0, partition 0): grid.tir:2:3: error: process (replica 1, partition 0) ended without reaching this all_reduce"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// Two programs whose collectives never meet: the first's group is
	// [0, 1], the second's [1, 0], so their slots differ and each waits
	// for the other.
	m3 := gridModule(t, `func @f(%x: f32[2]) -> f32[2] {
  %s = all_reduce %x {kind=sum, groups=[[0, 1]]}
  return %s
}
func @g(%x: f32[2]) -> f32[2] {
  %s = all_reduce %x {kind=sum, groups=[[1, 0]]}
  return %s
}`)
	_, err = RunGrid(m3, [][]*ir.Func{{m3.Func("f")}, {m3.Func("g")}}, [][][]*backend.Buffer{one(), one()})
	want = "process (replica 0, partition 0): grid.tir:2:3: error: every running process waits in a collective that a process of its group does not reach (all_reduce: sequence 1)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want the deadlock named", err)
	}
}

// TestCollectiveAlone: a program run alone is the 1 × 1 grid: a
// collective over process 0 is the identity, replica_id is 0, and a group
// naming another process is refused.
func TestCollectiveAlone(t *testing.T) {
	m := gridModule(t, `func @f(%x: f32[2]) -> (f32[2], u32[]) {
  %s = all_reduce %x {kind=sum, groups=[[0]]}
  %r = replica_id : u32[]
  return %s, %r
}
func @g(%x: f32[2]) -> f32[2] {
  %p = collective_permute %x {pairs=[[0, 1]]}
  return %p
}`)
	res, err := Run(m, m.Func("f"), []*backend.Buffer{f32s(3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if v := values(res[0]); !slices.Equal(v, []float64{3, 4}) {
		t.Errorf("all_reduce alone: %v", v)
	}
	_, err = Run(m, m.Func("g"), []*backend.Buffer{f32s(3, 4)})
	want := "grid.tir:7:3: error: collective_permute's pair [0 1] names a process beyond the grid's 1 replicas"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
