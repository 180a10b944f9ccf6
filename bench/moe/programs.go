package main

import (
	"fmt"
	"strings"
)

// shape is one MoE layer: T tokens of width H, E experts with SwiGLU FFNs of
// width F, top-K routing with renormalised weights (as Qwen3-MoE and Gemma 4).
type shape struct {
	name          string
	T, H, F, E, K int64
}

// params is the layer's signature, shared by both formulations.
func (s shape) params() string {
	return fmt.Sprintf("%%x: f32[%d,%d], %%w_router: f32[%d,%d], %%w_gate: f32[%d,%d,%d], %%w_up: f32[%d,%d,%d], %%w_down: f32[%d,%d,%d]",
		s.T, s.H, s.H, s.E, s.E, s.H, s.F, s.E, s.H, s.F, s.E, s.F, s.H)
}

// router writes the routing shared by both formulations: softmax, top-K,
// renormalised, and the combine weights [T,E] as a sum over k of one-hots.
func (s shape) router(b *strings.Builder) {
	fmt.Fprintf(b, "  %%logits = matmul %%x, %%w_router\n")
	fmt.Fprintf(b, "  %%probs = softmax %%logits {axis=1}\n")
	fmt.Fprintf(b, "  %%top_w, %%top_i = top_k %%probs {k=%d} : f32[%d,%d], i32[%d,%d]\n", s.K, s.T, s.K, s.T, s.K)
	fmt.Fprintf(b, "  %%top_sum = reduce_sum %%top_w {axes=[1], keepdims=true}\n")
	fmt.Fprintf(b, "  %%weights = div %%top_w, %%top_sum\n")
	fmt.Fprintf(b, "  %%hot = one_hot %%top_i {depth=%d} : f32[%d,%d,%d]\n", s.E, s.T, s.K, s.E)
	fmt.Fprintf(b, "  %%w3 = reshape %%weights : f32[%d,%d,1]\n", s.T, s.K)
	fmt.Fprintf(b, "  %%per_k = mul %%hot, %%w3\n")
	fmt.Fprintf(b, "  %%combine = reduce_sum %%per_k {axes=[1]}\n")
}

// dense is the layer as examples/moe_dense.tir writes it: every expert on
// every token, then contracted with the combine weights over experts.
func (s shape) dense() string {
	var b strings.Builder
	fmt.Fprintf(&b, "func @moe(%s) -> f32[%d,%d] {\n", s.params(), s.T, s.H)
	s.router(&b)
	fmt.Fprintf(&b, "  %%gate = dot_general %%x, %%w_gate {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d,%d]\n", s.T, s.E, s.F)
	fmt.Fprintf(&b, "  %%up = dot_general %%x, %%w_up {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d,%d]\n", s.T, s.E, s.F)
	fmt.Fprintf(&b, "  %%act = silu %%gate\n  %%gu = mul %%act, %%up\n")
	fmt.Fprintf(&b, "  %%expert_out = dot_general %%gu, %%w_down {lhs_batch=[1], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]} : f32[%d,%d,%d]\n", s.E, s.T, s.H)
	fmt.Fprintf(&b, "  %%y = dot_general %%combine, %%expert_out {lhs_batch=[0], rhs_batch=[1], lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]\n", s.T, s.H)
	b.WriteString("  return %y\n}\n")
	return b.String()
}

// perExpert is the layer as a loop over experts writes it: one branch per
// expert, each taking its matrices out of the stacks and its column of the
// combine weights, the branches added.
func (s shape) perExpert() string {
	var b strings.Builder
	fmt.Fprintf(&b, "func @moe(%s) -> f32[%d,%d] {\n", s.params(), s.T, s.H)
	s.router(&b)
	for e := int64(0); e < s.E; e++ {
		fmt.Fprintf(&b, "  %%i%d = constant %d : i32[]\n", e, e)
		for _, w := range []struct{ n, shape string }{{"gate", fmt.Sprintf("%d,%d", s.H, s.F)}, {"up", fmt.Sprintf("%d,%d", s.H, s.F)}, {"down", fmt.Sprintf("%d,%d", s.F, s.H)}} {
			fmt.Fprintf(&b, "  %%%s%d = take %%w_%s, %%i%d {axis=0} : f32[%s]\n", w.n, e, w.n, e, w.shape)
		}
		fmt.Fprintf(&b, "  %%g%d = matmul %%x, %%gate%d\n  %%u%d = matmul %%x, %%up%d\n", e, e, e, e)
		fmt.Fprintf(&b, "  %%a%d = silu %%g%d\n  %%h%d = mul %%a%d, %%u%d\n  %%o%d = matmul %%h%d, %%down%d\n", e, e, e, e, e, e, e, e)
		fmt.Fprintf(&b, "  %%c%d = take %%combine, %%i%d {axis=1} : f32[%d]\n", e, e, s.T)
		fmt.Fprintf(&b, "  %%cb%d = broadcast %%c%d {dims=[0]} : f32[%d,%d]\n", e, e, s.T, s.H)
		fmt.Fprintf(&b, "  %%t%d = mul %%o%d, %%cb%d\n", e, e, e)
		if e > 0 {
			prev := fmt.Sprintf("%%s%d", e-1)
			if e == 1 {
				prev = "%t0"
			}
			fmt.Fprintf(&b, "  %%s%d = add %s, %%t%d\n", e, prev, e)
		}
	}
	fmt.Fprintf(&b, "  return %%s%d\n}\n", s.E-1)
	return b.String()
}
