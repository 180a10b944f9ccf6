// Command transformer_block runs the decoder block of
// examples/transformer_block.tir, written in Go against package tensor
// (models.TransformerBlock), on seeded random inputs and prints its checksum:
//
//	go run ./examples/go/transformer_block
package main

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/examples/go/models"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// weight draws a [fanIn, ...] weight uniform in [-1, 1)/sqrt(fanIn).
func weight(seed int64, shape ...int64) *tensor.Tensor {
	return tensor.Random(seed, ir.F32, shape...).Mul(tensor.Scalar(1/math.Sqrt(float64(shape[0])), ir.F32))
}

func main() {
	const tokens, width, ffn = 64, 256, 512
	headDim := int64(width / models.Heads)
	x := tensor.Random(1, ir.F32, tokens, width)
	attnNorm := tensor.Ones(ir.F32, width)
	wq, wk, wv, wo := weight(2, width, width), weight(3, width, width), weight(4, width, width), weight(5, width, width)
	qNorm, kNorm := tensor.Ones(ir.F32, headDim), tensor.Ones(ir.F32, headDim)
	mlpNorm := tensor.Ones(ir.F32, width)
	wGate, wUp, wDown := weight(6, width, ffn), weight(7, width, ffn), weight(8, ffn, width)

	// Eager: op by op on the CPU reference kernels.
	y := models.TransformerBlock(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown)
	fmt.Printf("transformer_block eager: %s checksum %.6f\n", y.Type(), models.Checksum(y))

	// Compiled: traced once for these shapes, optimised, and run as one program
	// (a later call with the same shapes reuses it).
	fast := compile.Func(models.TransformerBlock, compile.Name("transformer_block"), compile.CacheDir(""))
	z := fast(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown)
	fmt.Printf("transformer_block compiled: %s checksum %.6f\n", z.Type(), models.Checksum(z))
}
