package pjrt

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// addProgram is addModule as the backend compiles it: f32[4] + f32[4].
func addProgram() *backend.Program {
	f := &ir.Func{Name: "main", Params: []*ir.Value{{Type: vec4()}, {Type: vec4(), Index: 1}}, Results: []ir.Type{vec4()}}
	return &backend.Program{Entry: f, HLO: addModule}
}

// TestCompileExpecting: persisted code is loaded only when its ID matches
// the program and the backend; anything else is compiled afresh, and both
// run.
func TestCompileExpecting(t *testing.T) {
	b := NewBackend(cpuClient(t))
	p := addProgram()
	x, err := b.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	code, ok := x.(backend.Persistable).NativeCode()
	if !ok || len(code.Data) == 0 {
		t.Fatal("no native code")
	}
	bad := code
	bad.Data = append([]byte{0}, code.Data...)
	other := *p
	other.HLO += " "
	cases := []struct {
		name      string
		p         *backend.Program
		code      backend.NativeCode
		wantLoads int64
	}{
		{"as persisted", p, code, 1},
		{"bytes changed", p, bad, 0},
		{"another program", &other, code, 0},
		{"another ID", p, backend.NativeCode{ID: "llvm-object sha256:00", Data: code.Data}, 0},
	}
	for _, c := range cases {
		compiles, loads := b.Counts()
		y, err := b.CompileExpecting(c.p, c.code)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c2, l2 := b.Counts()
		if l2-loads != c.wantLoads || c2-compiles != 1-c.wantLoads {
			t.Errorf("%s: %d compiles, %d loads", c.name, c2-compiles, l2-loads)
		}
		a, _ := backend.View(vec4(), f32s(1, 2, 3, 4))
		out, err := y.Run([]*backend.Buffer{a, a})
		if err != nil || out[0].String() != "f32[4] [2.0, 4.0, 6.0, 8.0]" {
			t.Errorf("%s: ran to %v, %v", c.name, out, err)
		}
	}
}

// TestUpload: an uploaded buffer lives in the device's memory, runs as an
// argument without a copy, reads back as it was, and is returned as it is
// when uploaded again; a donated buffer is refused.
func TestUpload(t *testing.T) {
	b := NewBackend(cpuClient(t))
	x, err := b.Compile(addProgram())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := backend.View(vec4(), f32s(1, 2, 3, 4))
	d, err := b.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	if d.Device() == nil || d.String() != "f32[4] [1.0, 2.0, 3.0, 4.0]" {
		t.Fatalf("uploaded: device %v, %s", d.Device(), d)
	}
	if again, err := b.Upload(d); err != nil || again != d {
		t.Errorf("uploading an uploaded buffer: %v, %v", again, err)
	}
	out, err := x.Run([]*backend.Buffer{d, h})
	if err != nil || out[0].String() != "f32[4] [2.0, 4.0, 6.0, 8.0]" {
		t.Errorf("ran to %v, %v", out, err)
	}
	gone, _ := backend.View(vec4(), f32s(1, 2, 3, 4))
	if err := gone.Donate("donated to a test"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Upload(gone); err == nil || err.Error() != "pjrt: uploading f32[4]: donated to a test" {
		t.Errorf("uploading a donated buffer: %v", err)
	}
}

// shardedStepSrc is a matmul and tanh split over a 2x2 mesh.
const shardedStepSrc = `mesh @mesh = <["dp"=2, "tp"=2]>

func @step(%x: f32[8,4] {sharding=<@mesh, [{"dp"}, {"tp"}]>}, %w: f32[4,4] {sharding=<@mesh, [{}, {"tp"}]>}) -> f32[8,4] {sharding=<@mesh, [{"dp"}, {"tp"}]>} {
  %y = matmul %x, %w : f32[8,4]
  %z = tanh %y
  return %z
}
`

// TestCompileExpectingSharded: a program over a mesh hands back its
// serialized executable, whose ID names the device assignment; it is
// loaded (not compiled) only when the ID matches the program, the backend
// and the devices, and the loaded executable runs on the four devices to
// the reference executor's numbers.
func TestCompileExpectingSharded(t *testing.T) {
	m, f, text, c := onFourDevices(t, shardedStepSrc)
	b := NewBackend(c)
	p := &backend.Program{Module: m, Entry: f, HLO: text}
	x, err := b.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	code, ok := x.(backend.Persistable).NativeCode()
	if !ok || len(code.Data) == 0 {
		t.Fatal("no native code")
	}
	if want := " devices:0,1,2,3"; !strings.HasSuffix(code.ID, want) {
		t.Errorf("ID %q does not end in %q", code.ID, want)
	}
	bad := code
	bad.Data = append([]byte{0}, code.Data...)
	other := *p
	other.HLO += " "
	cases := []struct {
		name      string
		p         *backend.Program
		code      backend.NativeCode
		wantLoads int64
	}{
		{"as persisted", p, code, 1},
		{"bytes changed", p, bad, 0},
		{"another program", &other, code, 0},
		{"other devices", p, backend.NativeCode{ID: strings.Replace(code.ID, "devices:0,1,2,3", "devices:1,0,2,3", 1), Data: code.Data}, 0},
	}
	xs, w := backend.New(f.Params[0].Type), backend.New(f.Params[1].Type)
	for i := range 32 {
		binary.LittleEndian.PutUint32(xs.Bytes()[4*i:], math.Float32bits(float32(math.Sin(float64(i)))))
	}
	copy(w.Bytes(), f32s(1, 0.5, -0.5, 0.25, 0, 1, 0.5, -1, 0.75, -0.25, 1, 0.5, -1, 0.5, 0.25, 1))
	ref, err := cpu.Run(m, f, []*backend.Buffer{xs, w})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range cases {
		compiles, loads := b.Counts()
		y, err := b.CompileExpecting(cs.p, cs.code)
		if err != nil {
			t.Fatalf("%s: %v", cs.name, err)
		}
		c2, l2 := b.Counts()
		if l2-loads != cs.wantLoads || c2-compiles != 1-cs.wantLoads {
			t.Errorf("%s: %d compiles, %d loads", cs.name, c2-compiles, l2-loads)
		}
		if _, ok := y.(*shardedExecutable); !ok {
			t.Fatalf("%s: %T, want a sharded executable", cs.name, y)
		}
		out, err := y.Run([]*backend.Buffer{xs, w})
		if err != nil {
			t.Fatalf("%s: %v", cs.name, err)
		}
		checkClose(t, [][]float32{floats(out[0].Bytes())}, [][]float32{floats(ref[0].Bytes())})
	}
}

// TestLoadShardedArtifact: an executable file of a program over a 2x2 mesh
// (its manifest with the mesh, the devices and the shardings) loads through
// Backend.Load on a client of four devices and runs there to the reference
// executor's numbers; a client of two devices refuses it with the mesh's
// need, before anything runs.
func TestLoadShardedArtifact(t *testing.T) {
	m, f, text, c := onFourDevices(t, shardedStepSrc)
	params := []ir.Type{f.Params[0].Type, f.Params[1].Type}
	args, res := f.EntryShardings()
	s, err := c.CompileSharded(text, m.Meshes[0], params, f.Results, args, res)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := s.Serialize()
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	a := &Artifact{Manifest: Manifest{
		Entry:  Signature{Name: "step", Params: []string{"f32[8,4]", "f32[4,4]"}, Results: []string{"f32[8,4]"}},
		Target: "cpu", Platform: c.Platform(), PlatformVersion: c.PlatformVersion(), DeviceKind: c.Devices()[0].Kind,
		PJRTAPI: c.Plugin().Version(),
		Mesh: &ManifestMesh{Name: "mesh", Axes: []MeshAxis{{"dp", 2}, {"tp", 2}}, Devices: []int{0, 1, 2, 3},
			Params: [][][]string{{{"dp"}, {"tp"}}, {{}, {"tp"}}}, Results: [][][]string{{{"dp"}, {"tp"}}}},
	}, Executable: blob}
	exe, err := NewBackend(c).Load(a)
	if err != nil {
		t.Fatal(err)
	}
	x, w := backend.New(f.Params[0].Type), backend.New(f.Params[1].Type)
	for i := range 32 {
		x.SetFloat64(i, math.Sin(float64(i)))
	}
	copy(w.Bytes(), f32s(1, 0.5, -0.5, 0.25, 0, 1, 0.5, -1, 0.75, -0.25, 1, 0.5, -1, 0.5, 0.25, 1))
	got, err := exe.Run([]*backend.Buffer{x, w})
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpu.Run(m, f, []*backend.Buffer{x, w})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, [][]float32{floats(got[0].Bytes())}, [][]float32{floats(want[0].Bytes())})
	p, err := openCPU()
	if err != nil {
		t.Fatal(err)
	}
	two, err := p.NewClient(Option{"cpu_device_count", int64(2)})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	if _, err := NewBackend(two).Load(a); err == nil || err.Error() != "pjrt: mesh @mesh needs 4 devices, the client has 2 (the XLA:CPU plugin takes cpu_device_count=4)" {
		t.Errorf("on two devices: %v", err)
	}
}
