package pjrt

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
)

// runShardedTIR runs src's entry on four XLA:CPU devices and on the
// reference executor with the same inputs, and returns both results.
// onFourDevices parses and lowers src and opens an XLA:CPU client of four
// devices, closed when the test ends.
func onFourDevices(t *testing.T, src string) (*ir.Module, *ir.Func, string, *Client) {
	t.Helper()
	m, err := tir.Parse("in.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text, err := stablehlo.Lower(m, stablehlo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := openCPU()
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.NewClient(Option{"cpu_device_count", int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return m, m.Entry(), text, c
}

func runShardedTIR(t *testing.T, src string) (got, want [][]float32) {
	t.Helper()
	m, f, text, c := onFourDevices(t, src)
	argS, resS := f.EntryShardings()
	params := make([]ir.Type, len(f.Params))
	for i, v := range f.Params {
		params[i] = v.Type
	}
	exe, err := c.CompileSharded(text, m.Meshes[0], params, f.Results, argS, resS)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	defer exe.Close()
	var dev []*ShardedBuffer
	var host []*backend.Buffer
	for i, pt := range params {
		n, _ := pt.NumElements()
		data := make([]byte, 4*n)
		for j := int64(0); j < n; j++ {
			v := float32(math.Sin(float64(j*7+int64(i)*3))) * 0.5
			binary.LittleEndian.PutUint32(data[4*j:], math.Float32bits(v))
		}
		b, err := c.FromHostSharded(pt, data, m.Meshes[0], exe.ArgSharding(i))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		dev = append(dev, b)
		hb := backend.New(pt)
		copy(hb.Bytes(), data)
		host = append(host, hb)
	}
	outs, err := exe.Execute(dev)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := cpu.Run(m, f, host)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		data, err := o.ToHost()
		o.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, floats(data))
		want = append(want, floats(ref[i].Bytes()))
	}
	return got, want
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func checkClose(t *testing.T, got, want [][]float32) {
	t.Helper()
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("result %d: %d elements, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if d := math.Abs(float64(got[i][j] - want[i][j])); d > 1e-5+1e-5*math.Abs(float64(want[i][j])) {
				t.Errorf("result %d element %d: %g on 4 devices, %g unsharded", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// A matmul with its lhs split by rows over dp and its rhs by columns over
// tp gives the unsharded numbers, gathered from four devices.
func TestShardMatmul(t *testing.T) {
	got, want := runShardedTIR(t, `mesh @mesh = <["dp"=2, "tp"=2]>

func @f(%x: f32[8,16] {sharding=<@mesh, [{"dp"}, {}]>}, %w: f32[16,4] {sharding=<@mesh, [{}, {"tp"}]>}) -> f32[8,4] {sharding=<@mesh, [{"dp"}, {"tp"}]>} {
  %y = matmul %x, %w : f32[8,4]
  return %y
}
`)
	checkClose(t, got, want)
}

// A two-layer perceptron split Megatron-style (w1 by columns, w2 by rows
// over tp, the batch over dp) with a sharding constraint on the hidden
// activations, its result replicated.
func TestShardMLPConstraint(t *testing.T) {
	got, want := runShardedTIR(t, `mesh @mesh = <["dp"=2, "tp"=2]>

func @mlp(%x: f32[8,16] {sharding=<@mesh, [{"dp"}, {}]>}, %w1: f32[16,32] {sharding=<@mesh, [{}, {"tp"}]>}, %w2: f32[32,16] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[8,16] {
  %h = matmul %x, %w1 : f32[8,32]
  %a = tanh %h
  %c = sharding_constraint %a {sharding=<@mesh, [{"dp"}, {"tp"}]>}
  %y = matmul %c, %w2 : f32[8,16]
  return %y
}
`)
	checkClose(t, got, want)
}

// Uneven splits: 5 rows over 4 devices inside the program (a constraint,
// which XLA pads) and at its boundary, where the plugin drops the axes that
// do not divide (boundarySharding): 6 rows over dp×tp are passed split over
// dp only, 5 rows whole.
func TestShardUneven(t *testing.T) {
	got, want := runShardedTIR(t, `mesh @mesh = <["dp"=2, "tp"=2]>

func @f(%x: f32[5,3] {sharding=<@mesh, [{"dp", "tp"}, {}]>}, %y: f32[6,3] {sharding=<@mesh, [{"dp", "tp"}, {}]>}) -> (f32[5,3] {sharding=<@mesh, [{"tp"}, {"dp"}]>}, f32[6,3] {sharding=<@mesh, [{"dp", "tp"}, {}]>}) {
  %a = exp %x
  %c = sharding_constraint %a {sharding=<@mesh, [{"dp", "tp"}, {}]>}
  %d = mul %c, %c
  %e = tanh %y
  return %d, %e
}
`)
	checkClose(t, got, want)
}

// The pieces: where each device's piece starts, its padded size, and the
// boundary's split of an uneven sharding. Pure arithmetic: no plugin.
func TestShardGeometry(t *testing.T) {
	mesh := &ir.Mesh{Name: "mesh", Axes: []ir.MeshAxis{{Name: "dp", Size: 2}, {Name: "tp", Size: 2}}}
	f32 := func(dims ...int64) ir.Type { return ir.Tensor(ir.F32, dims...) }
	s := &ir.Sharding{Mesh: "mesh", Dims: [][]string{{"tp", "dp"}, {}}}
	if got := shardType(f32(5, 3), s, mesh).String(); got != "f32[2,3]" {
		t.Errorf("piece of f32[5,3] split 4 ways: %s, want f32[2,3]", got)
	}
	// Device p is (dp, tp) = (p/2, p%2); rows split tp-major: index tp*2+dp.
	var starts []int64
	for p := 0; p < 4; p++ {
		starts = append(starts, shardStart(p, f32(5, 3), s, mesh)[0])
	}
	if fmt.Sprint(starts) != "[0 4 2 6]" {
		t.Errorf("row starts of the 4 pieces: %v, want [0 4 2 6]", starts)
	}
	for _, c := range []struct {
		t    ir.Type
		want string
	}{
		{f32(8, 3), `<@mesh, [{"tp", "dp"}, {}]>`},
		{f32(6, 3), `<@mesh, [{"tp"}, {}]>`},
		{f32(5, 3), `<@mesh, [{}, {}]>`},
	} {
		if got := boundarySharding(s, c.t, mesh).String(); got != c.want {
			t.Errorf("boundary sharding of %s: %s, want %s", c.t, got, c.want)
		}
	}
	// A padded piece reads back only the rows that exist.
	whole := f32s(1, 2, 3, 4, 5)
	piece := make([]byte, 8)
	backend.CopyBox(whole, []int64{5}, piece, []int64{2}, []int64{4}, 4, true)
	if got := floats(piece); got[0] != 5 || got[1] != 0 {
		t.Errorf("last piece of 5 over 3: %v, want [5 0]", got)
	}
}

// A module with a one-device mesh (internal/progen writes such programs)
// compiles and runs through the ordinary one-device path.
func TestShardOneDeviceMesh(t *testing.T) {
	m, err := tir.Parse("in.tir", []byte(`mesh @progen = <["x"=1]>

func @f(%x: f32[4]) -> f32[4] {
  %a = neg %x
  %c = sharding_constraint %a {sharding=<@progen, [{"x"}]>}
  return %c
}
`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := stablehlo.Lower(m, stablehlo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := cpuClient(t)
	exe, err := c.Compile(text, []ir.Type{vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	in, err := c.FromHost(vec4(), f32s(1, -2, 0.5, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := exe.Execute([]*Buffer{in})
	if err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	data, err := out[0].ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(floats(data)); got != "[-1 2 -0.5 -0]" {
		t.Errorf("got %s, want [-1 2 -0.5 -0]", got)
	}
}

// Through the backend interface: a program whose module has a mesh of four
// runs on four devices; a result kept on the devices is a ShardedBuffer
// that the next call takes as it is (no host round trip), and the numbers
// after two calls are the reference executor's.
func TestShardBackendKeepsResultsOnDevices(t *testing.T) {
	m, f, text, c := onFourDevices(t, `mesh @mesh = <["dp"=2, "tp"=2]>

func @step(%x: f32[8,4] {sharding=<@mesh, [{"dp"}, {"tp"}]>}, %w: f32[4,4] {sharding=<@mesh, [{}, {"tp"}]>}) -> f32[8,4] {sharding=<@mesh, [{"dp"}, {"tp"}]>} {
  %y = matmul %x, %w : f32[8,4]
  %z = tanh %y
  return %z
}
`)
	exe, err := NewBackend(c).Compile(&backend.Program{Module: m, Entry: f, HLO: text})
	if err != nil {
		t.Fatal(err)
	}
	run := exe.(backend.OptionsRunner)
	x, w := backend.New(f.Params[0].Type), backend.New(f.Params[1].Type)
	copy(x.Bytes(), f32s(0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, 1, -1.1, 1.2, 0.3, 0.2, 0.1, 0,
		-0.5, 0.25, 0.75, -1, 1, 0.5, -0.25, 0.125, 0, 0, 1, 1, -1, -1, 0.5, 0.5))
	copy(w.Bytes(), f32s(1, 0.5, -0.5, 0.25, 0, 1, 0.5, -1, 0.75, -0.25, 1, 0.5, -1, 0.5, 0.25, 1))
	first, err := run.RunWith([]*backend.Buffer{x, w}, backend.RunOptions{KeepOnDevice: true})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := first[0].Device().(*ShardedBuffer)
	if !ok || len(d.Shards) != 4 || d.Shards[0].Type().String() != "f32[4,2]" {
		t.Fatalf("kept result: %T, want a ShardedBuffer of 4 pieces f32[4,2]", first[0].Device())
	}
	second, err := run.RunWith([]*backend.Buffer{first[0], w}, backend.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	ref1, err := cpu.Run(m, f, []*backend.Buffer{x, w})
	if err != nil {
		t.Fatal(err)
	}
	ref2, err := cpu.Run(m, f, []*backend.Buffer{ref1[0], w})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, [][]float32{floats(second[0].Bytes())}, [][]float32{floats(ref2[0].Bytes())})
}

// A sharded compile keeps docs/ops.md as every other compile does: a max
// reduction over a row holding NaN (0/0 at element 0) is NaN on 4 devices,
// where XLA:CPU's default fast min/max would drop it. The rows are split and
// each row's reduction stays on one device: a max across devices (the
// reduced dimension split too) goes through XLA:CPU's all-reduce, which
// drops NaN whatever the options (docs/SHARDING.md).
func TestShardKeepsSemantics(t *testing.T) {
	got, want := runShardedTIR(t, `mesh @mesh = <["dp"=2, "tp"=2]>

func @f(%x: f32[8,4] {sharding=<@mesh, [{"dp"}, {}]>}) -> f32[8] {sharding=<@mesh, [{"dp"}]>} {
  %q = div %x, %x : f32[8,4]
  %m = reduce_max %q {axes=[1]} : f32[8]
  return %m
}`)
	if !math.IsNaN(float64(want[0][0])) || !math.IsNaN(float64(got[0][0])) {
		t.Fatalf("row 0 holds NaN: got %g on 4 devices, %g unsharded; want NaN from both", got[0][0], want[0][0])
	}
	got[0][0], want[0][0] = 0, 0
	checkClose(t, got, want)
}

// TestShardedDonation: x + 1 over 4 devices with x donated (the lowering
// aliases it to the result): a donated argument's pieces are deleted and
// the result is right; not donated, the same call leaves them intact.
func TestShardedDonation(t *testing.T) {
	m, f, _, c := onFourDevices(t, `mesh @mesh = <["tp"=4]>

func @inc(%x: f32[8,2] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[8,2] {sharding=<@mesh, [{"tp"}, {}]>} {
  %one = constant 1.0 : f32[]
  %b = broadcast %one {dims=[]} : f32[8,2]
  %y = add %x, %b : f32[8,2]
  return %y
}`)
	text, err := stablehlo.Lower(m, stablehlo.Options{Donate: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	argS, resS := f.EntryShardings()
	exe, err := c.CompileSharded(text, m.Meshes[0], []ir.Type{f.Params[0].Type}, f.Results, argS, resS)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	defer exe.Close()
	data := make([]byte, 64)
	for j := range 16 {
		binary.LittleEndian.PutUint32(data[4*j:], math.Float32bits(float32(j)))
	}
	for _, donate := range [][]int{nil, {0}} {
		x, err := c.FromHostSharded(f.Params[0].Type, data, m.Meshes[0], exe.ArgSharding(0))
		if err != nil {
			t.Fatal(err)
		}
		outs, err := exe.ExecuteDonating([]*ShardedBuffer{x}, donate)
		if err != nil {
			t.Fatal(err)
		}
		got, err := outs[0].ToHost()
		outs[0].Close()
		if err != nil {
			t.Fatal(err)
		}
		if g := floats(got); g[0] != 1 || g[15] != 16 {
			t.Errorf("donate %v: x+1 = %v", donate, g)
		}
		for p, piece := range x.Shards {
			if d := deleted(t, piece); d != (donate != nil) {
				t.Errorf("donate %v: device %d's piece deleted=%v", donate, p, d)
			}
		}
		x.Close()
	}
}
