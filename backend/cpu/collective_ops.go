package cpu

import (
	"fmt"
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// collective runs in, a collective or a process id, on pr.
func (pr *process) collective(in *ir.Instr, args []*backend.Buffer) ([]*backend.Buffer, error) {
	switch in.Op {
	case ir.OpReplicaID, ir.OpPartitionID:
		id := pr.replica
		if in.Op == ir.OpPartitionID {
			id = pr.partition
		}
		out := backend.New(in.Results[0].Type)
		out.WriteInt64s(0, []int64{int64(id)})
		return []*backend.Buffer{out}, nil
	}
	replicas, partitions := pr.size()
	groups, err := processGroups(in, replicas, partitions)
	if err != nil {
		return nil, err
	}
	me := pr.id()
	for _, group := range groups {
		if i := slices.Index(group, me); i >= 0 {
			vals, err := pr.exchange(in, group, args)
			if err != nil {
				return nil, err
			}
			ordered := make([][]*backend.Buffer, len(group))
			for k, m := range group {
				ordered[k] = vals[m]
			}
			return compute(pr, in, ordered, i, group)
		}
	}
	pr.seq++ // the group members count this collective too
	switch in.Op {
	case ir.OpCollectiveBroadcast, ir.OpCollectivePermute, ir.OpCollectiveReduce:
		return zeros(in), nil
	}
	return nil, fmt.Errorf("%s is in no process group of %s", pr, in.Op)
}

// compute gives pr, member i of group, its results from the group's
// operands in the group's order.
func compute(pr *process, in *ir.Instr, ordered [][]*backend.Buffer, i int, group []int) ([]*backend.Buffer, error) {
	switch a := in.Attr.(type) {
	case *ir.AllReduceAttr:
		if in.Op == ir.OpCollectiveReduce && i != 0 {
			return zeros(in), nil
		}
		return reduceAll(in, a.Kind, ordered)
	case *ir.AllGatherAttr:
		out := make([]*backend.Buffer, len(in.Args))
		for j := range out {
			var parts []*backend.Buffer
			for _, vs := range ordered {
				parts = append(parts, vs[j])
			}
			b, err := concatAlong(a.Dim, parts, in.Results[j].Type, in.Op)
			if err != nil {
				return nil, err
			}
			out[j] = b
		}
		return out, nil
	case *ir.ReduceScatterAttr:
		sum, err := reduceAll(in, a.Kind, ordered)
		if err != nil {
			return nil, err
		}
		b, err := part(sum[0], a.Dim, len(ordered), i, in.Results[0].Type, in.Op)
		return []*backend.Buffer{b}, err
	case *ir.AllToAllAttr:
		return allToAll(in, a, ordered, i)
	case *ir.CollectiveAttr: // collective_broadcast: the group's first process, or the roots'
		if a.DynamicRoot {
			return fromRoots(ordered, i)
		}
		return clones(ordered[0]), nil
	case *ir.PermuteAttr:
		replicas, partitions := pr.size()
		pairs, err := permutePairs(a, replicas, partitions)
		if err != nil {
			return nil, err
		}
		for _, p := range pairs {
			if p[1] == pr.id() {
				return clones(ordered[slices.Index(group, p[0])]), nil
			}
		}
		return zeros(in), nil
	}
	return nil, fmt.Errorf("%s has no attribute the executor knows", in.Op)
}

// fromRoots gives result j from the group's process roots[j], roots being
// the last operand of process i.
func fromRoots(ordered [][]*backend.Buffer, i int) ([]*backend.Buffer, error) {
	mine := ordered[i]
	n := len(mine) - 1
	roots := make([]int64, n)
	mine[n].ReadInt64s(0, roots)
	out := make([]*backend.Buffer, n)
	for j, r := range roots {
		if r < 0 || r >= int64(len(ordered)) {
			return nil, fmt.Errorf("collective_broadcast root %d of result %d is outside its group of %d", r, j, len(ordered))
		}
		out[j] = ordered[r][j].Clone()
	}
	return out, nil
}

var combineOps = map[ir.ReduceKind]ir.Op{ir.ReduceSum: ir.OpAdd, ir.ReduceMax: ir.OpMax, ir.ReduceMin: ir.OpMin, ir.ReduceProd: ir.OpMul}

// reduceAll combines each operand over the group, left to right in the
// group's order (the spec leaves the tree to the implementation; this one
// is the same on every run).
func reduceAll(in *ir.Instr, kind ir.ReduceKind, ordered [][]*backend.Buffer) ([]*backend.Buffer, error) {
	out := make([]*backend.Buffer, len(in.Args))
	for j := range out {
		acc := ordered[0][j].Clone()
		for _, vs := range ordered[1:] {
			next, err := binaryKernel(synthetic(combineOps[kind], nil, acc.Type()), acc, vs[j])
			if err != nil {
				return nil, err
			}
			acc = next
		}
		out[j] = acc
	}
	return out, nil
}

// allToAll: process i receives part i of every member's operands, in the
// group's order, concatenated.
func allToAll(in *ir.Instr, a *ir.AllToAllAttr, ordered [][]*backend.Buffer, i int) ([]*backend.Buffer, error) {
	if int64(len(ordered)) != a.SplitCount {
		return nil, fmt.Errorf("all_to_all's group has %d processes, want split_count %d", len(ordered), a.SplitCount)
	}
	out := make([]*backend.Buffer, len(in.Args))
	for j := range out {
		x := ordered[0][j].Type()
		s := slices.Clone(x.Shape)
		s[a.SplitDim] = ir.D(s[a.SplitDim].Size / a.SplitCount)
		var parts []*backend.Buffer
		for _, vs := range ordered {
			p, err := part(vs[j], a.SplitDim, len(ordered), i, x.WithShape(s), in.Op)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		b, err := concatAlong(a.ConcatDim, parts, in.Results[j].Type, in.Op)
		if err != nil {
			return nil, err
		}
		out[j] = b
	}
	return out, nil
}

// concatAlong joins parts along dim into a tensor of type t.
func concatAlong(dim int64, parts []*backend.Buffer, t ir.Type, op ir.Op) (*backend.Buffer, error) {
	n := int64(0)
	for _, p := range parts {
		n += p.Type().Shape[dim].Size
	}
	if n != t.Shape[dim].Size {
		return nil, fmt.Errorf("%s joins %d parts of %s: dimension %d is %d, the result has %d", op, len(parts), parts[0].Type(), dim, n, t.Shape[dim].Size)
	}
	return concatKernel(synthetic(ir.OpConcat, &ir.AxisAttr{Axis: dim}, t), parts), nil
}

// part is part i of x split in n along dim, of type t.
func part(x *backend.Buffer, dim int64, n, i int, t ir.Type, op ir.Op) (*backend.Buffer, error) {
	xt := x.Type()
	size := xt.Shape[dim].Size
	if size%int64(n) != 0 || size/int64(n) != t.Shape[dim].Size {
		return nil, fmt.Errorf("%s splits dimension %d of %s in %d parts: want %s", op, dim, xt, n, t)
	}
	a := &ir.SliceAttr{Start: make([]int64, xt.Rank()), Limit: xt.Dims()}
	a.Start[dim] = int64(i) * (size / int64(n))
	a.Limit[dim] = a.Start[dim] + size/int64(n)
	return sliceKernel(synthetic(ir.OpSlice, a, t), x), nil
}

// synthetic is an instruction for a kernel: op with attribute a and one
// result of type t.
func synthetic(op ir.Op, a ir.Attr, t ir.Type) *ir.Instr {
	return &ir.Instr{Op: op, Attr: a, Results: []*ir.Value{{Type: t}}}
}

func zeros(in *ir.Instr) []*backend.Buffer {
	out := make([]*backend.Buffer, len(in.Results))
	for i, r := range in.Results {
		out[i] = backend.New(r.Type)
	}
	return out
}

func clones(bs []*backend.Buffer) []*backend.Buffer {
	out := make([]*backend.Buffer, len(bs))
	for i, b := range bs {
		out[i] = b.Clone()
	}
	return out
}
