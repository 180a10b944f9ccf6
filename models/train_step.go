package models

import (
	"strings"

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
	// Saved is what the layer loops save for their reverse loops: each
	// layer's input and, unless RematLayers, the intermediates its backward
	// reads, stacked per layer (one [L, ...] buffer each; autodiff's
	// saved_* and res_* stacks). A part of the step's temporaries.
	Saved int64
}

// TrainMemoryOf sizes step (TrainStep's, nTrained parameters trained, opt's
// state). For a step split over a mesh (its entry's ArgShardings, as
// engine.ShardModule gives them) each figure is one device's: the pieces
// of its arguments, every dimension divided by the devices splitting it,
// rounded up as XLA pads; a gradient is split like its parameter.
func TrainMemoryOf(step *ir.Func, nTrained int, opt train.Optimizer) TrainMemory {
	var tm TrainMemory
	nState := nTrained * len(opt.StateNames())
	for i, p := range step.Params {
		b := pieceBytes(step, i)
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
	tm.Saved = loopSavedBytes(step)
	return tm
}

// loopSavedBytes sums the stacks that f's counted loops save for their
// reverse: the carried values of a forward loop (autodiff's cloneSaving)
// named saved_* or res_*, that start as a constant (zeros); a reverse loop
// carries the same stacks from the forward loop's results, not counted
// again. Loops nested in a body save per outer iteration, in its
// temporaries, and are not counted either.
func loopSavedBytes(f *ir.Func) int64 {
	var n int64
	for _, in := range f.Body.Instrs {
		if in.Op != ir.OpWhile {
			continue
		}
		for i, p := range in.Regions[ir.WhileBody].Params {
			saved := strings.HasPrefix(p.Name, "saved_") || strings.HasPrefix(p.Name, "res_")
			if d := in.Args[i].Def; saved && d != nil && d.Op == ir.OpConstant {
				size, _ := p.Type.NumElements()
				n += size * int64(p.Type.DType.Size())
			}
		}
	}
	return n
}

// pieceBytes is the size of one device's piece of f's parameter i: the
// whole parameter when f is not split over a mesh.
func pieceBytes(f *ir.Func, i int) int64 {
	t := f.Params[i].Type
	n := int64(t.DType.Size())
	var parts []int64
	if i < len(f.ArgShardings) && f.ArgShardings[i] != nil && f.Module != nil && len(f.Module.Meshes) > 0 {
		parts = f.ArgShardings[i].Parts(f.Module.Meshes[0])
	}
	for d, dim := range t.Shape {
		size := dim.Size
		if parts != nil {
			size = (size + parts[d] - 1) / parts[d]
		}
		n *= size
	}
	return n
}
