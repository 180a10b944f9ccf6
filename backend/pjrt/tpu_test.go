package pjrt

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

const addModule = `module @add {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

// tpuPlugin loads libtpu. TPU compile-only checks are part of the suite:
// without `make venv-tpu` the test fails rather than skips.
func tpuPlugin(t testing.TB) *Plugin {
	t.Helper()
	path, err := Find(KindTPU)
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadForCompile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var expectedSize = regexp.MustCompile(`expected (\d+), got 8\b`)

// TestLayoutSizes asks the plugin, by passing struct_size 8, what size it
// expects for each argument struct, and checks ours is at least as large.
func TestLayoutSizes(t *testing.T) {
	cpu, err := LoadCPU()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Plugin{tpuPlugin(t), cpu} {
		checkLayoutSizes(t, p)
	}
}

func checkLayoutSizes(t *testing.T, p *Plugin) {
	for _, l := range layoutSizes {
		args := make([]uintptr, 64)
		args[0] = 8
		err := p.call(l.fn, unsafe.Pointer(&args[0]))
		var pe *Error
		if errors.As(err, &pe) && pe.Code == 12 {
			continue // UNIMPLEMENTED: a function the plugin lacks checks no size
		}
		if !errors.As(err, &pe) || pe.Code != 3 {
			t.Errorf("%s with struct_size 8: %v, want INVALID_ARGUMENT", l.fn, err)
			continue
		}
		m := expectedSize.FindStringSubmatch(pe.Message)
		if m == nil {
			t.Errorf("%s: no expected size in %q", l.fn, pe.Message)
			continue
		}
		want, _ := strconv.Atoi(m[1])
		if int(l.size) < want {
			t.Errorf("%s: our struct is %d bytes, plugin API %s expects %d", l.fn, l.size, p.Version(), want)
		}
	}
}

func TestTPUCompileOnly(t *testing.T) {
	p := tpuPlugin(t)
	before := p.Live()
	topo, err := p.Topology("v5e:2x2")
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	if name, err := topo.PlatformName(); err != nil || name != "tpu" {
		t.Errorf("PlatformName = %q, %v; want tpu", name, err)
	}
	exe, err := topo.Compile(addModule, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := exe.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) < 1000 {
		t.Errorf("serialized executable is %d bytes; want a real one", len(blob))
	}
	if n, err := exe.NumOutputs(); err != nil || n != 1 {
		t.Errorf("NumOutputs = %d, %v; want 1", n, err)
	}
	exe.Close()
	exe.Close()
	topo.Close()
	if got := p.Live(); got != before {
		t.Errorf("live handles %d after closing everything, want %d", got, before)
	}
}

func TestTPUCompileErrors(t *testing.T) {
	p := tpuPlugin(t)
	topo, err := p.Topology("v5e:2x2")
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	_, err = topo.Compile("module {\n  func.func @main( {\n", DefaultCompileOptions)
	var pe *Error
	if !errors.As(err, &pe) || pe.Func != "PJRT_Compile" || pe.Code != 2 {
		t.Fatalf("malformed StableHLO: %v; want PJRT_Compile UNKNOWN", err)
	}
	if !strings.HasPrefix(pe.Message, "-:2:19: error: expected non-function type") {
		t.Errorf("message %q does not say what the parser expected", pe.Message)
	}
	_, err = topo.Compile(addModule, CompileOptions{Replicas: 0, Partitions: 1})
	if err == nil || err.Error() != "pjrt: 0 replicas and 1 partitions: both must be at least 1" {
		t.Errorf("zero replicas: %v", err)
	}
	_, err = p.Topology("v99:1x1")
	if !errors.As(err, &pe) || pe.Func != "PJRT_TopologyDescription_Create" {
		t.Errorf("unknown topology: %v", err)
	}
}

func TestCompileOptionsMarshal(t *testing.T) {
	b, err := DefaultCompileOptions.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "\x1a\x04\x20\x01\x28\x01"; got != want {
		t.Errorf("Marshal = % x, want % x", got, want)
	}
}

// TestTPUGenerations: libtpu makes every topology of TPUGenerations, with
// the generation's device kind, and refuses the v7x prefix for TPU7x.
func TestTPUGenerations(t *testing.T) {
	p := tpuPlugin(t)
	for _, g := range TPUGenerations {
		for _, name := range g.Topologies() {
			topo, err := p.Topology(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if kind, err := topo.DeviceKind(); err != nil || kind != g.DeviceKind {
				t.Errorf("%s: device kind %q, %v; want %q", name, kind, err, g.DeviceKind)
			}
			topo.Close()
		}
	}
	if _, err := p.Topology("v7x:2x2x1"); err == nil || !strings.Contains(err.Error(), "Invalid TPU external name: TPU v7x") {
		t.Errorf("v7x:2x2x1: %v, want libtpu's invalid name", err)
	}
}

// TestTPUSemanticsOverrides: libtpu compiles with the TPU's semantics
// options, and refuses a name it does not know, so it does read them.
func TestTPUSemanticsOverrides(t *testing.T) {
	topo, err := tpuPlugin(t).Topology("v6e:2x2")
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	exe, err := topo.Compile(addModule, DefaultCompileOptions)
	if err != nil {
		t.Fatalf("with %v: %v", SemanticsOverrides("tpu"), err)
	}
	exe.Close()
	bogus := DefaultCompileOptions
	bogus.Overrides = []Option{{"xla_no_such_option", true}}
	if _, err := topo.Compile(addModule, bogus); err == nil || !strings.HasSuffix(err.Error(), "No such compile option: 'xla_no_such_option'") {
		t.Errorf("an unknown override: %v, want libtpu's refusal", err)
	}
}
