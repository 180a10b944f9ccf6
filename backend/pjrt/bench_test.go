package pjrt

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func BenchmarkExecuteAdd(b *testing.B) {
	c := cpuClient(b)
	exe, err := c.Compile(addModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		b.Fatal(err)
	}
	defer exe.Close()
	x, _ := c.FromHost(vec4(), f32s(1, 2, 3, 4))
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
