package models

import (
	"errors"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// The routers' load-balancing loss, which transformers' Qwen3-MoE,
// Qwen2-MoE and Mixtral add to the causal-LM loss, times
// router_aux_loss_coef, when config.json's output_router_logits is true
// (hf.Config.RouterAuxLoss). Their load_balancing_loss_func (the same in
// the three, transformers 5) takes every MoE layer's router logits [N, E]
// (N = B·L tokens; a dense layer has no router and adds nothing), and with
// no attention mask (tpucc trains without padding) sums over all layers'
// tokens jointly:
//
//	picks_e = Σ_layers Σ_tokens [e is among the token's top_k]
//	probs_e = Σ_layers Σ_tokens softmax(logits)_e
//	aux     = E · Σ_e (picks_e / R) · (probs_e / R),  R = layers · N
//
// The top-k is over the routing probabilities (norm_topk_prob changes only
// the experts' combine weights, not which experts are picked nor the
// probabilities summed); the counts come from a histogram, so the gradient
// flows through the probabilities only. Rather than keep every layer's
// logits, a step carries the two sums through its layer loops
// (routerStats), as transformers' own accumulation does layer by layer.

// routerStats are a step's running sums over the MoE layers so far: probs
// and picks, f32 [E] each. picks is a sum of one-hots of the top-k indices,
// through which autodiff passes no gradient (one_hot is not differentiable).
type routerStats struct {
	probs, picks *tensor.Tensor
}

// newRouterStats starts the sums at zero for c's experts, or is nil when c
// adds no load-balancing loss.
func newRouterStats(c *hf.Config) *routerStats {
	if !c.RouterAuxLoss {
		return nil
	}
	zero := tensor.Scalar(0, ir.F32).BroadcastTo(int64(c.MoE.Experts))
	return &routerStats{probs: zero, picks: zero}
}

// add counts one MoE layer: its routing probabilities [N, E] and the
// indices [N, K] of each token's top-k. A nil r counts nothing.
func (r *routerStats) add(probs, topI *tensor.Tensor) {
	if r == nil {
		return
	}
	E := probs.Shape()[1]
	r.probs = r.probs.Add(probs.Sum(0))
	r.picks = r.picks.Add(topI.OneHot(E, ir.F32).Sum(0, 1))
}

// carry appends the sums to a loop's carried values.
func (r *routerStats) carry(cv []*tensor.Tensor) []*tensor.Tensor {
	if r == nil {
		return cv
	}
	return append(cv, r.probs, r.picks)
}

// uncarry takes the sums back from the end of carried values (carry's).
func (r *routerStats) uncarry(cv []*tensor.Tensor) {
	if r != nil {
		n := len(cv)
		r.probs, r.picks = cv[n-2], cv[n-1]
	}
}

// moeLayers counts c's MoE layers.
func moeLayers(c *hf.Config) int {
	n := 0
	for _, l := range c.Layers {
		if l.MoE {
			n++
		}
	}
	return n
}

// auxLossErr refuses a load-balancing loss over no MoE layer (every layer
// in mlp_only_layers, or decoder_sparse_step past the last): transformers'
// load_balancing_loss_func then fails (it reads the first router's logits,
// and there are none), where tpucc's would be 0/0.
func auxLossErr(c *hf.Config) error {
	if c.RouterAuxLoss && moeLayers(c) == 0 {
		return errors.New("models: config.json's output_router_logits is true but no layer is a MoE layer: " +
			"transformers' load-balancing loss fails without a router (IndexError); set it to false to train")
	}
	return nil
}

// loss is load_balancing_loss_func's value, each of c's MoE layers having
// routed the given number of tokens, in its order of operations: each sum divided by the rows
// first, the products summed, then times E.
func (r *routerStats) loss(c *hf.Config, tokens int64) *tensor.Tensor {
	rows := scalar(float64(int64(moeLayers(c)) * tokens))
	return r.picks.Div(rows).Mul(r.probs.Div(rows)).Sum(0).Mul(scalar(float64(c.MoE.Experts)))
}
