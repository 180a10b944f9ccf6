package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// Benchmarks of the reference executor on small programs, one kernel family
// each, in f32 and bf16: go test -run '^$' -bench . ./backend/cpu. They assert
// nothing about time; they exist to compare the executor before and after a
// change.
var benchPrograms = []struct{ name, src string }{
	{"mlp-f32", `func @f(%x: f32[64,1024], %w1: f32[1024,1024], %b1: f32[1024], %w2: f32[1024,256]) -> f32[64,256] {
  %h = matmul %x, %w1 : f32[64,1024]
  %hb = add %h, %b1 : f32[64,1024]
  %a = relu %hb
  %y = matmul %a, %w2 : f32[64,256]
  return %y
}`},
	{"matmul-bf16", `func @f(%x: bf16[64,512], %w: bf16[512,512]) -> bf16[64,512] {
  %y = matmul %x, %w : bf16[64,512]
  return %y
}`},
	{"elementwise-f32", `func @f(%x: f32[512,512], %y: f32[512,512]) -> f32[512,512] {
  %a = add %x, %y
  %b = mul %a, %x
  %c = exp %b
  %d = max %c, %y
  return %d
}`},
	{"elementwise-bf16", `func @f(%x: bf16[512,512], %y: bf16[512,512]) -> bf16[512,512] {
  %a = add %x, %y
  %b = mul %a, %x
  %c = exp %b
  %d = max %c, %y
  return %d
}`},
	{"reduce-softmax-f32", `func @f(%x: f32[256,1024]) -> (f32[256], f32[1024], f32[256,1024]) {
  %r = reduce_sum %x {axes=[1]} : f32[256]
  %c = reduce_max %x {axes=[0]} : f32[1024]
  %s = softmax %x {axis=1}
  return %r, %c, %s
}`},
	{"shape-f32", `func @f(%x: f32[256,1024]) -> (f32[1024,256], f32[128,512], f32[256,1024,2]) {
  %t = transpose %x {perm=[1,0]}
  %s = slice %x {start=[0,0], limit=[256,1024], stride=[2,2]}
  %b = broadcast %x {dims=[0,1]} : f32[256,1024,2]
  return %t, %s, %b
}`},
	{"int-i32", `func @f(%x: i32[512,512], %y: i32[512,512]) -> (i32[512,512], i32[512]) {
  %a = add %x, %y
  %b = mul %a, %x
  %r = reduce_sum %b {axes=[1]} : i32[512]
  return %b, %r
}`},
}

func BenchmarkRun(b *testing.B) {
	for _, p := range benchPrograms {
		b.Run(p.name, func(b *testing.B) {
			m, err := tir.Parse("b.tir", []byte(p.src))
			if err != nil {
				b.Fatal(err)
			}
			f := m.Funcs[0]
			args := RandomInputs(f, 1)
			b.ResetTimer()
			for range b.N {
				if _, err := Run(m, f, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
