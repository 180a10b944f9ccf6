package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

const reducer = `({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    })`

// TestCollectiveImport: replica groups lose the -1 padding of ragged rows,
// the channel handle and use_global_device_ids are kept, and the reducer
// body becomes the reduction kind.
func TestCollectiveImport(t *testing.T) {
	src := wrap(`    %0 = "stablehlo.all_reduce"(%arg0) ` + reducer + ` {replica_groups = dense<[[0, 2], [1, -1]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.collective_permute"(%0) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
`)
	m, err := Parse("c.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `func @main(%arg0: f32[4], %arg1: i32[3]) -> f32[4] {
  %0 = all_reduce %arg0 {channel=3, channel_type=1, global_ids=true, groups=[[0,2],[1]], kind=sum} : f32[4]
  %1 = collective_permute %0 {pairs=[[0,1],[1,0]]} : f32[4]
  return %1
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCollectiveErrors: the forms the importer refuses, each at its position.
func TestCollectiveErrors(t *testing.T) {
	sub := `({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.subtract %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    })`
	for _, c := range []struct{ op, want string }{
		{`"stablehlo.all_reduce"(%arg0) ` + sub + ` {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>`,
			"e.mlir:3:10: error: unsupported form of stablehlo.all_reduce: the body is not one add, maximum, minimum or multiply of its two parameters"},
		{`"stablehlo.collective_reduce"(%arg0) ` + reducer + ` {replica_groups = dense<[[0]]> : tensor<1x1xi64>, has_dynamic_root} : (tensor<4xf32>) -> tensor<4xf32>`,
			"e.mlir:7:58: error: unsupported form of stablehlo.collective_reduce: has_dynamic_root"},
		{`"stablehlo.all_gather"(%arg0) {all_gather_dim = 0 : i64, replica_groups = dense<> : tensor<0x0xi64>} : (tensor<4xf32>) -> tensor<4xf32>`,
			"e.mlir:3:84: error: unsupported form of stablehlo.all_gather: empty replica_groups (every process in one group)"},
		{`"stablehlo.collective_broadcast"(%arg0) {replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>`,
			"e.mlir:3:10: error: stablehlo.collective_broadcast: collective_broadcast names id 0 in more than one place of its replica groups"},
		{`"stablehlo.all_reduce"(%arg0) ` + reducer + ` {replica_groups = dense<[[0]]> : tensor<1x1xi64>, channel_handle = 1} : (tensor<4xf32>) -> tensor<4xf32>`,
			"e.mlir:7:75: error: stablehlo.all_reduce: channel_handle must be #stablehlo.channel_handle<handle = H, type = T>"},
	} {
		_, err := Parse("e.mlir", []byte(wrap("    %0 = "+c.op+"\n    return %0 : tensor<4xf32>\n")))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// TestRunParallelErrors: interpreter.run_parallel's refusals, by position.
func TestRunParallelErrors(t *testing.T) {
	prog := "func.func @p(%x: tensor<2xi64>) -> tensor<2xi64> {\n  return %x : tensor<2xi64>\n}\n"
	for _, c := range []struct{ main, want string }{
		{`%0 = stablehlo.constant dense<1> : tensor<2xi64>
  %1 = stablehlo.add %0, %0 : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%0, %1) {programs = [[@p], [@p]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)`,
			"t.mlir:7:41: error: unsupported form of interpreter.run_parallel: operand 1 is not a constant"},
		{`%0 = stablehlo.constant dense<1> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%0) {programs = [[@p], [@p]]} : (tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)`,
			"t.mlir:6:10: error: interpreter.run_parallel: the programs take 2 operands and give 2 results, the op has 1 and 2"},
		{`%0 = stablehlo.constant dense<1> : tensor<2xi32>
  %r:2 = "interpreter.run_parallel"(%0, %0) {programs = [[@p], [@p]]} : (tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi64>, tensor<2xi64>)`,
			"t.mlir:6:37: error: interpreter.run_parallel: operand 0 is tensor<2xi32>, @p takes tensor<2xi64>"},
		{`%r = "interpreter.run_parallel"() {programs = [[@q]]} : () -> tensor<2xi64>`,
			"t.mlir:5:51: error: interpreter.run_parallel: programs must name functions, got \"q\""},
		{`%r = "interpreter.run_parallel"() {programs = [[@p], []]} : () -> tensor<2xi64>`,
			"t.mlir:5:49: error: interpreter.run_parallel: programs must be a non-empty list of equally long, non-empty lists of functions"},
	} {
		src := prog + "func.func @main() {\n  " + c.main + "\n  func.return\n}\n"
		_, err := ParseTest("t.mlir", []byte(src))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// TestNumReplicasImport: mhlo.num_replicas becomes the module's replica
// count (1 is the default, kept implicit), and the collectives' groups are
// checked against it at the op; a count below 1 is refused at its value.
func TestNumReplicasImport(t *testing.T) {
	module := func(replicas, group string) string {
		return `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = ` + replicas + ` : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<8xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<` + group + `> : tensor<1x4xi64>}> ` + reducer + ` : (tensor<2xf32>) -> tensor<2xf32>
    %1 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<2xf32>) -> tensor<8xf32>
    return %0, %1 : tensor<2xf32>, tensor<8xf32>
  }
}
`
	}
	body := `func @main(%arg0: f32[2]) -> (f32[2], f32[8]) {
  %0 = all_reduce %arg0 {groups=[[0,1,2,3]], kind=sum} : f32[2]
  %1 = all_gather %arg0 {dim=0, groups=[[0,1,2,3]]} : f32[8]
  return %0, %1
}
`
	for _, c := range []struct{ replicas, group, want string }{
		{"4", "[[0, 1, 2, 3]]", "replicas = 4\n\n" + body},
		{"1", "[[0, 1, 2, 3]]", body},
	} {
		m, err := Parse("r.mlir", []byte(module(c.replicas, c.group)))
		if err != nil {
			t.Fatalf("num_replicas = %s: %v", c.replicas, err)
		}
		if got := ir.Print(m); got != c.want {
			t.Errorf("num_replicas = %s: got\n%s\nwant\n%s", c.replicas, got, c.want)
		}
	}
	for _, c := range []struct{ replicas, group, want string }{
		{"4", "[[0, 1, 2, 4]]", "r.mlir:3:10: error: all_reduce names replica 4, but the module has 4 replicas"},
		{"0", "[[0, 1, 2, 3]]", "r.mlir:1:78: error: mhlo.num_replicas = 0: a module has at least 1 replica"},
		{"2.5", "[[0, 1, 2, 3]]", `r.mlir:1:78: error: mhlo.num_replicas: expected an integer, found "2.5"`},
	} {
		_, err := Parse("r.mlir", []byte(module(c.replicas, c.group)))
		if err == nil || err.Error() != c.want {
			t.Errorf("num_replicas = %s, groups %s: got %v\nwant %s", c.replicas, c.group, err, c.want)
		}
	}
}
