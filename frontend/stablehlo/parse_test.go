package stablehlo

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func wrap(body string) string {
	return "module @m {\n  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<3xi32>) -> tensor<4xf32> {\n" + body + "  }\n}\n"
}

// TestErrors: each refusal names the construct at its line and column.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{wrap("    %0 = stablehlo.uniform_quantize %arg0 : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:10: error: unsupported op stablehlo.uniform_quantize"},
		{wrap("    %0 = \"chlo.erfc\"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:10: error: unsupported op chlo.erfc"},
		{"module @m {\n  sdy.mesh @mesh = <[\"x\"=2]>\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    return %arg0 : tensor<4xf32>\n  }\n}\n",
			"e.mlir:2:3: error: unsupported op sdy.mesh (a program split over a mesh)"},
		{"func.func @main(%arg0: tensor<4xtf32>) -> tensor<4xtf32> {\n  return %arg0 : tensor<4xtf32>\n}\n",
			"e.mlir:1:33: error: unsupported element type tf32"},
		{"func.func @main(%arg0: tensor<?xf32>) -> tensor<4xf32> {\n  return %arg0 : tensor<4xf32>\n}\n",
			"e.mlir:1:31: error: unsupported dynamic dimension '?' in a tensor type"},
		{wrap("    %0 = stablehlo.add %arg0, %x : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:31: error: undefined value %x"},
		{wrap("    %0 = stablehlo.compare LT, %arg0, %arg0, PARTIALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n    return %arg0 : tensor<4xf32>\n"),
			"e.mlir:3:46: error: unsupported compare type PARTIALORDER"},
		{wrap("    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:10: error: stablehlo.add: result 0 is tensor<4xf32>, the text says tensor<3xf32>"},
		{wrap("    %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:35: error: dense literal of shape [2] does not match its type f32[4]"},
		{wrap("    %cst = stablehlo.constant dense<1.0> : tensor<f32>\n    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.and across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n    return %arg0 : tensor<4xf32>\n"),
			"e.mlir:4:10: error: unsupported form of stablehlo.reduce: the body is not one add, maximum, minimum or multiply"},
		{"func.func @main(%arg0: !stablehlo.token) -> tensor<4xf32> {\n",
			"e.mlir:1:24: error: unsupported type !stablehlo.token"},
		{wrap("    %0 = stablehlo.constant dense<1.0> : tensor<1099511627776x1099511627776xf32>\n    return %arg0 : tensor<4xf32>\n"),
			"e.mlir:3:35: error: constant type tensor<1099511627776x1099511627776xf32> has too many elements"},
		{wrap("    %s = stablehlo.constant dense<[5]> : tensor<1xi64>\n    %0 = stablehlo.dynamic_reshape %arg0, %s : (tensor<4xf32>, tensor<1xi64>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:4:10: error: unsupported form of stablehlo.dynamic_reshape: its shape operand must be a constant equal to the result's shape"},
		{"func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {\n  %0 = \"stablehlo.sort\"(%arg0) <{dimension = 1 : i64}> ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n" + jaxSortF32[strings.Index(jaxSortF32, "  %cst "):strings.Index(jaxSortF32, "}\n")] + "  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>\n}\n",
			"e.mlir:21:10: error: unsupported use of %0: the sorted values of a stablehlo.sort of rank above 1"},
		{strings.Repeat("[", 300), "e.mlir:1:1: error: expected module or func.func, found \"[\""},
	} {
		_, err := Parse("e.mlir", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s\ngot  %v\nwant %s", c.src, err, c.want)
		}
	}
}

// TestConstants: dense literals in every form JAX prints read to the same values.
func TestConstants(t *testing.T) {
	src := `func.func @main() -> (tensor<2xf32>, tensor<2x2xi32>, tensor<3xbf16>, tensor<2xi1>, tensor<2xf32>, tensor<0x2xf32>) {
  %0 = stablehlo.constant dense<[0x7FC00000, -1.5e+00]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>
  %2 = stablehlo.constant dense<0x3F80> : tensor<3xbf16>
  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %4 = stablehlo.constant dense<"0x0000803F000000C0"> : tensor<2xf32>
  %5 = stablehlo.constant dense<> : tensor<0x2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<2x2xi32>, tensor<3xbf16>, tensor<2xi1>, tensor<2xf32>, tensor<0x2xf32>
}
`
	m, err := Parse("c.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	lit := func(i int) *ir.Literal { return m.Funcs[0].Body.Instrs[i].Attr.(*ir.ConstAttr).Value }
	if l := lit(0); !math.IsNaN(l.Floats[0]) || l.Floats[1] != -1.5 {
		t.Errorf("f32 hex and decimal: %v", l)
	}
	if l := lit(1); l.String() != "[][1 -2 3 4]" {
		t.Errorf("nested i32: %v", l)
	}
	if l := lit(2); l.String() != "[1][]" {
		t.Errorf("bf16 hex splat: %v", l)
	}
	if l := lit(3); l.String() != "[][1 0]" {
		t.Errorf("i1: %v", l)
	}
	if l := lit(4); l.String() != "[1 -2][]" {
		t.Errorf("hex blob: %v", l)
	}
	if l := lit(5); l.Len() != 0 {
		t.Errorf("empty: %v", l)
	}
}

// TestUnsignedConstants: ui64 literals above 2^63 (decimal and hex blob) are
// held as their bit patterns; sub-byte blobs take a byte an element, of which
// the low bits count; out-of-range literals are refused at their position.
func TestUnsignedConstants(t *testing.T) {
	src := `func.func @main() -> (tensor<2xui64>, tensor<2xui64>, tensor<3xi4>, tensor<2xui2>, tensor<2xui16>, tensor<2xi2>) {
  %0 = stablehlo.constant dense<[18446744073709551615, 9223372036854775808]> : tensor<2xui64>
  %1 = stablehlo.constant dense<"0xFEFFFFFFFFFFFFFF0700000000000000"> : tensor<2xui64>
  %2 = stablehlo.constant dense<"0x0F08F7"> : tensor<3xi4>
  %3 = stablehlo.constant dense<"0x0307"> : tensor<2xui2>
  %4 = stablehlo.constant dense<[65535, 0x10]> : tensor<2xui16>
  %5 = stablehlo.constant dense<[-2, 1]> : tensor<2xi2>
  return %0, %1, %2, %3, %4, %5 : tensor<2xui64>, tensor<2xui64>, tensor<3xi4>, tensor<2xui2>, tensor<2xui16>, tensor<2xi2>
}
`
	m, err := Parse("u.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	lit := func(i int) string { return m.Funcs[0].Body.Instrs[i].Attr.(*ir.ConstAttr).Value.String() }
	want := []string{"[][-1 -9223372036854775808]", "[][-2 7]", "[][-1 -8 7]", "[][3 3]", "[][65535 16]", "[][-2 1]"}
	for i, w := range want {
		if got := lit(i); got != w {
			t.Errorf("constant %d: %s, want %s", i, got, w)
		}
	}
	bad := []struct{ lit, err string }{
		{"dense<18446744073709551616> : tensor<ui64>", "b.mlir:2:33: error: 18446744073709551616 is not a u64"},
		{"dense<-1> : tensor<ui64>", "b.mlir:2:33: error: -1 is not a u64"},
		{"dense<8> : tensor<i4>", "b.mlir:2:33: error: 8 is not a i4"},
		{"dense<4> : tensor<ui2>", "b.mlir:2:33: error: 4 is not a u2"},
	}
	for _, c := range bad {
		typ := c.lit[strings.Index(c.lit, ": ")+2:]
		src := "func.func @main() -> " + typ + " {\n  %0 = stablehlo.constant " + c.lit + "\n  return %0 : " + typ + "\n}\n"
		if _, err := Parse("b.mlir", []byte(src)); err == nil || err.Error() != c.err {
			t.Errorf("%s: got %v, want %s", c.lit, err, c.err)
		}
	}
}

var fuzzDiag = regexp.MustCompile(`^fuzz\.mlir:[0-9]+:[0-9]+: error: `)

// FuzzParse: Parse never panics, and refuses bad text as fuzz.mlir:LINE:COL: error: ...
// The seed corpus is every lowering golden's out.hlo and the JAX exports.
func FuzzParse(f *testing.F) {
	// The golden lowerings, and the region forms read as compositions.
	for _, src := range append(corpus(f), mapRelu, sortByKey, pointGather, windowScatter, tupleNested, quantizedOps,
		specialOps, generalWindow, scatterSet, strings.NewReplacer("MESH", "<[]>", "REF", "m").Replace(meshProgram)) {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse("fuzz.mlir", src)
		if err != nil {
			if m != nil {
				t.Errorf("Parse returned both a module and an error")
			}
			if !fuzzDiag.MatchString(err.Error()) {
				t.Fatalf("diagnostic %q is not fuzz.mlir:LINE:COL: error: MSG", err)
			}
			return
		}
		if err := ir.Verify(m); err != nil {
			t.Fatalf("accepted module does not verify: %v", err)
		}
	})
}
