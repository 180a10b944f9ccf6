package pjrt

import (
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// addOnDevice compiles the f32[4] add on c and puts the input [1 2 3 4] on
// its device; both are closed when tb ends, if not before.
func addOnDevice(tb testing.TB, c *Client) (*LoadedExecutable, *Buffer) {
	tb.Helper()
	exe, err := c.Compile(addModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { exe.Close() })
	x, err := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { x.Close() })
	return exe, x
}

func BenchmarkExecuteAdd(b *testing.B) {
	exe, x := addOnDevice(b, cpuClient(b))
	args := []*Buffer{x, x}
	b.ReportAllocs()
	for b.Loop() {
		out, err := exe.Execute(args)
		if err != nil {
			b.Fatal(err)
		}
		out[0].Close()
	}
}

func BenchmarkTypeOf(b *testing.B) {
	c := cpuClient(b)
	x, _ := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	for b.Loop() {
		c.typeOf(x.h)
	}
}

func BenchmarkRunFromHost(b *testing.B) {
	be := NewBackend(cpuClient(b))
	exe, err := be.Compile(addProgram())
	if err != nil {
		b.Fatal(err)
	}
	x := backend.New(vec4())
	args := []*backend.Buffer{x, x}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := exe.Run(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromHost(b *testing.B) {
	c := cpuClient(b)
	data := f32s(1, 2, 3, 4)
	b.ReportAllocs()
	for b.Loop() {
		x, err := c.FromHost(vec4(), data)
		if err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
}

// BenchmarkExecutePluginFloor is BenchmarkExecuteAdd's call made with the
// least Go can do: one preallocated argument frame, no argument checks, no
// Buffer wrappers; the plugin's Execute, its completion event awaited and
// destroyed, and the result destroyed. What it measures is the plugin's own
// cost of a call plus four purego calls, the floor of Execute's time
// (docs/PERFORMANCE.md compares it with jax.jit's).
func BenchmarkExecutePluginFloor(b *testing.B) {
	exe, x := addOnDevice(b, cpuClient(b))
	p := exe.c.p
	f := &frame{argv: []uintptr{x.h, x.h}, outv: make([]uintptr, 1), nonDonatable: []int64{0, 1}}
	f.argList, f.outList = unsafe.Pointer(&f.argv[0]), unsafe.Pointer(&f.outv[0])
	f.opts = executeOptions{structSize: unsafe.Sizeof(executeOptions{}),
		nonDonatable: unsafe.Pointer(&f.nonDonatable[0]), numNonDon: 2}
	f.args = executeArgs{structSize: unsafe.Sizeof(executeArgs{}), executable: exe.h,
		options: unsafe.Pointer(&f.opts), argumentLists: unsafe.Pointer(&f.argList), numDevices: 1,
		numArgs: 2, outputLists: unsafe.Pointer(&f.outList), deviceCompleteEvents: unsafe.Pointer(&f.event)}
	del := &bufferArgs{structSize: unsafe.Sizeof(bufferArgs{})}
	for b.Loop() {
		if err := p.call(fnLoadedExecutableExecute, unsafe.Pointer(&f.args)); err != nil {
			b.Fatal(err)
		}
		f.await = eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: f.event}
		if err := p.call(fnEventAwait, unsafe.Pointer(&f.await)); err != nil {
			b.Fatal(err)
		}
		p.call(fnEventDestroy, unsafe.Pointer(&f.await))
		del.buffer = f.outv[0]
		p.call(fnBufferDestroy, unsafe.Pointer(del))
	}
}
