package pjrt

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// nanMaxModule is reduce_max over the rows of f32[4,4], as tpucc lowers it.
const nanMaxModule = `module @nanmax {
  func.func public @main(%x: tensor<4x4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%x init: %0) applies stablehlo.maximum across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
`

// bf16Module computes bf16 a*b + a and returns it as f32: docs/ops.md
// rounds the product to bf16 before the add.
const bf16Module = `module @bf16 {
  func.func public @main(%a: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<64xf32> {
    %0 = stablehlo.multiply %a, %b : tensor<64xbf16>
    %1 = stablehlo.add %0, %a : tensor<64xbf16>
    %2 = stablehlo.convert %1 : (tensor<64xbf16>) -> tensor<64xf32>
    return %2 : tensor<64xf32>
  }
}
`

// runF32 compiles module with o, runs it on args and returns its one f32
// result as text.
func runF32(t *testing.T, c *Client, module string, o CompileOptions, args []ir.Type, data [][]byte) string {
	t.Helper()
	exe, err := c.Compile(module, args, o)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	var in []*Buffer
	for i, typ := range args {
		b, err := c.FromHost(typ, data[i])
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		in = append(in, b)
	}
	out, err := exe.Execute(in)
	if err != nil {
		t.Fatal(err)
	}
	got := []byte(readF32s(t, out[0]))
	out[0].Close()
	var vals []float32
	for i := 0; i < len(got); i += 4 {
		vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
	}
	return fmt.Sprint(vals)
}

// TestSemanticsOverrides: every compile carries the XLA options that keep
// docs/ops.md, with nothing in XLA_FLAGS (the plugin's defaults drop NaNs
// from max reductions and keep a chain of bf16 ops in f32). An override of
// the same name given by the caller replaces it, which shows the plugin
// applies them.
func TestSemanticsOverrides(t *testing.T) {
	c := cpuClient(t)
	nan := float32(math.NaN())
	x := f32s(1, 7, 3, 2, 15, nan, 4, 0, nan, 22, 1, 1, 31, 3, 3, 3)
	m44 := ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(4), ir.D(4)}}
	if got, want := runF32(t, c, nanMaxModule, DefaultCompileOptions, []ir.Type{m44}, [][]byte{x}), "[7 NaN NaN 31]"; got != want {
		t.Errorf("reduce_max over rows with NaN = %s, want %s", got, want)
	}
	fast := DefaultCompileOptions
	fast.Overrides = []Option{{"xla_cpu_enable_fast_min_max", true}}
	if got, want := runF32(t, c, nanMaxModule, fast, []ir.Type{m44}, [][]byte{x}), "[7 15 22 31]"; got != want {
		t.Errorf("reduce_max with xla_cpu_enable_fast_min_max=true = %s, want %s (XLA's fast min/max)", got, want)
	}

	bogus := DefaultCompileOptions
	bogus.Overrides = []Option{{"xla_no_such_option", true}}
	if _, err := c.Compile(nanMaxModule, nil, bogus); err == nil || !strings.HasSuffix(err.Error(), "No such compile option: 'xla_no_such_option'") {
		t.Errorf("an unknown override: %v, want the plugin's refusal", err)
	}

	v64 := ir.Type{DType: ir.BF16, Shape: []ir.Dim{ir.D(64)}}
	var a, b []byte
	var want []float32
	for i := range 64 {
		x := ir.Float32ToBF16(float32(i-32) * 0.1371)
		y := ir.Float32ToBF16(0.3 + float32(i)*0.0173)
		a, b = binary.LittleEndian.AppendUint16(a, x), binary.LittleEndian.AppendUint16(b, y)
		xf, yf := ir.BF16ToFloat32(x), ir.BF16ToFloat32(y)
		p := ir.BF16ToFloat32(ir.Float32ToBF16(xf * yf))
		want = append(want, ir.BF16ToFloat32(ir.Float32ToBF16(p+xf)))
	}
	if got := runF32(t, c, bf16Module, DefaultCompileOptions, []ir.Type{v64, v64}, [][]byte{a, b}); got != fmt.Sprint(want) {
		t.Errorf("bf16 a*b+a = %s,\nwant %v (each op rounded to bf16)", got, want)
	}
}

// TestOverridesMarshal: the options' exact encoding, the overrides as
// env_option_overrides map entries.
func TestOverridesMarshal(t *testing.T) {
	o := DefaultCompileOptions.withSemantics("cpu")
	o.Overrides = append(o.Overrides, Option{"n", 3}, Option{"f", float32(0.5)}, Option{"s", "v"})
	got, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "1a0420012801" + // num_replicas 1, num_partitions 1
		"3a200a1a786c615f616c6c6f775f6578636573735f707265636973696f6e12021000" + // bool false
		"3a210a1b786c615f6370755f656e61626c655f666173745f6d696e5f6d617812021000" +
		"3a070a016e12021803" + // int_field 3
		"3a0e0a0166120921000000000000e03f" + // double_field 0.5
		"3a080a017312030a0176" // string_field "v"
	if fmt.Sprintf("%x", got) != want {
		t.Errorf("Marshal = %x\nwant      %s", got, want)
	}
	if _, err := (CompileOptions{Replicas: 1, Partitions: 1, Overrides: []Option{{"l", []int64{1}}}}).Marshal(); err == nil ||
		err.Error() != "pjrt: compile option l: value of type []int64 (want bool, int, int64, float32 or string)" {
		t.Errorf("a list override: %v", err)
	}
	if got := fmt.Sprint(DefaultCompileOptions.withSemantics("tpu").Overrides); got != "[{xla_allow_excess_precision false}]" {
		t.Errorf("tpu overrides %s", got)
	}
	if got := fmt.Sprint(DefaultCompileOptions.withSemantics("cuda").Overrides); got != "[{xla_allow_excess_precision false} {xla_gpu_enable_fast_min_max false}]" {
		t.Errorf("cuda overrides %s", got)
	}
}
