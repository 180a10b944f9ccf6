package stablehlo

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// collective lowers a collective op as StableHLO's generic form prints it:
// its properties, a reducer region for the reducing ones, and its type.
func (e *emitter) collective(in *ir.Instr, args []hv) []hv {
	ts := make([]ir.Type, len(in.Results))
	for i, r := range in.Results {
		ts[i] = r.Type
	}
	if in.Op == ir.OpReplicaID || in.Op == ir.OpPartitionID {
		return []hv{e.def(ts[0], "stablehlo.", in.Op.String(), " : ", tensorType(ts[0]))}
	}
	var props []string
	kind := ir.ReduceNone
	switch a := in.Attr.(type) {
	case *ir.AllReduceAttr:
		kind = a.Kind
		props = groupProps(&a.CollectiveAttr)
	case *ir.AllGatherAttr:
		props = append(groupProps(&a.CollectiveAttr), fmt.Sprintf("all_gather_dim = %d : i64", a.Dim))
	case *ir.ReduceScatterAttr:
		kind = a.Kind
		props = append(groupProps(&a.CollectiveAttr), fmt.Sprintf("scatter_dimension = %d : i64", a.Dim))
	case *ir.AllToAllAttr:
		props = append(groupProps(&a.CollectiveAttr), fmt.Sprintf("concat_dimension = %d : i64", a.ConcatDim),
			fmt.Sprintf("split_count = %d : i64", a.SplitCount), fmt.Sprintf("split_dimension = %d : i64", a.SplitDim))
	case *ir.CollectiveAttr:
		props = groupProps(a)
	case *ir.PermuteAttr:
		props = append(channelProp(a.Channel, a.ChannelType), "source_target_pairs = "+idTensor(a.Pairs))
	}
	sortProps(props)
	head := []string{`"stablehlo.`, in.Op.String(), `"(`, refs(args), ") <{", strings.Join(props, ", "), "}>"}
	if kind == ir.ReduceNone {
		return e.defN(ts, append(head, " : ", funcType(args, ts))...)
	}
	res := e.defN(ts, append(head, " ({")...)
	op := map[ir.ReduceKind]string{ir.ReduceSum: "stablehlo.add", ir.ReduceProd: "stablehlo.multiply",
		ir.ReduceMax: "stablehlo.maximum", ir.ReduceMin: "stablehlo.minimum"}[kind]
	e.binaryBody(op, args[0].t.DType)
	e.line("}) : ", funcType(args, ts))
	return res
}

// groupProps spells replica groups, the channel and use_global_device_ids.
func groupProps(a *ir.CollectiveAttr) []string {
	props := append(channelProp(a.Channel, a.ChannelType), "replica_groups = "+idTensor(a.Groups))
	if a.GlobalIDs {
		props = append(props, "use_global_device_ids")
	}
	if a.DynamicRoot {
		props = append(props, "has_dynamic_root")
	}
	return props
}

func channelProp(handle, typ int64) []string {
	if handle == 0 && typ == 0 {
		return nil
	}
	return []string{fmt.Sprintf("channel_handle = #stablehlo.channel_handle<handle = %d, type = %d>", handle, typ)}
}

// idTensor spells groups as a rank-2 i64 tensor, ragged rows padded with -1.
func idTensor(groups [][]int64) string {
	n := 0
	for _, g := range groups {
		n = max(n, len(g))
	}
	rows := make([]string, len(groups))
	for i, g := range groups {
		padded := append(append([]int64{}, g...), make([]int64, n-len(g))...)
		for k := len(g); k < n; k++ {
			padded[k] = -1
		}
		rows[i] = ints(padded)
	}
	return fmt.Sprintf("dense<[%s]> : tensor<%dx%dxi64>", strings.Join(rows, ", "), len(groups), n)
}

// sortProps orders properties by name, as MLIR prints them.
func sortProps(props []string) {
	name := func(p string) string { return strings.SplitN(p, " ", 2)[0] }
	for i := 1; i < len(props); i++ {
		for j := i; j > 0 && name(props[j]) < name(props[j-1]); j-- {
			props[j], props[j-1] = props[j-1], props[j]
		}
	}
}
