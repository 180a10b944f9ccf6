package models

import (
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/train"
)

// TrainStep is m's training step for batches of batch rows of length tokens:
// TraceLoss's loss through train.Step (so the parameters, then opt's state,
// the step count, the weights not trained and the batch), and how many
// parameters are trained. It needs only the weights' types, so an abstract
// model (a configuration alone) has one too: tpucc train --report compiles it
// for a TPU without the checkpoint.
func (m *Model) TrainStep(opt train.Optimizer, batch, length int64, labels bool) (*ir.Module, int, error) {
	loss, n, err := m.TraceLoss(batch, length, labels)
	if err != nil {
		return nil, 0, err
	}
	step, err := train.Step(loss, n, opt)
	return step, n, err
}

// TrainMemory is what a training step's arguments and gradients take, in
// bytes, as their types give it.
type TrainMemory struct {
	// Params are the trained parameters (f32), Grads their gradients (one
	// each, f32), State the optimizer's state, Fixed the weights not trained,
	// Batch the tokens (and labels) of one step.
	Params, Grads, State, Fixed, Batch int64
}

// TrainMemoryOf sizes step (TrainStep's, nTrained parameters trained, opt's
// state).
func TrainMemoryOf(step *ir.Func, nTrained int, opt train.Optimizer) TrainMemory {
	var tm TrainMemory
	nState := nTrained * len(opt.StateNames())
	for i, p := range step.Params {
		n, _ := p.Type.NumElements()
		b := n * int64(p.Type.DType.Size())
		switch {
		case i < nTrained:
			tm.Params += b
			tm.Grads += b
		case i < nTrained+nState:
			tm.State += b
		case i == nTrained+nState: // the step count
		case p.Type.DType.IsFloat():
			tm.Fixed += b
		default:
			tm.Batch += b
		}
	}
	return tm
}
