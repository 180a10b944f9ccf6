package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/passes"
)

// untiled matches a type not followed by a tiled layout.
var untiled = regexp.MustCompile(`\b(f32|f16|bf16|f64|i1|i8|i16|i32|i64|u8|u32)\[[0-9,]*\]($|[^{]|\{[0-9,]*\})`)

// TestBuildDumpLayouts: --target reaches assign-layout, and the dump after it shows
// XLA's tiled layouts on a TPU: the entry's parameters and result row-major (the ABI),
// rotary halves f32[4,64,32] laid out {1,2,0} (64 lanes padded to 128 instead of 32),
// the transpose of v folded into the attention's second dot_general. On the CPU the
// row-major default stays implicit and only the preferred layouts show: none here, as
// the one value a product would want in another order is a reshape (a view).
func TestBuildDumpLayouts(t *testing.T) {
	model := filepath.Join("..", "..", "examples", "transformer_block.tir")
	src, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	// The default pipeline, whatever fuse chooses, and without fuse, where every
	// value is materialised and the layouts can be asserted one by one.
	for _, c := range []struct {
		target  string
		disable []string
		lines   []string
		absent  string
	}{
		{"tpu-v6e", nil, []string{
			"func @transformer_block(%x: f32[64,256]{1,0:T(8,128)}, %attn_norm: f32[256]{0:T(256)}, %wq: f32[256,256]{1,0:T(8,128)},",
			") -> f32[64,256]{1,0:T(8,128)} {\n",
			"%visible = compare %row, %col {dir=ge} : i1[64,64]{1,0:T(32,128)(4,1)}\n",
		}, ""},
		{"tpu-v6e", []string{"fuse"}, []string{
			"func @transformer_block(%x: f32[64,256]{1,0:T(8,128)}, %attn_norm: f32[256]{0:T(256)}, %wq: f32[256,256]{1,0:T(8,128)},",
			"  %pos = iota {axis=0} : f32[64,32]{0,1:T(8,128)}\n",
			"  %q1 = slice %qh {limit=[4,64,32], start=[0,0,0]} : f32[4,64,32]{1,2,0:T(8,128)}\n",
			"  %ctx = dot_general %probs, %v3 {lhs_batch=[0], lhs_contract=[2], rhs_batch=[1], rhs_contract=[0]} : f32[4,64,64]{2,1,0:T(8,128)}\n",
			"  %y = add %x1, %down : f32[64,256]{1,0:T(8,128)}\n",
		}, "%vh"},
		{"cpu", []string{"fuse"}, []string{
			"func @transformer_block(%x: f32[64,256], %attn_norm: f32[256],",
			// A reshape stays row-major on the cpu target, where it is a
			// view, though the product contracts its dimension 0: here no
			// value carries a layout at all.
			"  %v3 = reshape %v : f32[64,4,64]\n",
			"  %ctx = dot_general %probs, %v3 {lhs_batch=[0], lhs_contract=[2], rhs_batch=[1], rhs_contract=[0]} : f32[4,64,64]\n",
		}, "]{"},
	} {
		dir := filepath.Join(t.TempDir(), "dumps")
		target, _ := engine.LookupTarget(c.target)
		want := lowered(t, string(src), "", passes.Options{Target: target, Disable: c.disable})
		args := []string{"build", model, "--target", c.target, "--dump-after=assign-layout", "--dump-dir=" + dir}
		for _, d := range c.disable {
			args = append(args, "--disable="+d)
		}
		tpucc(t, "", args...).want(t, 0, want, "")
		// The pass's number in the dump's name is its place in the default pipeline.
		seq := slices.IndexFunc(passes.Default(), func(p passes.Pass) bool { return p.Name == "assign-layout" }) + 1
		name := fmt.Sprintf("transformer_block_%02d_assign-layout.tir", seq)
		if got := strings.Join(entries(t, dir), " "); got != "transformer_block_00_input.tir "+name {
			t.Fatalf("%s: dumps: %s", c.target, got)
		}
		dump, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range c.lines {
			if !strings.Contains(string(dump), line) {
				t.Errorf("%s: the dump lacks %q:\n%s", c.target, line, dump)
			}
		}
		if c.absent != "" && strings.Contains(string(dump), c.absent) {
			t.Errorf("%s: the dump has %q:\n%s", c.target, c.absent, dump)
		}
		// On a TPU every type in the dump carries a tiled layout.
		if strings.HasPrefix(c.target, "tpu-") {
			if bad := untiled.FindString(string(dump)); bad != "" {
				t.Errorf("%s: the dump has a type without a tiled layout: %q", c.target, bad)
			}
		}
		// The dump is .tir that checks and formats back to itself.
		r := tpucc(t, "", "fmt", filepath.Join(dir, name))
		r.want(t, 0, string(dump), "")
	}
}
