package models

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
)

// A model split over a mesh of devices (Options.Mesh, `--mesh tp=4`): the
// steps' parameters carry shardings and XLA's SPMD partitioner splits the
// computation, as JAX does with a model's PartitionSpecs. The axis "tp"
// splits the weights as Megatron-LM does (docs/SHARDING.md), "dp" the
// batch; the KV cache is split by both (rows over dp, KV heads over tp).
// Shapes an axis does not divide (one KV head over 4 devices) are padded
// by XLA. Which device holds what only changes speed and memory, never the
// numbers: the partitioner keeps the program's meaning.

// Mesh axis names a model splits over.
const (
	AxisData   = "dp"
	AxisTensor = "tp"
)

// ParseMesh reads a mesh as `--mesh` spells it: axis=size pairs separated
// by commas ("tp=4", "dp=2,tp=2"), axes among dp and tp, each at most once.
func ParseMesh(spec string) (*ir.Mesh, error) {
	m := &ir.Mesh{Name: "mesh"}
	for _, part := range strings.Split(spec, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(size, 10, 64)
		switch {
		case !ok || err != nil || n < 1:
			return nil, fmt.Errorf("mesh %q: want axis=size pairs such as tp=4 or dp=2,tp=2", spec)
		case name != AxisData && name != AxisTensor:
			return nil, fmt.Errorf("mesh %q: axis %q: a model splits over %s (batch) and %s (weights) only", spec, name, AxisData, AxisTensor)
		case m.Axis(name) >= 0:
			return nil, fmt.Errorf("mesh %q: axis %s given twice", spec, name)
		case n > 1<<16:
			return nil, fmt.Errorf("mesh %q: axis %s of %d devices", spec, name, n)
		}
		m.Axes = append(m.Axes, ir.MeshAxis{Name: name, Size: n})
	}
	return m, nil
}

// weightSplits says which dimension of a weight, counted from the last
// (-1), the tensor axis splits, by the weight's field name: layers stacked
// into one tensor keep their rules. Products of the form x·Wᵀ with W
// [out, in]: q, k, v, gate and up by their outputs (heads, columns), o and
// down by their inputs (rows), so that each device's share of a block
// needs one all-reduce; embeddings and the lm head by vocabulary; experts
// by expert. Anything else (norms, the router, scales) is replicated.
var weightSplits = map[string]int{
	"Q": -2, "K": -2, "V": -2, "Gate": -2, "Up": -2, "SharedGate": -2, "SharedUp": -2,
	"QBias": -1, "KBias": -1, "VBias": -1, "GateBias": -1, "UpBias": -1,
	"O": -1, "Down": -1, "SharedDown": -1,
	"Embed": -2, "LMHead": -2,
	"GateExperts": -3, "UpExperts": -3, "DownExperts": -3,
}

// fieldName is the field a parameter name ends with ("layers.3.Q" → "Q").
func fieldName(param string) string {
	if i := strings.LastIndexByte(param, '.'); i >= 0 {
		return param[i+1:]
	}
	return param
}

// dimsSplitting is a rank-r sharding's dims with axis on dimension d
// (counted from the end when negative); none when mesh lacks the axis or
// the dimension does not exist.
func dimsSplitting(mesh *ir.Mesh, r int, splits map[int]string) [][]string {
	dims := make([][]string, r)
	for d, axis := range splits {
		if d < 0 {
			d += r
		}
		if d >= 0 && d < r && mesh.Axis(axis) >= 0 && mesh.Axes[mesh.Axis(axis)].Size > 1 {
			dims[d] = []string{axis}
		}
	}
	return dims
}

// layout is where a program of the model's takes what the mesh splits:
// tensors whose first dimension is the batch (by position, with their
// ranks), the caches and the weights among its arguments, and the batch
// tensors and caches among its results.
type layout struct {
	batchArgs, batchResults map[int]int
	cacheArg, weightArg     int
	cacheResult             int
}

// shardings are the shardings of a program laid out as l on mesh. The
// caches are split alike going in and out, so they stay where they lie
// between calls.
func (m *Model) shardings(mesh *ir.Mesh, l layout) (args, results []engine.ArgSharding) {
	batch := map[int]string{0: AxisData}
	for i, rank := range l.batchArgs {
		args = append(args, engine.ArgSharding{Arg: i, Dims: dimsSplitting(mesh, rank, batch)})
	}
	for i, rank := range l.batchResults {
		results = append(results, engine.ArgSharding{Arg: i, Dims: dimsSplitting(mesh, rank, batch)})
	}
	for i, t := range m.CacheTypes(1, 1) {
		// [..., B, KVH, Cap, D]: rows over dp, KV heads over tp.
		dims := dimsSplitting(mesh, t.Rank(), map[int]string{-4: AxisData, -3: AxisTensor})
		args = append(args, engine.ArgSharding{Arg: l.cacheArg + i, Dims: dims})
		results = append(results, engine.ArgSharding{Arg: l.cacheResult + i, Dims: dims})
	}
	for i, p := range m.Params {
		if d, ok := weightSplits[fieldName(p.Name)]; ok {
			dims := dimsSplitting(mesh, p.Type.Rank(), map[int]string{d: AxisTensor})
			args = append(args, engine.ArgSharding{Arg: l.weightArg + i, Dims: dims})
		}
	}
	return args, results
}

// stepShardings are a step's (StepTypes' order: tokens, starts,
// position, caches, weights; the logits, then the caches).
func (m *Model) stepShardings(mesh *ir.Mesh, logitsRank int) (args, results []engine.ArgSharding) {
	nc := len(m.CacheTypes(1, 1))
	return m.shardings(mesh, layout{batchArgs: map[int]int{0: 2, 1: 1}, batchResults: map[int]int{0: logitsRank},
		cacheArg: stepCacheArg, weightArg: stepCacheArg + nc, cacheResult: 1})
}

// loopShardings are the decode loop's (loopArgs, the caches, the
// weights; the count, the tokens [B, N], the caches).
func (m *Model) loopShardings(mesh *ir.Mesh) (args, results []engine.ArgSharding) {
	nc := len(m.CacheTypes(1, 1))
	return m.shardings(mesh, layout{batchArgs: map[int]int{0: 2, 1: 1, 2: 1, 4: 1}, batchResults: map[int]int{1: 2},
		cacheArg: loopCacheArg, weightArg: loopCacheArg + nc, cacheResult: 2})
}

// meshString spells a mesh as ParseMesh reads it.
func meshString(m *ir.Mesh) string {
	parts := make([]string, len(m.Axes))
	for i, a := range m.Axes {
		parts[i] = fmt.Sprintf("%s=%d", a.Name, a.Size)
	}
	return strings.Join(parts, ",")
}

// ShardStep gives a step traced with Trace (its entry takes every
// argument of StepTypes as a parameter) the mesh and the shardings a
// Generator with Options.Mesh gives its steps: what `tpucc export --mesh`
// writes.
func (m *Model) ShardStep(mod *ir.Module, mesh *ir.Mesh) error {
	e := mod.Entry()
	if e == nil || len(e.Results) == 0 {
		return fmt.Errorf("models: the step has no entry with results")
	}
	args, results := m.stepShardings(mesh, e.Results[0].Rank())
	return engine.ShardModule(mod, mesh, args, results)
}

// WeightBytesPerDevice is how many bytes of the weights each device of
// mesh holds once a Generator with Options.Mesh has copied them there:
// the split weights' pieces and every replicated weight whole. Uneven
// dimensions stay whole (engine.ShardModule).
func (m *Model) WeightBytesPerDevice(mesh *ir.Mesh) int64 {
	tp := int64(1)
	if i := mesh.Axis(AxisTensor); i >= 0 {
		tp = mesh.Axes[i].Size
	}
	var total int64
	for _, p := range m.Params {
		n, _ := p.Type.NumElements()
		bytes := n * int64(p.Type.DType.Size())
		if d, ok := weightSplits[fieldName(p.Name)]; ok && p.Type.Rank()+d >= 0 {
			if size := p.Type.Shape[p.Type.Rank()+d].Size; size%tp == 0 {
				bytes /= tp
			}
		}
		total += bytes
	}
	return total
}

// paramDims are the dims of parameter p's sharding on mesh: the tensor
// axis on the dimension its field's Megatron rule names (weightSplits);
// with fsdp also the data axis, on the first other dimension whose size
// the data axis divides (FSDP, ZeRO-3: each data-parallel device holds a
// share of every weight, and XLA gathers it where a product needs it).
// A stack of looped layers ("layers.0:2.Q") is not split by layer: the
// loop reads one row a trip, and a row split over dp is gathered a trip
// at a time, as FSDP gathers a layer, where a stack split by layer would
// be gathered whole.
func paramDims(mesh *ir.Mesh, p ir.Type, name string, fsdp bool) [][]string {
	splits := map[int]string{}
	tpDim := -1
	if d, ok := weightSplits[fieldName(name)]; ok && p.Rank()+d >= 0 {
		tpDim = p.Rank() + d
		splits[tpDim] = AxisTensor
	}
	first := 0
	if strings.Contains(name, ":") {
		first = 1
	}
	if i := mesh.Axis(AxisData); fsdp && i >= 0 {
		for d := first; d < p.Rank(); d++ {
			if d != tpDim && p.Shape[d].Size%mesh.Axes[i].Size == 0 {
				splits[d] = AxisData
				break
			}
		}
	}
	return dimsSplitting(mesh, p.Rank(), splits)
}

// trainShardings are a training step's (train.Step's order: the trained
// weights, their optimizer state, the step counter, the weights not
// trained, the tokens and labels; the loss, the new weights, the new
// state). Each state tensor is split like its weight, and each new weight
// and state tensor exactly like its argument, so that they stay where
// they lie between steps; the batch rows are split over dp, and XLA's
// partitioner sums the gradients over them.
func (m *Model) trainShardings(mesh *ir.Mesh, nStates int, labels, fsdp bool) (args, results []engine.ArgSharding) {
	order, nTrained := m.lossOrder()
	nState := nTrained * (1 + nStates)
	for k, j := range order {
		p := m.Params[j]
		dims := paramDims(mesh, p.Type, p.Name, fsdp)
		if k >= nTrained {
			args = append(args, engine.ArgSharding{Arg: nState + 1 + k - nTrained, Dims: dims})
			continue
		}
		at := []int{k}
		for s := range nStates {
			at = append(at, nTrained+k*nStates+s)
		}
		for _, a := range at {
			args = append(args, engine.ArgSharding{Arg: a, Dims: dims})
			results = append(results, engine.ArgSharding{Arg: 1 + a, Dims: dims})
		}
	}
	rows := dimsSplitting(mesh, 2, map[int]string{0: AxisData})
	tokens := nState + 1 + len(order) - nTrained
	for i := range 1 + btoi(labels) {
		args = append(args, engine.ArgSharding{Arg: tokens + i, Dims: rows})
	}
	return args, results
}
