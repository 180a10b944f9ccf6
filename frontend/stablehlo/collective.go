package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// collectiveOps are StableHLO's collectives and process ids, mapped one to
// one onto ir's.
var collectiveOps = map[string]ir.Op{
	"stablehlo.all_reduce": ir.OpAllReduce, "stablehlo.all_gather": ir.OpAllGather,
	"stablehlo.all_to_all": ir.OpAllToAll, "stablehlo.reduce_scatter": ir.OpReduceScatter,
	"stablehlo.collective_broadcast": ir.OpCollectiveBroadcast, "stablehlo.collective_permute": ir.OpCollectivePermute,
	"stablehlo.collective_reduce": ir.OpCollectiveReduce,
	"stablehlo.replica_id":        ir.OpReplicaID, "stablehlo.partition_id": ir.OpPartitionID,
}

// reduceKinds are the reducer bodies a collective may apply.
var reduceKinds = map[string]ir.ReduceKind{
	"stablehlo.add": ir.ReduceSum, "stablehlo.maximum": ir.ReduceMax,
	"stablehlo.minimum": ir.ReduceMin, "stablehlo.multiply": ir.ReduceProd,
}

// collective maps one collective op.
func (bd *builder) collective(o *op, code ir.Op, args []*ir.Value) {
	var a ir.Attr
	var hint []ir.Type
	switch code {
	case ir.OpAllReduce, ir.OpCollectiveReduce:
		bd.noDynamicRoot(o)
		a = &ir.AllReduceAttr{Kind: bd.reduceKind(o, args), CollectiveAttr: bd.groups(o)}
	case ir.OpAllGather:
		hint = o.outs
		a = &ir.AllGatherAttr{Dim: bd.attr(o, "all_gather_dim").int(bd.s, "all_gather_dim"), CollectiveAttr: bd.groups(o)}
	case ir.OpReduceScatter:
		hint = o.outs
		a = &ir.ReduceScatterAttr{Kind: bd.reduceKind(o, args),
			Dim: bd.attr(o, "scatter_dimension").int(bd.s, "scatter_dimension"), CollectiveAttr: bd.groups(o)}
	case ir.OpAllToAll:
		a = &ir.AllToAllAttr{SplitDim: bd.attr(o, "split_dimension").int(bd.s, "split_dimension"),
			ConcatDim:  bd.attr(o, "concat_dimension").int(bd.s, "concat_dimension"),
			SplitCount: bd.attr(o, "split_count").int(bd.s, "split_count"), CollectiveAttr: bd.groups(o)}
	case ir.OpCollectiveBroadcast:
		g := bd.groups(o)
		g.DynamicRoot = unitOrTrue(o.attrs["has_dynamic_root"])
		a = &g
	case ir.OpCollectivePermute:
		pairs := bd.idLists(o, "source_target_pairs")
		ch, typ := bd.channel(o)
		a = &ir.PermuteAttr{Pairs: pairs, Channel: ch, ChannelType: typ}
	}
	in, err := bd.b.Emit(code, a, hint, args...)
	if err != nil {
		bd.s.failf(o.pos, "%s: %s", o.name, trimError(err))
	}
	bd.results(o, in.Results...)
}

// reduceKind reads the reducer region: one add, maximum, minimum or
// multiply of its two parameters, on the operands' element type.
func (bd *builder) reduceKind(o *op, args []*ir.Value) ir.ReduceKind {
	k, ok := reduceKinds[bd.body(o)]
	if !ok {
		bd.s.failf(o.pos, "unsupported form of %s: the body is not one add, maximum, minimum or multiply of its two parameters", o.name)
	}
	r := o.regions[0]
	for _, x := range args {
		if r.params[0].typ.DType != x.Type.DType {
			bd.s.failf(r.pos, "unsupported form of %s: the body takes %s for %s operands", o.name, mlirType(r.params[0].typ), mlirElemType(x.Type.DType))
		}
	}
	return k
}

// noDynamicRoot refuses has_dynamic_root (a root chosen at run time)
// where tpucc's op has none.
func (bd *builder) noDynamicRoot(o *op) {
	if r := o.attrs["has_dynamic_root"]; unitOrTrue(r) {
		bd.s.failf(r.pos, "unsupported form of %s: has_dynamic_root", o.name)
	}
}

// unitOrTrue reads a flag written bare (a unit attribute) or as true.
func unitOrTrue(a *attr) bool {
	return a != nil && (a.kind == attrWord && a.text == "unit" || a.kind == attrBool && a.text == "true")
}

// groups reads replica_groups, channel_handle and use_global_device_ids.
func (bd *builder) groups(o *op) ir.CollectiveAttr {
	ch, typ := bd.channel(o)
	g := ir.CollectiveAttr{Groups: bd.idLists(o, "replica_groups"), Channel: ch, ChannelType: typ}
	g.GlobalIDs = unitOrTrue(o.attrs["use_global_device_ids"])
	return g
}

// idLists reads a rank-2 dense integer attribute as rows, dropping the -1
// that pads ragged replica groups.
func (bd *builder) idLists(o *op, name string) [][]int64 {
	a := bd.attr(o, name)
	if a.kind != attrDense || a.dense.typ.Rank() != 2 || !a.dense.typ.DType.IsInt() {
		bd.s.failf(a.pos, "unsupported form of %s: %s is not a rank-2 dense integer tensor", o.name, name)
	}
	dims := a.dense.typ.Dims()
	if dims[0] == 0 || dims[1] == 0 {
		bd.s.failf(a.pos, "unsupported form of %s: empty %s (every process in one group)", o.name, name)
	}
	l := a.dense.literal(bd.s)
	out := make([][]int64, dims[0])
	for i := range out {
		out[i] = []int64{}
		for j := range dims[1] {
			if id := l.Int(int(int64(i)*dims[1] + j)); id != -1 || name == "source_target_pairs" {
				out[i] = append(out[i], id)
			}
		}
	}
	return out
}

// channel reads channel_handle = #stablehlo.channel_handle<handle = H, type = T>.
func (bd *builder) channel(o *op) (handle, typ int64) {
	a := o.attrs["channel_handle"]
	if a == nil {
		return 0, 0
	}
	if a.kind != attrDict || a.text != "stablehlo.channel_handle" || a.dict["handle"] == nil || a.dict["type"] == nil {
		bd.s.failf(a.pos, "%s: channel_handle must be #stablehlo.channel_handle<handle = H, type = T>", o.name)
	}
	return a.dict["handle"].int(bd.s, "handle"), a.dict["type"].int(bd.s, "type")
}
