package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestCustomCall: stablehlo.custom_call, pretty and generic, reads to ir's
// custom_call with the backend_config's bytes unescaped, the layouts as
// integer lists, the defaults where nothing is written, and JAX's kernel_name
// and frontend attributes left out.
func TestCustomCall(t *testing.T) {
	src := wrap(`    %0 = stablehlo.custom_call @tpu_custom_call(%arg0, %arg1) {backend_config = "{\22k\22: \00\FF\\x}", has_side_effect = true, api_version = 2 : i32, kernel_name = "kern", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>, tensor<3xi32>) -> tensor<4xf32>
    %1:2 = "stablehlo.custom_call"(%0) {call_target_name = "Sharding", output_operand_aliases = []} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)
    return %1#0 : tensor<4xf32>
`)
	m, err := Parse("cc.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []*ir.CustomCallAttr
	m.Func("main").Body.Walk(func(in *ir.Instr) {
		if a, ok := in.Attr.(*ir.CustomCallAttr); ok {
			got = append(got, a)
		}
	})
	if len(got) != 2 {
		t.Fatalf("%d custom calls:\n%s", len(got), ir.Print(m))
	}
	a := got[0]
	if a.Target != "tpu_custom_call" || a.BackendConfig != "{\"k\": \x00\xff\\x}" || !a.HasSideEffect || a.APIVersion != 2 ||
		len(a.OperandLayouts) != 2 || len(a.OperandLayouts[1]) != 1 || a.OperandLayouts[1][0] != 0 || len(a.ResultLayouts) != 1 {
		t.Errorf("pretty form read as %+v", a)
	}
	if b := got[1]; b.Target != "Sharding" || b.BackendConfig != "" || b.HasSideEffect || b.OperandLayouts != nil {
		t.Errorf("generic form read as %+v", b)
	}
}

// TestCustomCallErrors: what ir's custom_call cannot hold is refused by name.
func TestCustomCallErrors(t *testing.T) {
	call := func(attrs string) string {
		return wrap("    %0 = stablehlo.custom_call @k(%arg0) {" + attrs + "} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n")
	}
	for _, c := range []struct{ src, want string }{
		{call(`api_version = 4 : i32, backend_config = {alpha = 1.0 : f32}`),
			"e.mlir:3:83: error: stablehlo.custom_call @k: a backend_config that is not a string (api_version 4's dictionary) is not supported"},
		{call(`output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]`),
			"e.mlir:3:68: error: stablehlo.custom_call @k: output_operand_aliases is not supported"},
		{call(`called_computations = [@f]`),
			"e.mlir:3:65: error: stablehlo.custom_call @k: called_computations is not supported"},
		{wrap("    %0 = stablehlo.custom_call @\"__cpu$k\"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
			"e.mlir:3:10: error: stablehlo.custom_call: custom_call target \"__cpu$k\" cannot be written in .tir: a target is letters, digits, '_' and '.', not starting with a digit"},
		{call(`schedule = 1 : i32`),
			"e.mlir:3:54: error: stablehlo.custom_call @k: unsupported attribute schedule"},
		{call(`operand_layouts = [dense<[0, 1]> : tensor<2xindex>]`),
			"e.mlir:3:10: error: stablehlo.custom_call: custom_call @k: operand layout 0 [0 1] is not a permutation of the dimensions of f32[4]"},
	} {
		_, err := Parse("e.mlir", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s\ngot  %v\nwant %s", c.src, err, c.want)
		}
	}
}
