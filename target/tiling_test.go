package target_test

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// (cmd/tpucc/report.go checks that a *target.Target is a passes.Target: target does
// not import passes, not even in tests.)

var tpus = []*target.Target{target.V4, target.V5e, target.V5p, target.V6e, target.V7x}

// xlaLayouts are the layouts and sizes XLA:TPU (libtpu 0.0.42.1, compile-only, jax
// 0.10.2) gave entry parameters of these types, on v4, v5e, v6e and TPU7x alike
// (compiled.as_text() and memory_analysis().argument_size_in_bytes). Where XLA chose
// another minor-to-major order than row-major, the case gives that layout to Bytes.
var xlaLayouts = []struct {
	ty     string // the type as .tir writes it
	layout string // XLA's layout
	bytes  int64
	given  bool // the layout is not row-major: pass it in the type
}{
	{"f32[3,5]", "{1,0:T(4,128)}", 2048, false},
	{"f32[1,5]", "{1,0:T(1,128)}", 512, false},
	{"f32[2,5]", "{1,0:T(2,128)}", 1024, false},
	{"f32[4,5]", "{1,0:T(4,128)}", 2048, false},
	{"f32[5,5]", "{1,0:T(8,128)}", 4096, false},
	{"f32[9,130]", "{1,0:T(8,128)}", 16384, false},
	{"f32[64,256]", "{1,0:T(8,128)}", 65536, false},
	{"f32[7]", "{0:T(128)}", 512, false},
	{"f32[129]", "{0:T(256)}", 1024, false},
	{"f32[257]", "{0:T(512)}", 2048, false},
	{"f32[513]", "{0:T(1024)}", 4096, false},
	{"f32[1000]", "{0:T(1024)}", 4096, false},
	{"f32[1025]", "{0:T(1024)}", 8192, false},
	{"f32[5000]", "{0:T(1024)}", 20480, false},
	{"f32[]", "{:T(128)}", 512, false},
	{"f32[2,3,5]", "{2,0,1:T(2,128)}", 3072, true},
	{"f32[17,5]", "{0,1:T(8,128)}", 4096, true},
	{"u32[9,130]", "{1,0:T(8,128)}", 16384, false},
	{"bf16[3,5]", "{1,0:T(4,128)(2,1)}", 1024, false},
	{"bf16[1,5]", "{1,0:T(2,128)(2,1)}", 512, false},
	{"bf16[2,5]", "{1,0:T(2,128)(2,1)}", 512, false},
	{"bf16[4,5]", "{1,0:T(4,128)(2,1)}", 1024, false},
	{"bf16[5,5]", "{1,0:T(8,128)(2,1)}", 2048, false},
	{"bf16[9,130]", "{1,0:T(8,128)(2,1)}", 8192, false},
	{"bf16[64,64]", "{1,0:T(8,128)(2,1)}", 16384, false},
	{"bf16[7]", "{0:T(256)(128)(2,1)}", 512, false},
	{"bf16[257]", "{0:T(512)(128)(2,1)}", 1024, false},
	{"bf16[1000]", "{0:T(1024)(128)(2,1)}", 2048, false},
	{"bf16[5000]", "{0:T(1024)(128)(2,1)}", 10240, false},
	{"bf16[]", "{:T(256)}", 512, false},
	{"bf16[2,3,5]", "{2,0,1:T(2,128)(2,1)}", 1536, true},
	{"f16[3,5]", "{1,0:T(4,128)(2,1)}", 1024, false},
	{"i16[9,130]", "{1,0:T(8,128)(2,1)}", 8192, false},
	{"i8[3,5]", "{1,0:T(4,128)(4,1)}", 512, false},
	{"i8[1,5]", "{1,0:T(4,128)(4,1)}", 512, false},
	{"i8[5,5]", "{1,0:T(8,128)(4,1)}", 1024, false},
	{"i8[9,130]", "{1,0:T(8,128)(4,1)}", 4096, false},
	{"i8[31,256]", "{1,0:T(8,128)(4,1)}", 8192, false},
	{"i8[32,256]", "{1,0:T(32,128)(4,1)}", 8192, false},
	{"i8[33,256]", "{1,0:T(8,128)(4,1)}", 10240, false},
	{"i8[64,64]", "{1,0:T(32,128)(4,1)}", 8192, false},
	{"i8[2,3,5]", "{2,1,0:T(4,128)(4,1)}", 1024, false},
	{"i8[7]", "{0:T(512)(128)(4,1)}", 512, false},
	{"i8[513]", "{0:T(1024)(128)(4,1)}", 1024, false},
	{"i8[5000]", "{0:T(1024)(128)(4,1)}", 5120, false},
	{"i8[]", "{:T(512)}", 512, false},
	{"u8[9,130]", "{1,0:T(8,128)(4,1)}", 4096, false},
	{"i1[3,5]", "{1,0:T(4,128)(4,1)}", 512, false},
	{"i1[5,5]", "{1,0:T(8,128)(4,1)}", 1024, false},
	{"i1[9,130]", "{1,0:T(8,128)(4,1)}", 4096, false},
	{"i1[64,64]", "{1,0:T(32,128)(4,1)}", 8192, false},
	{"i1[1024,1024]", "{1,0:T(32,128)(4,1)}", 1048576, false},
	{"i1[1000]", "{0:T(1024)(128)(4,1)}", 1024, false},
	{"i1[]", "{:T(512)}", 512, false},
	{"f64[1,5]", "{1,0:T(1,128)}", 1024, false},
	{"f64[9,130]", "{1,0:T(8,128)}", 32768, false},
	{"f64[]", "{:T(128)}", 1024, false},
	{"i64[3,5]", "{1,0:T(4,128)}", 4096, false},
}

func TestTilingMatchesXLA(t *testing.T) {
	for _, c := range xlaLayouts {
		ty := parseType(t, c.ty)
		for _, tg := range tpus {
			if c.given {
				withLayout := ty
				withLayout.Layout = parseLayout(t, c.layout)
				if got := tg.Bytes(withLayout); got != c.bytes {
					t.Errorf("%s: Bytes(%s%s) = %d, want %d", tg.Name(), c.ty, c.layout, got, c.bytes)
				}
				continue
			}
			if got := tg.Layout(ty).String(); got != c.layout {
				t.Errorf("%s: layout of %s = %s, want %s", tg.Name(), c.ty, got, c.layout)
			}
			if got := tg.Bytes(ty); got != c.bytes {
				t.Errorf("%s: Bytes(%s) = %d, want %d", tg.Name(), c.ty, got, c.bytes)
			}
			// A type that carries its default layout costs the same.
			withLayout := ty
			withLayout.Layout = tg.Layout(ty)
			if got := tg.Bytes(withLayout); got != c.bytes {
				t.Errorf("%s: Bytes(%s) = %d, want %d", tg.Name(), withLayout, got, c.bytes)
			}
		}
	}
}

// TestPadding: the padding the issue names, worked by hand.
func TestPadding(t *testing.T) {
	cases := []struct {
		ty             string
		tiles          string
		bytes, logical int64
	}{
		// f32[3,5]: rows 3 -> 4 under T(4,128), columns 5 -> 128: 4*128*4 bytes for 15 floats.
		{"f32[3,5]", "{1,0:T(4,128)}", 2048, 60},
		// bf16[3,5]: the same slots, 2 bytes each; (2,1) packs row pairs into words.
		{"bf16[3,5]", "{1,0:T(4,128)(2,1)}", 1024, 30},
		// i1[3,5]: stored like int8, one byte each, rows padded to 4 (four rows a word).
		{"i1[3,5]", "{1,0:T(4,128)(4,1)}", 512, 15},
		// f32[4,64,32], as the transformer's rotary halves: 32 lanes of 128 used.
		{"f32[4,64,32]", "{2,1,0:T(8,128)}", 131072, 32768},
		// f32[100000,100000]: columns 100000 -> 100096 (782 tiles of 128).
		{"f32[100000,100000]", "{1,0:T(8,128)}", 100000 * 100096 * 4, 100000 * 100000 * 4},
	}
	for _, c := range cases {
		ty := parseType(t, c.ty)
		if got := target.V5e.Layout(ty).String(); got != c.tiles {
			t.Errorf("layout of %s = %s, want %s", c.ty, got, c.tiles)
		}
		if got := target.V5e.Bytes(ty); got != c.bytes {
			t.Errorf("Bytes(%s) = %d, want %d", c.ty, got, c.bytes)
		}
		if got := target.V5e.LogicalBytes(ty); got != c.logical {
			t.Errorf("LogicalBytes(%s) = %d, want %d", c.ty, got, c.logical)
		}
		// The CPU stores values without padding.
		if got := refCPU.Bytes(ty); got != c.logical {
			t.Errorf("cpu: Bytes(%s) = %d, want %d", c.ty, got, c.logical)
		}
		if refCPU.Tiles(ty) != nil || refCPU.Layout(ty) != nil {
			t.Errorf("cpu: %s has tiles %v", c.ty, refCPU.Tiles(ty))
		}
	}
}

func TestBytesUnknown(t *testing.T) {
	sym := ir.Type{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}, ir.D(16)}}
	if got := target.V5e.Bytes(sym); got != -1 {
		t.Errorf("Bytes(%s) = %d, want -1", sym, got)
	}
	// A symbolic second-minor dimension gets the full tile.
	if got := target.V5e.Layout(sym).String(); got != "{1,0:T(8,128)}" {
		t.Errorf("layout of %s = %s, want {1,0:T(8,128)}", sym, got)
	}
	huge := ir.Tensor(ir.F32, 1<<40, 1<<30)
	if got := target.V5e.Bytes(huge); got != -1 {
		t.Errorf("Bytes(%s) = %d, want -1 (overflow)", huge, got)
	}
	bad := ir.Tensor(ir.F32, 8, 128)
	bad.Layout = &ir.Layout{MinorToMajor: []int{0}}
	if got := target.V5e.Bytes(bad); got != -1 {
		t.Errorf("Bytes with a layout of the wrong rank = %d, want -1", got)
	}
}

func TestMatmulAlign(t *testing.T) {
	for _, c := range []struct {
		t    *target.Target
		want int64
	}{{target.V4, 128}, {target.V5e, 128}, {target.V5p, 128}, {target.V6e, 256}, {target.V7x, 256}, {refCPU, 1}} {
		if got := c.t.MatmulAlign(); got != c.want {
			t.Errorf("%s: MatmulAlign = %d, want %d", c.t.Name(), got, c.want)
		}
	}
	if got := target.V5e.LocalBytes; got != 128<<20 {
		t.Errorf("v5e LocalBytes = %d", got)
	}
	if got := refCPU.LocalBytes; got != 1<<20 {
		t.Errorf("cpu LocalBytes = %d", got)
	}
}
