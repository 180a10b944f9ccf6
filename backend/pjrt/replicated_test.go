package pjrt

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// replicaSrc exchanges values between four replicas: a sum and a gather
// over all of them, a permute around the ring, each replica's id, and a
// max, a reduce-scatter and an all-to-all within pairs given out of order
// (the group's order decides which part each replica gets).
const replicaSrc = `func @f(%x: f32[2,3]) -> (f32[2,3], f32[8,3], f32[2,3], u32[], f32[2,3], f32[1,3], f32[2,3]) {
  %s = all_reduce %x {kind=sum, groups=[[0,1,2,3]]} : f32[2,3]
  %g = all_gather %x {dim=0, groups=[[0,1,2,3]]} : f32[8,3]
  %p = collective_permute %x {pairs=[[0,1],[1,2],[2,3],[3,0]]} : f32[2,3]
  %i = replica_id : u32[]
  %m = all_reduce %x {kind=max, groups=[[0,2],[3,1]]} : f32[2,3]
  %r = reduce_scatter %x {kind=sum, dim=0, groups=[[1,0],[2,3]]} : f32[1,3]
  %a = all_to_all %x {split_dim=0, concat_dim=0, split_count=2, groups=[[3,0],[1,2]]} : f32[2,3]
  return %s, %g, %p, %i, %m, %r, %a
}
`

// TestReplicated: a program of four replicas (mhlo.num_replicas = 4) runs
// on four XLA:CPU devices, each replica with its own argument, and every
// replica's results are those of the reference executor's 4 × 1 process
// grid (cpu.RunGrid), exactly: the inputs are small integers, so the sum's
// order does not matter.
func TestReplicated(t *testing.T) {
	m, f, text, c := onFourDevices(t, replicaSrc)
	text = strings.Replace(text, "mhlo.num_replicas = 1", "mhlo.num_replicas = 4", 1)
	exe, err := c.CompileReplicated(text, 4, []ir.Type{f.Params[0].Type}, f.Results)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	defer exe.Close()
	fs := make([][]*ir.Func, 4)
	host := make([][][]*backend.Buffer, 4)
	dev := make([][]*Buffer, 4)
	for r := range 4 {
		x := backend.New(f.Params[0].Type)
		for j := range 6 {
			x.SetFloat64(j, float64(10*r+j))
		}
		fs[r], host[r] = []*ir.Func{f}, [][]*backend.Buffer{{x}}
		b, err := c.FromHostOn(r, x.Type(), x.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		dev[r] = []*Buffer{b}
	}
	outs, err := exe.Execute(dev)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpu.RunGrid(m, fs, host)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		for i, b := range outs[r] {
			data, err := b.ToHost()
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			if w := want[r][0][i].Bytes(); !slices.Equal(data, w) {
				got, _ := backend.View(b.Type(), data)
				t.Errorf("replica %d result %d: %s, the process grid gives %s", r, i, got, want[r][0][i])
			}
		}
	}
	if got := fmt.Sprint(want[2][0][3]); got != "u32[] 2" {
		t.Errorf("replica 2's replica_id is %s on the process grid", got)
	}
}

// TestReplicatedErrors: more replicas than devices, and arguments for
// another number of replicas, are errors, not a plugin abort.
func TestReplicatedErrors(t *testing.T) {
	_, f, text, c := onFourDevices(t, replicaSrc)
	text = strings.Replace(text, "mhlo.num_replicas = 1", "mhlo.num_replicas = 4", 1)
	if _, err := c.CompileReplicated(text, 5, []ir.Type{f.Params[0].Type}, f.Results); err == nil ||
		err.Error() != "pjrt: 5 replicas need as many devices, the client has 4 (the XLA:CPU plugin takes cpu_device_count=5)" {
		t.Errorf("5 replicas on 4 devices: %v", err)
	}
	exe, err := c.CompileReplicated(text, 4, []ir.Type{f.Params[0].Type}, f.Results)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	if _, err := exe.Execute(make([][]*Buffer, 2)); err == nil || err.Error() != "pjrt: arguments for 2 replicas, the program runs 4" {
		t.Errorf("2 replicas' arguments: %v", err)
	}
	if _, err := exe.Execute(make([][]*Buffer, 4)); err == nil || err.Error() != "pjrt: device 0 has 0 arguments, the program takes 1" {
		t.Errorf("no arguments: %v", err)
	}
}
