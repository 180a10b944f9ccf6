// Command moe_dense runs the dense mixture of experts of
// examples/moe_dense.tir, written in Go against package tensor
// (models.MoEDense), on seeded random inputs and prints its checksum:
//
//	go run ./examples/go/moe_dense
package main

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/examples/go/models"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// weight draws a weight uniform in [-1, 1)/sqrt(fanIn).
func weight(seed, fanIn int64, shape ...int64) *tensor.Tensor {
	return tensor.Random(seed, ir.F32, shape...).Mul(tensor.Scalar(1/math.Sqrt(float64(fanIn)), ir.F32))
}

func main() {
	const tokens, width, experts, ffn = 32, 128, 8, 256
	x := tensor.Random(1, ir.F32, tokens, width)
	wRouter := weight(2, width, width, experts)
	wGate := weight(3, width, experts, width, ffn)
	wUp := weight(4, width, experts, width, ffn)
	wDown := weight(5, ffn, experts, ffn, width)

	// Eager: op by op on the CPU reference kernels.
	y := models.MoEDense(x, wRouter, wGate, wUp, wDown)
	fmt.Printf("moe_dense eager: %s checksum %.6f\n", y.Type(), models.Checksum(y))

	// Compiled: traced once for these shapes, optimised, and run as one program
	// (a later call with the same shapes reuses it).
	fast := compile.Func(models.MoEDense, compile.Name("moe_dense"), compile.CacheDir(""))
	z := fast(x, wRouter, wGate, wUp, wDown)
	fmt.Printf("moe_dense compiled: %s checksum %.6f\n", z.Type(), models.Checksum(z))
}
