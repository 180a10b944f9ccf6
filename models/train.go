package models

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/models/safetensors"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// IgnoreLabel is the label of a token that the loss leaves out, as
// transformers' ignore_index.
const IgnoreLabel = -100

// Trained says which of m.Params training updates: all but the weights
// transformers keeps as buffers rather than parameters (Gemma 4's
// layer_scalar), which torch never changes.
func (m *Model) Trained() []bool {
	out := make([]bool, len(m.Params))
	for i, p := range m.Params {
		out[i] = !strings.HasSuffix(p.Name, ".LayerScalar")
	}
	return out
}

// lossOrder is m.Params' indices in the order the loss takes them: the
// trained ones, then the others (Trained).
func (m *Model) lossOrder() (order []int, nTrained int) {
	tr := m.Trained()
	for _, want := range []bool{true, false} {
		for i, t := range tr {
			if t == want {
				order = append(order, i)
			}
		}
		if want {
			nTrained = len(order)
		}
	}
	return order, nTrained
}

// LossTypes are the argument types of the causal-LM loss of batch rows of
// length tokens: the weights as f32, the trained ones first (lossOrder),
// the tokens i32[B, L] and, with labels, the labels i32[B, L].
func (m *Model) LossTypes(batch, length int64, labels bool) []ir.Type {
	var ts []ir.Type
	order, _ := m.lossOrder()
	for _, j := range order {
		ts = append(ts, ir.Tensor(ir.F32, m.Params[j].Type.Dims()...))
	}
	ts = append(ts, ir.Tensor(ir.I32, batch, length))
	if labels {
		ts = append(ts, ir.Tensor(ir.I32, batch, length))
	}
	return ts
}

// TraceLoss records the causal-LM loss of transformers (ForCausalLMLoss with
// labels = input_ids, or the labels given) as a module whose entry, @loss,
// takes LossTypes' arguments and returns the f32 scalar: the mean over the
// tokens whose next token's label is not IgnoreLabel of the cross-entropy of
// the logits (f32) at that token against it. With no such token it is NaN
// (0/0), as torch's. With output_router_logits (hf.Config.RouterAuxLoss)
// it adds router_aux_loss_coef times the routers' load-balancing loss over
// every token, labelled or not, as transformers' MoE classes do (see
// routerStats). It also returns how many of the weights are trained (they
// come first).
func (m *Model) TraceLoss(batch, length int64, labels bool) (*ir.Module, int, error) {
	return m.traceLoss(batch, length, labels, !lossLoops)
}

// traceLoss is TraceLoss, its layer groups unrolled over their stacks when
// unroll (allLogits).
func (m *Model) traceLoss(batch, length int64, labels, unroll bool) (*ir.Module, int, error) {
	if length < 2 {
		return nil, 0, fmt.Errorf("models: a causal-LM loss needs at least 2 tokens per row, got %d", length)
	}
	// Positions past max_position_embeddings are refused, as generate refuses
	// them: past it transformers changes some ropes (dynamic's theta,
	// LongRoPE's long factors) where tpucc's stay, so the loss would differ
	// silently (tpucc train checked this; the library did not).
	if limit := int64(m.Config.MaxPositions); length > limit {
		return nil, 0, fmt.Errorf("models: rows of %d tokens are longer than the model's max_position_embeddings %d", length, limit)
	}
	if err := auxLossErr(m.Config); err != nil {
		return nil, 0, err
	}
	order, nTrained := m.lossOrder()
	var names []string
	for _, j := range order {
		names = append(names, m.Params[j].Name)
	}
	names = append(names, "tokens")
	if labels {
		names = append(names, "labels")
	}
	mod, err := tensor.Trace("loss", names, m.LossTypes(batch, length, labels), func(ts []*tensor.Tensor) (out []*tensor.Tensor, err error) {
		defer tensor.Recover(&err)
		n := len(m.Params)
		weights := make([]*tensor.Tensor, n)
		for k, j := range order {
			weights[j] = ts[k]
		}
		tokens, lab := ts[n], ts[n]
		if labels {
			lab = ts[n+1]
		}
		logits, aux, err := m.allLogits(weights, tokens, unroll)
		if err != nil {
			return nil, err
		}
		loss := causalLMLoss(logits, lab)
		if aux != nil {
			// transformers' loss += router_aux_loss_coef * aux_loss.
			loss = loss.Add(scalar(m.Config.RouterAuxCoef).Mul(aux))
		}
		return []*tensor.Tensor{loss}, nil
	})
	return mod, nTrained, err
}

// allLogits runs the model over whole rows [B, L] with no cache before
// them: a step at slot 0 of a cache of exactly L slots, which nothing reads
// afterwards. The logits of every token: [B, L, V]; and, for a model whose
// training adds it (hf.Config.RouterAuxLoss), the routers' load-balancing
// loss (f32 []; else nil).
//
// Its layer groups run as while ops, as inference's do: autodiff reverses a
// counted while over the carries it saves, so the program stays the size of
// one trip whatever the depth. With unroll they run unrolled over their
// stacked weights instead (a trip per row, read with a static slice:
// stepIn.unrollStacks). The stacks are one parameter each either way, so a
// stacked weight's gradient is one [count, …] tensor.
func (m *Model) allLogits(weights []*tensor.Tensor, tokens *tensor.Tensor, unroll bool) (logits, aux *tensor.Tensor, err error) {
	s := tokens.Shape()
	B, L := s[0], s[1]
	zero := tensor.Scalar(0, ir.I32)
	args := []*tensor.Tensor{tokens, zero.BroadcastTo(B), zero}
	for _, t := range m.CacheTypes(B, L) {
		// f32 whatever CacheDType says: training computes in f32 (its
		// weights are f32), and attention follows its cache's dtype.
		args = append(args, tensor.Scalar(0, ir.F32).BroadcastTo(t.Dims()...))
	}
	withAux := m.Config.RouterAuxLoss
	out, err := m.stepAs(append(args, weights...), true, stepIn{fresh: true, unrollStacks: unroll, routerAux: withAux})
	if err != nil {
		return nil, nil, err
	}
	if withAux {
		return out[0], out[len(out)-1], nil
	}
	return out[0], nil, nil
}

// lossLoops makes the loss run looped layer groups as while ops, as
// inference does, instead of unrolled over their stacks (allLogits); a
// variable so that a test can compare the two.
var lossLoops = true

// causalLMLoss is the mean cross-entropy of logits [B, L, V] at each token
// against the label of the next one (labels [B, L] i32), over the tokens
// whose next label is not IgnoreLabel: labels shifted left by one, the last
// token predicting nothing.
//
// It is written so that the step never copies a [B, L, V] tensor: the last
// token's logits are kept (its label is IgnoreLabel) rather than sliced off,
// which would copy the logits forward and pad their gradient back; and each
// token's entry is picked by a select against an iota summed over V, not
// gathered: take's gradient is a scatter-add into a zeroed [B·L·V] tensor,
// where the select's is a select, which fuses into the log-softmax's
// gradient, and the forward sum reads the log-probabilities once.
func causalLMLoss(logits, labels *tensor.Tensor) *tensor.Tensor {
	s := logits.Shape()
	B, L, V := s[0], s[1], s[2]
	N := B * L
	logp := logits.LogSoftmax(-1).Reshape(N, V)
	last := tensor.Full(IgnoreLabel, ir.I32, B, 1)
	next := tensor.Concat(1, labels.Slice([]int64{0, 1}, []int64{B, L}, nil), last).Reshape(N, 1)
	// An ignored label (IgnoreLabel < 0) matches no column: its entry is 0,
	// and keep masks it out.
	hit := tensor.Iota(ir.I32, 1, N, V).Eq(next)
	picked := tensor.Where(hit, logp, tensor.Scalar(0, ir.F32)).Sum(1)
	keep := tensor.Where(next.Reshape(N).Eq(tensor.Scalar(IgnoreLabel, ir.I32)), tensor.Scalar(0, ir.F32), tensor.Scalar(1, ir.F32))
	return picked.Mul(keep).Sum(0).Neg().Div(keep.Sum(0))
}

// TrainOptions say where a Trainer's step runs.
type TrainOptions struct {
	Backend, Device, Precision string
	Cache                      *engine.Cache // nil: the process's default cache
	Labels                     bool          // Step takes labels besides the tokens
	// Mesh splits the step over that many devices of Device (ParseMesh):
	// "tp" splits the weights and their optimizer state as a Generator's
	// (models/shard.go), "dp" the batch rows, XLA summing the gradients
	// over them. The weights and state stay split on the devices between
	// steps, each step updating them in place (donated, as unsplit).
	Mesh *ir.Mesh
	// FSDP also splits the weights and their state over dp (on their first
	// dimension that dp divides, besides tp's): each data-parallel device
	// holds a share of them, as FSDP and ZeRO-3 do. It needs a Mesh.
	FSDP bool
	// UnrollLayers runs the loss's layer groups unrolled over their stacked
	// weights instead of as loops (TraceLoss): the program grows with the
	// depth (docs/TRAINING.md). The loops' backward reads each layer's
	// intermediates as the forward loop saved them, stacked per layer, as
	// the unrolled backward reads them.
	UnrollLayers bool
	// RematLayers: the layer loops' reverse recomputes each layer's forward
	// from its saved input (autodiff.Options.Remat, as jax.checkpoint around
	// a scan's body) instead of reading the intermediates the forward loop
	// saved: a second forward of every layer's products per step, for the
	// memory of the saved intermediates (docs/TRAINING.md).
	RematLayers bool
}

// Trainer trains a model's weights (as f32) with one compiled step that
// computes the loss, its gradient and the optimizer's update (train.Step);
// the weights and the optimizer's state are donated to each call (but on
// a mesh, TrainOptions.Mesh).
type Trainer struct {
	m      *Model
	opt    train.Optimizer
	fn     *engine.Function
	state  []*backend.Buffer // the trained weights, then the optimizer's state (train.Step's order)
	fixed  []*backend.Buffer // the weights not trained (Trained), in lossOrder
	steps  int
	labels bool
	unroll bool // TrainOptions.UnrollLayers
	remat  bool // TrainOptions.RematLayers
}

// NewTrainer starts training m's weights from the checkpoint's values, the
// optimizer's state zeros. It compiles nothing yet: Step compiles once per
// batch shape.
func NewTrainer(m *Model, opt train.Optimizer, o TrainOptions) (*Trainer, error) {
	if len(m.Params) == 0 || m.Params[0].Buffer == nil {
		return nil, errors.New("models: an abstract model has no weights to train")
	}
	if err := auxLossErr(m.Config); err != nil {
		return nil, err // before compiling, as TraceLoss would
	}
	order, nTrained := m.lossOrder()
	nState := nTrained * (1 + len(opt.StateNames()))
	donate := make([]int, nState)
	for i := range donate {
		donate[i] = i
	}
	t := &Trainer{m: m, opt: opt, labels: o.Labels, unroll: o.UnrollLayers, remat: o.RematLayers}
	name := m.Config.Arch + ".train"
	if o.UnrollLayers {
		name += ".unrolled" // another program than the looped step's
	}
	if o.RematLayers {
		name += ".remat"
	}
	eo := engine.Options{Name: name, Backend: o.Backend, Device: o.Device,
		Precision: o.Precision, Cache: o.Cache, NoAutoDynamic: true, Donate: donate, KeepOnDevice: o.Device != ""}
	switch {
	case o.Mesh != nil && o.Device == "":
		return nil, fmt.Errorf("models: a mesh (%s) splits training over a device's chips: name the device (TrainOptions.Device)", meshString(o.Mesh))
	case o.FSDP && (o.Mesh == nil || o.Mesh.Axis(AxisData) < 0):
		return nil, errors.New("models: FSDP splits the weights over a mesh's dp axis: give TrainOptions.Mesh with dp")
	case o.Mesh != nil:
		eo.Mesh = o.Mesh
		eo.Shardings, eo.ResultShardings = m.trainShardings(o.Mesh, len(opt.StateNames()), o.Labels, o.FSDP)
	}
	fn, err := engine.NewFunction(trainProgram{t, name}, eo)
	if err != nil {
		return nil, err
	}
	t.fn = fn
	var weights, state []*backend.Buffer
	k1 := 1 + len(opt.StateNames())
	for k, j := range order {
		p := m.Params[j]
		w := f32Copy(p.Buffer)
		if k >= nTrained {
			up, err := fn.UploadArg(nState+1+k-nTrained, w)
			if err != nil {
				return nil, fmt.Errorf("copying %s to the device: %w", p.Name, err)
			}
			t.fixed = append(t.fixed, up)
			continue
		}
		up, err := fn.UploadArg(k, w)
		if err != nil {
			return nil, fmt.Errorf("copying %s to the device: %w", p.Name, err)
		}
		weights = append(weights, up)
		for s := range k1 - 1 {
			z, err := fn.UploadArg(nTrained+k*(k1-1)+s, backend.New(w.Type()))
			if err != nil {
				return nil, err
			}
			state = append(state, z)
		}
	}
	t.state = append(weights, state...)
	return t, nil
}

// f32Copy is b as a fresh f32 buffer: the weights are trained in f32
// whatever the checkpoint's dtype, and never in the mapped checkpoint.
func f32Copy(b *backend.Buffer) *backend.Buffer {
	if b.Type().DType == ir.F32 {
		out := backend.New(b.Type())
		copy(out.Bytes(), b.Bytes())
		return out
	}
	return tensor.FromBuffer(b).Convert(ir.F32).Buffer()
}

// Step trains on one batch of tokens i32[B, L] (and labels of the same
// shape when the Trainer takes them; nil otherwise) and returns the loss
// before the update.
func (t *Trainer) Step(tokens, labels *backend.Buffer) (float32, error) {
	if (labels != nil) != t.labels {
		return 0, fmt.Errorf("models: the trainer was made with Labels %v", t.labels)
	}
	count := tensor.FromSlice([]int32{int32(t.steps)}).Buffer()
	var args []engine.Arg
	for _, b := range t.state {
		args = append(args, engine.TensorArg(b))
	}
	args = append(args, engine.TensorArg(count))
	for _, b := range t.fixed {
		args = append(args, engine.TensorArg(b))
	}
	args = append(args, engine.TensorArg(tokens))
	if labels != nil {
		args = append(args, engine.TensorArg(labels))
	}
	out, err := t.fn.Call(args)
	if err != nil {
		return 0, err
	}
	t.state = out[1:]
	t.steps++
	// Bytes copies a device's buffer to the host.
	return tensor.FromBuffer(out[0]).Float32s()[0], nil
}

// Prepare compiles the step for batches of batch rows of length tokens, so
// that Step's time is of running only.
func (t *Trainer) Prepare(batch, length int64) error {
	var args []engine.Arg
	for _, b := range t.state {
		args = append(args, engine.ShapeArg(b.Type()))
	}
	args = append(args, engine.ShapeArg(ir.Scalar(ir.I32)))
	for _, b := range t.fixed {
		args = append(args, engine.ShapeArg(b.Type()))
	}
	args = append(args, engine.ShapeArg(ir.Tensor(ir.I32, batch, length)))
	if t.labels {
		args = append(args, engine.ShapeArg(ir.Tensor(ir.I32, batch, length)))
	}
	_, err := t.fn.Lower(args)
	return err
}

// Weights are copies of the trained weights on the host, f32, in
// m.Params' order (the Trainer's own are donated to its next step, or
// replaced by it on a mesh).
func (t *Trainer) Weights() []*backend.Buffer {
	order, nTrained := t.m.lossOrder()
	out := make([]*backend.Buffer, len(order))
	for k, j := range order {
		if k < nTrained {
			out[j] = f32Copy(t.state[k])
		} else {
			out[j] = f32Copy(t.fixed[k-nTrained])
		}
	}
	return out
}

// trainProgram is a Trainer's step as the runtime compiles it.
type trainProgram struct {
	t    *Trainer
	name string
}

func (p trainProgram) Trace(args []engine.Arg) (*ir.Module, error) {
	want := len(p.t.state) + 1 + len(p.t.fixed) + 1 + btoi(p.t.labels)
	if len(args) != want {
		return nil, fmt.Errorf("models: a training step takes %d arguments, got %d", want, len(args))
	}
	tok := args[len(p.t.state)+1+len(p.t.fixed)].Type
	if tok.Rank() != 2 || tok.DType != ir.I32 {
		return nil, fmt.Errorf("models: tokens are %s; want i32[B, L]", tok)
	}
	loss, nTrained, err := p.t.m.traceLoss(tok.Dims()[0], tok.Dims()[1], p.t.labels, p.t.unroll || !lossLoops)
	if err != nil {
		return nil, err
	}
	return train.StepWith(loss, nTrained, p.t.opt, autodiff.Options{Remat: p.t.remat})
}

func (p trainProgram) Eager([]engine.Arg) ([]*backend.Buffer, error) {
	return nil, errors.New("models: a training step is never run eagerly")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Checkpoint is the model's checkpoint with weights (f32, m.Params' order)
// in place of its own: the checkpoint's tensor names, layouts and dtype
// (weights rounded to it), ready for safetensors.Write.
func (m *Model) Checkpoint(weights []*backend.Buffer) ([]safetensors.Named, error) {
	if len(weights) != len(m.Params) || m.Weights == nil {
		return nil, fmt.Errorf("models: a checkpoint needs %d weights, got %d", len(m.Params), len(weights))
	}
	trained := &hf.Weights{DType: m.Weights.DType, Layers: make([]hf.LayerWeights, len(m.Config.Layers))}
	for path, j := range m.index {
		b := weights[j]
		if !b.Type().Equal(ir.Tensor(ir.F32, m.Params[j].Type.Dims()...)) {
			return nil, fmt.Errorf("models: weight %s is %s; want f32 of the shape of %s", path, b.Type(), m.Params[j].Type)
		}
		if m.Weights.DType != ir.F32 {
			b = tensor.FromBuffer(b).Convert(m.Weights.DType).Buffer()
		}
		rest, ok := strings.CutPrefix(path, "layers.")
		if !ok {
			reflect.ValueOf(trained).Elem().FieldByName(path).Set(reflect.ValueOf(b))
			continue
		}
		n, field, _ := strings.Cut(rest, ".")
		if at, ok := m.slots[n]; ok {
			m.unstack(trained, m.groups[at[0]], at[1], field, b)
			continue
		}
		l, _ := strconv.Atoi(n)
		reflect.ValueOf(&trained.Layers[l]).Elem().FieldByName(field).Set(reflect.ValueOf(b))
	}
	return m.Weights.Tensors(m.Config, trained)
}

// unstack gives each layer of slot s of group g its row of the stacked
// weight b [count, …] as field, a buffer of its own: the checkpoint names
// every layer's tensor, not the stack.
func (m *Model) unstack(trained *hf.Weights, g group, s int, field string, b *backend.Buffer) {
	t := ir.Tensor(b.Type().DType, b.Type().Dims()[1:]...)
	n := len(b.Bytes()) / g.count
	for it := range g.count {
		row := backend.New(t)
		copy(row.Bytes(), b.Bytes()[it*n:(it+1)*n])
		reflect.ValueOf(&trained.Layers[g.layer(s, it)]).Elem().FieldByName(field).Set(reflect.ValueOf(row))
	}
}
