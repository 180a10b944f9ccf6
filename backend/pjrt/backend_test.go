package pjrt

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func hostBuffer(t *testing.T, typ ir.Type, data []byte) *backend.Buffer {
	t.Helper()
	b, err := backend.View(typ, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunHandles: a call from host buffers copies its arguments in and its
// results out through buffers without cleanups, and leaves no handle open,
// whether it succeeds or fails; a result kept on the device is one handle,
// known to be computed, until it is closed.
func TestRunHandles(t *testing.T) {
	c := cpuClient(t)
	exe, err := NewBackend(c).Compile(addProgram())
	if err != nil {
		t.Fatal(err)
	}
	x, y := hostBuffer(t, vec4(), f32s(1, 2, 3, 4)), hostBuffer(t, vec4(), f32s(10, 20, 30, 40))
	before := c.p.Live()
	res, err := exe.Run([]*backend.Buffer{x, y})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res[0].Bytes()), string(f32s(11, 22, 33, 44)); got != want {
		t.Errorf("x+y = % x, want % x", got, want)
	}
	if got := c.p.Live(); got != before {
		t.Errorf("%d live handles after a call from the host, want %d", got, before)
	}

	kept, err := exe.(backend.OptionsRunner).RunWith([]*backend.Buffer{x, y}, backend.RunOptions{KeepOnDevice: true})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := kept[0].Device().(*Buffer)
	if !ok || !d.ready || d.cln == (Buffer{}).cln {
		t.Fatalf("kept result %#v: want a ready device buffer with a cleanup", kept[0].Device())
	}
	if got := c.p.Live(); got != before+1 {
		t.Errorf("%d live handles with a result on the device, want %d", got, before+1)
	}
	if got, want := readF32s(t, d), string(f32s(11, 22, 33, 44)); got != want {
		t.Errorf("kept x+y = % x, want % x", got, want)
	}
	d.Close()

	short := hostBuffer(t, ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(3)}}, f32s(1, 2, 3))
	_, err = exe.Run([]*backend.Buffer{x, short})
	if want := "pjrt: argument 1 is f32[3], the program takes f32[4]"; err == nil || err.Error() != want {
		t.Errorf("mismatched argument: %v, want %q", err, want)
	}
	if got := c.p.Live(); got != before {
		t.Errorf("%d live handles after a failed call, want %d", got, before)
	}
}
