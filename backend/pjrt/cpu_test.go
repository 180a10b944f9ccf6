package pjrt

import (
	"encoding/binary"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// cpuClient opens a client on the pinned XLA:CPU plugin (make
// pjrt-cpu-plugin), or on the plugin $TPUCC_PJRT_PLUGIN names, as the pjrt
// backend does (tools/pjrtgpu runs these tests on a GPU so); without a
// plugin the test fails rather than skips.
func cpuClient(t testing.TB) *Client {
	t.Helper()
	p, err := openCPU()
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func vec4() ir.Type { return ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(4)}} }

func TestCPUAddEndToEnd(t *testing.T) {
	c := cpuClient(t)
	before := c.p.Live()
	// The pinned plugin is XLA:CPU; $TPUCC_PJRT_PLUGIN may name another.
	if want := "cpu"; (os.Getenv(EnvPlugin) == "" && c.Platform() != want) || len(c.Devices()) == 0 {
		t.Fatalf("platform %q, %d devices; want %q and some", c.Platform(), len(c.Devices()), want)
	}
	exe, err := c.Compile(addModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.FromHost(vec4(), f32s(10, 20, 30, 40))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exe.Execute([]*Buffer{x, y})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !out[0].Type().Equal(vec4()) {
		t.Fatalf("results %v", out)
	}
	got, err := out[0].ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if want := f32s(11, 22, 33, 44); string(got) != string(want) {
		t.Errorf("x+y = % x, want % x", got, want)
	}

	blob, err := exe.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	exe2, err := c.Deserialize(blob, []ir.Type{vec4(), vec4()})
	if err != nil {
		t.Fatal(err)
	}
	out2, err := exe2.Execute([]*Buffer{y, y})
	if err != nil {
		t.Fatal(err)
	}
	got2, _ := out2[0].ToHost()
	if want := f32s(20, 40, 60, 80); string(got2) != string(want) {
		t.Errorf("deserialized y+y = % x, want % x", got2, want)
	}
	for _, h := range []interface{ Close() error }{out[0], out2[0], x, y, exe, exe2} {
		h.Close()
	}
	if got := c.p.Live(); got != before {
		t.Errorf("%d live handles after closing all, want %d", got, before)
	}
}

func TestCPUErrors(t *testing.T) {
	c := cpuClient(t)
	before := c.p.Live()
	_, err := c.Compile("module {\n  func.func @main( {\n", nil, DefaultCompileOptions)
	if err == nil || !strings.HasPrefix(err.Error(), "pjrt: PJRT_Client_Compile: ") {
		t.Errorf("malformed StableHLO: %v", err)
	}
	exe, err := c.Compile(addModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	v3 := ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(3)}}
	x3, _ := c.FromHost(v3, f32s(1, 2, 3))
	defer x3.Close()
	x4, _ := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	defer x4.Close()
	i4, _ := c.FromHost(ir.Type{DType: ir.I32, Shape: []ir.Dim{ir.D(4)}}, make([]byte, 16))
	defer i4.Close()
	for _, tc := range []struct {
		args []*Buffer
		want string
	}{
		{[]*Buffer{x4}, "pjrt: 1 arguments, the program takes 2"},
		{[]*Buffer{x4, x3}, "pjrt: argument 1 is f32[3], the program takes f32[4]"},
		{[]*Buffer{i4, x4}, "pjrt: argument 0 is i32[4], the program takes f32[4]"},
	} {
		if _, err := exe.Execute(tc.args); err == nil || err.Error() != tc.want {
			t.Errorf("Execute: %v, want %s", err, tc.want)
		}
	}
	if _, err := c.FromHost(vec4(), f32s(1)); err == nil || err.Error() != "pjrt: 4 bytes for f32[4], want 16" {
		t.Errorf("short host data: %v", err)
	}
	if _, err := c.Compile(addModule, nil, CompileOptions{Replicas: 64, Partitions: 1}); err == nil ||
		!strings.HasPrefix(err.Error(), "pjrt: 64 replicas x 1 partitions need 64 devices, the client has ") {
		t.Errorf("too many replicas: %v", err)
	}
	if got := c.p.Live(); got != before+4 {
		t.Errorf("%d live handles, want %d", got, before+4)
	}
}

func TestCPUConcurrent(t *testing.T) {
	c := cpuClient(t)
	exe, err := c.Compile(addModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				k := float32(g*100 + i)
				x, err := c.FromHost(vec4(), f32s(k, k, k, k))
				if err != nil {
					t.Error(err)
					return
				}
				out, err := exe.Execute([]*Buffer{x, x})
				x.Close()
				if err != nil {
					t.Error(err)
					return
				}
				got, err := out[0].ToHost()
				out[0].Close()
				if want := f32s(2*k, 2*k, 2*k, 2*k); err != nil || string(got) != string(want) {
					t.Errorf("goroutine %d call %d: % x, %v", g, i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
