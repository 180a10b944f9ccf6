package cpu

import (
	"fmt"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// processGroups splits a grid of replicas × partitions into in's process
// groups, each a list of process ids (replica × partitions + partition) in
// the group's order, by the strategy the spec gives the op:
// cross_replica without a channel; with one, cross_replica_and_partition
// (all_reduce, all_gather, reduce_scatter) or cross_partition (the
// others); flattened_ids with use_global_device_ids.
func processGroups(in *ir.Instr, replicas, partitions int) ([][]int, error) {
	id := func(r, p int64) int { return int(r)*partitions + int(p) }
	if a, ok := in.Attr.(*ir.PermuteAttr); ok {
		pairs, err := permutePairs(a, replicas, partitions)
		return pairGroups(pairs, partitions, a.Channel > 0), err
	}
	c, ok := in.Attr.(ir.Collectiver)
	if !ok {
		return nil, fmt.Errorf("%s has no replica groups", in.Op)
	}
	a := c.Collective()
	threeWay := in.Op == ir.OpAllReduce || in.Op == ir.OpAllGather || in.Op == ir.OpReduceScatter
	limit, what := replicas, "replicas"
	switch {
	case a.GlobalIDs:
		limit, what = replicas*partitions, "processes"
	case a.Channel > 0 && !threeWay:
		limit, what = partitions, "partitions"
	}
	for _, g := range a.Groups {
		for _, x := range g {
			if x >= int64(limit) {
				return nil, fmt.Errorf("%s's replica groups name %d, but the grid of %d replicas × %d partitions has %d %s",
					in.Op, x, replicas, partitions, limit, what)
			}
		}
	}
	var out [][]int
	for _, g := range a.Groups {
		switch {
		case a.GlobalIDs: // flattened_ids: the ids are the processes
			out = append(out, toInts(g))
		case a.Channel > 0 && threeWay: // cross_replica_and_partition
			var group []int
			for p := range partitions {
				for _, r := range g {
					group = append(group, id(r, int64(p)))
				}
			}
			out = append(out, group)
		case a.Channel > 0: // cross_partition
			for r := range replicas {
				var group []int
				for _, p := range g {
					group = append(group, id(int64(r), p))
				}
				out = append(out, group)
			}
		default: // cross_replica
			for p := range partitions {
				var group []int
				for _, r := range g {
					group = append(group, id(r, int64(p)))
				}
				out = append(out, group)
			}
		}
	}
	return out, nil
}

// permutePairs maps collective_permute's source-target pairs to process
// ids: over replicas within each partition (cross_replica), or over
// partitions within each replica with a channel (cross_partition).
func permutePairs(a *ir.PermuteAttr, replicas, partitions int) ([][2]int, error) {
	across, other, what := replicas, partitions, "replicas"
	if a.Channel > 0 {
		across, other, what = partitions, replicas, "partitions"
	}
	var out [][2]int
	for o := range other {
		for _, p := range a.Pairs {
			if p[0] >= int64(across) || p[1] >= int64(across) {
				return nil, fmt.Errorf("collective_permute's pair %v names a process beyond the grid's %d %s", p, across, what)
			}
			s, t := int(p[0])*partitions+o, int(p[1])*partitions+o
			if a.Channel > 0 {
				s, t = o*partitions+int(p[0]), o*partitions+int(p[1])
			}
			out = append(out, [2]int{s, t})
		}
	}
	return out, nil
}

// pairGroups groups the processes that pairs connect: those of one
// partition (or one replica, across partitions), in order of appearance.
func pairGroups(pairs [][2]int, partitions int, acrossPartitions bool) [][]int {
	byOther := map[int][]int{}
	var order []int
	for _, p := range pairs {
		o := p[0] % partitions
		if acrossPartitions {
			o = p[0] / partitions
		}
		if _, ok := byOther[o]; !ok {
			order = append(order, o)
		}
		for _, x := range p {
			if !slices.Contains(byOther[o], x) {
				byOther[o] = append(byOther[o], x)
			}
		}
	}
	var out [][]int
	for _, o := range order {
		out = append(out, byOther[o])
	}
	return out
}

func toInts(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
