package pjrt

import (
	"sync"
	"testing"
	"unsafe"

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

// aligned copies b into memory at XLA:CPU's alignment.
func aligned(b []byte) []byte {
	out := backend.AlignedBytes(len(b))
	copy(out, b)
	return out
}

// incAliasModule's parameter is a donor aliased to its result.
const incAliasModule = `module @inc {
  func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %a, %one : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

// TestLentArguments: on XLA:CPU a call's host argument is read in place
// (the device buffer's address is the Go slice's), and a result is never
// that memory: a program whose parameter is aliased to its result leaves the
// caller's slice as it was, and its result kept on the device holds its
// values after the caller overwrites the slice. (RunWith never donates lent
// memory; the pinned plugin, given it donated, copies it too.)
func TestLentArguments(t *testing.T) {
	c := cpuClient(t)
	data := aligned(f32s(1, 2, 3, 4))
	lent, err := c.fromHost(vec4(), data, lendHost)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := lent.devicePointer(); err != nil || p != uintptr(unsafe.Pointer(&data[0])) {
		t.Errorf("lent buffer at %#x (%v), the slice at %p: not read in place", p, err, &data[0])
	}
	before := c.p.Live()
	if err := lent.Close(); err != nil || c.p.Live() != before-1 {
		t.Errorf("closing a lent buffer: %v, %d live handles, want %d", err, c.p.Live(), before-1)
	}

	f := &ir.Func{Name: "main", Params: []*ir.Value{{Type: vec4()}}, Results: []ir.Type{vec4()}}
	exe, err := NewBackend(c).Compile(&backend.Program{Entry: f, HLO: incAliasModule})
	if err != nil {
		t.Fatal(err)
	}
	x := hostBuffer(t, vec4(), data)
	res, err := exe.(backend.OptionsRunner).RunWith([]*backend.Buffer{x}, backend.RunOptions{KeepOnDevice: true})
	if err != nil {
		t.Fatal(err)
	}
	d := res[0].Device().(*Buffer)
	defer d.Close()
	if got, want := string(data), string(f32s(1, 2, 3, 4)); got != want {
		t.Errorf("the caller's argument after the call: % x, want % x", got, want)
	}
	copy(data, f32s(9, 9, 9, 9))
	if got, want := readF32s(t, d), string(f32s(2, 3, 4, 5)); got != want {
		t.Errorf("result after the caller overwrote its argument: % x, want % x", got, want)
	}
}

// TestRunConcurrentLent: 16 goroutines call from host memory at once, each
// lending its own argument and all lending one shared argument (pinned by
// several calls at a time); every result is right and no handle is left.
func TestRunConcurrentLent(t *testing.T) {
	c := cpuClient(t)
	exe, err := NewBackend(c).Compile(addProgram())
	if err != nil {
		t.Fatal(err)
	}
	shared := hostBuffer(t, vec4(), aligned(f32s(1, 1, 1, 1)))
	before := c.p.Live()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				k := float32(g*100 + i)
				x := hostBuffer(t, vec4(), aligned(f32s(k, k, k, k)))
				res, err := exe.Run([]*backend.Buffer{x, shared})
				if want := f32s(k+1, k+1, k+1, k+1); err != nil || string(res[0].Bytes()) != string(want) {
					t.Errorf("goroutine %d call %d: %v, %v", g, i, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := c.p.Live(); got != before {
		t.Errorf("%d live handles after the calls, want %d", got, before)
	}
}

// TestRunInto: a result given storage is copied from the device straight
// into it, and the call returns that buffer; storage that is an argument's
// (donated or not) or of another type, and results both kept on the device
// and given storage, are refused.
func TestRunInto(t *testing.T) {
	exe, err := NewBackend(cpuClient(t)).Compile(addProgram())
	if err != nil {
		t.Fatal(err)
	}
	run := exe.(backend.OptionsRunner)
	x, y := hostBuffer(t, vec4(), f32s(1, 2, 3, 4)), hostBuffer(t, vec4(), f32s(10, 20, 30, 40))
	out := backend.New(vec4())
	res, err := run.RunWith([]*backend.Buffer{x, y}, backend.RunOptions{Into: []*backend.Buffer{out}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != out || string(out.Bytes()) != string(f32s(11, 22, 33, 44)) {
		t.Fatalf("result %v in storage %p, want 11 22 33 44 in the storage given %p", res[0], res[0], out)
	}
	for _, c := range []struct {
		o    backend.RunOptions
		want string
	}{
		{backend.RunOptions{Into: []*backend.Buffer{x}, Donate: []int{0}}, "pjrt: result 0 of @main: the storage given is argument 0's; the pjrt backends write no result into an argument (the plugin may still read it)"},
		{backend.RunOptions{Into: []*backend.Buffer{y}}, "pjrt: result 0 of @main: the storage given is argument 1's, which the call does not donate"},
		{backend.RunOptions{Into: []*backend.Buffer{backend.New(ir.Tensor(ir.I32, 4))}}, "pjrt: result 0 of @main: the storage given is i32[4], want f32[4]"},
		{backend.RunOptions{Into: []*backend.Buffer{out}, KeepOnDevice: true}, "pjrt: results kept on the device (KeepOnDevice) cannot also be written into host storage (Into)"},
	} {
		if _, err := run.RunWith([]*backend.Buffer{x, y}, c.o); err == nil || err.Error() != c.want {
			t.Errorf("got error %v, want %q", err, c.want)
		}
	}
}
