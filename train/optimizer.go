// Package train builds the compiled training step: the loss, its gradient (package
// autodiff) and the optimizer's update as one IR function, so that one executable runs a
// whole step. It imports only ir and autodiff.
package train

import "fmt"

// Kind names an optimizer.
type Kind string

// The optimizers, each computing exactly what the torch.optim class of that name does.
const (
	SGD   Kind = "sgd"
	AdamW Kind = "adamw"
)

// Schedule is a learning-rate schedule: a multiplier of Optimizer.LR as a function of
// the step count (0 for the first step), as a torch LambdaLR stepped after each update.
type Schedule struct {
	// Warmup and Total are in steps. Both 0: a constant rate. Otherwise the rate rises
	// linearly from 0 over Warmup steps, then falls along half a cosine to 0 at Total,
	// as transformers' get_cosine_schedule_with_warmup.
	Warmup, Total int
}

// Optimizer is an update rule and its hyperparameters. Start from NewSGD or NewAdamW,
// which fill in torch's defaults.
type Optimizer struct {
	Kind Kind
	LR   float64
	// WeightDecay is SGD's L2 term added to the gradient, and AdamW's decoupled decay.
	WeightDecay float64
	// Momentum and Nesterov are SGD's; 0 momentum keeps no state.
	Momentum float64
	Nesterov bool
	// Beta1, Beta2 and Eps are AdamW's.
	Beta1, Beta2, Eps float64
	// ClipNorm, when positive, scales the gradients so that their global L2 norm is at
	// most ClipNorm, as torch.nn.utils.clip_grad_norm_.
	ClipNorm float64
	Schedule Schedule
}

// NewSGD is torch.optim.SGD's defaults: no momentum, no weight decay.
func NewSGD(lr float64) Optimizer { return Optimizer{Kind: SGD, LR: lr} }

// NewAdamW is torch.optim.AdamW's defaults: betas (0.9, 0.999), eps 1e-8, weight decay 0.01.
func NewAdamW(lr float64) Optimizer {
	return Optimizer{Kind: AdamW, LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
}

// check refuses what torch refuses, and what the step cannot compute.
func (o Optimizer) check() error {
	switch {
	case o.Kind != SGD && o.Kind != AdamW:
		return fmt.Errorf("train: unknown optimizer %q (sgd or adamw)", o.Kind)
	case !(o.LR >= 0):
		return fmt.Errorf("train: invalid learning rate %g", o.LR)
	case o.WeightDecay < 0:
		return fmt.Errorf("train: invalid weight decay %g", o.WeightDecay)
	case o.ClipNorm < 0:
		return fmt.Errorf("train: invalid clip norm %g", o.ClipNorm)
	case o.Schedule.Warmup < 0 || o.Schedule.Total < 0 || o.Schedule.Warmup > o.Schedule.Total:
		return fmt.Errorf("train: invalid schedule: warm-up %d steps, total %d", o.Schedule.Warmup, o.Schedule.Total)
	}
	if o.Kind == SGD {
		if o.Momentum < 0 {
			return fmt.Errorf("train: invalid momentum %g", o.Momentum)
		}
		if o.Nesterov && o.Momentum == 0 {
			return fmt.Errorf("train: Nesterov momentum requires a momentum")
		}
		return nil
	}
	if !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1) {
		return fmt.Errorf("train: invalid betas (%g, %g): each in [0, 1)", o.Beta1, o.Beta2)
	}
	if !(o.Eps >= 0) {
		return fmt.Errorf("train: invalid eps %g", o.Eps)
	}
	return nil
}

// StateNames returns the suffixes of the state tensors kept per parameter, in order.
func (o Optimizer) StateNames() []string {
	switch {
	case o.Kind == AdamW:
		return []string{"exp_avg", "exp_avg_sq"}
	case o.Momentum != 0:
		return []string{"momentum_buffer"}
	}
	return nil
}

// Donate returns the positions of the step's parameters and state among its arguments,
// for the engine's Options.Donate: each call consumes them, and a backend that can
// writes their new values in their storage.
func (o Optimizer) Donate(nParams int) []int {
	n := nParams * (1 + len(o.StateNames()))
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
