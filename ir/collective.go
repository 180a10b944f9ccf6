package ir

import "fmt"

// Collectives exchange values between the processes of a grid of replicas ×
// partitions, as StableHLO's collective ops do (docs/ops.md, "Collectives").
// Each names its process groups by replica_groups and a channel; which
// strategy turns them into groups of processes (cross_replica,
// cross_partition, cross_replica_and_partition, flattened_ids) depends on
// the op, the channel and use_global_device_ids, as the spec says, and is
// decided when the program runs, since only then is the grid known.

// CollectiveAttr is what every collective but collective_permute carries:
// its replica groups (each a list of distinct ids; ragged groups are
// written without StableHLO's -1 padding), its channel handle (0: none)
// and use_global_device_ids.
//
// DynamicRoot (collective_broadcast only: StableHLO's has_dynamic_root)
// makes the last operand an i32[N] whose j-th element is the index, in
// the group, of the process that result j comes from.
type CollectiveAttr struct {
	Groups               [][]int64
	Channel, ChannelType int64
	GlobalIDs            bool
	DynamicRoot          bool
}

// Collective returns the common part of a collective's attribute.
func (a *CollectiveAttr) Collective() *CollectiveAttr { return a }

func (a *CollectiveAttr) fields() []AttrField {
	fs := []AttrField{intListsField("groups", a.Groups)}
	if a.Channel != 0 {
		fs = append(fs, intField("channel", a.Channel))
	}
	if a.ChannelType != 0 {
		fs = append(fs, intField("channel_type", a.ChannelType))
	}
	if a.GlobalIDs {
		fs = append(fs, AttrField{Name: "global_ids", Value: AttrValue{Kind: AttrBool, Bool: true}})
	}
	if a.DynamicRoot {
		fs = append(fs, AttrField{Name: "dynamic_root", Value: AttrValue{Kind: AttrBool, Bool: true}})
	}
	return fs
}

func (a *CollectiveAttr) Fields() []AttrField { return sortFields(a.fields()) }

// Collectiver is implemented by the attribute of every collective op with
// replica groups.
type Collectiver interface {
	Attr
	Collective() *CollectiveAttr
}

// AllReduceAttr: all_reduce and collective_reduce {kind=sum|max|min|prod, groups, ...}.
type AllReduceAttr struct {
	Kind ReduceKind
	CollectiveAttr
}

func (a *AllReduceAttr) Fields() []AttrField {
	return sortFields(append(a.fields(), kindField(a.Kind)))
}

// AllGatherAttr: all_gather {dim=N, groups, ...}.
type AllGatherAttr struct {
	Dim int64
	CollectiveAttr
}

func (a *AllGatherAttr) Fields() []AttrField {
	return sortFields(append(a.fields(), intField("dim", a.Dim)))
}

// ReduceScatterAttr: reduce_scatter {kind, dim=N, groups, ...}.
type ReduceScatterAttr struct {
	Kind ReduceKind
	Dim  int64
	CollectiveAttr
}

func (a *ReduceScatterAttr) Fields() []AttrField {
	return sortFields(append(a.fields(), kindField(a.Kind), intField("dim", a.Dim)))
}

// AllToAllAttr: all_to_all {split_dim, concat_dim, split_count, groups, ...}.
type AllToAllAttr struct {
	SplitDim, ConcatDim, SplitCount int64
	CollectiveAttr
}

func (a *AllToAllAttr) Fields() []AttrField {
	return sortFields(append(a.fields(), intField("split_dim", a.SplitDim),
		intField("concat_dim", a.ConcatDim), intField("split_count", a.SplitCount)))
}

// PermuteAttr: collective_permute {pairs=[[source, target], ...], channel}.
type PermuteAttr struct {
	Pairs                [][]int64
	Channel, ChannelType int64
}

func (a *PermuteAttr) Fields() []AttrField {
	c := CollectiveAttr{Groups: a.Pairs, Channel: a.Channel, ChannelType: a.ChannelType}
	fs := c.fields()
	fs[0].Name = "pairs"
	return sortFields(fs)
}

func kindField(k ReduceKind) AttrField {
	return AttrField{Name: "kind", Value: AttrValue{Kind: AttrIdent, Str: reduceKindNames[k]}}
}

func intListsField(name string, xss [][]int64) AttrField {
	l := make([]AttrValue, len(xss))
	for i, xs := range xss {
		l[i] = intsValue(xs)
	}
	return AttrField{Name: name, Value: AttrValue{Kind: AttrList, List: l}}
}

// intLists reads a required list of integer lists.
func (r *attrReader) intLists(name string) [][]int64 {
	f, ok := r.get(name, true)
	if !ok {
		return nil
	}
	bad := func() [][]int64 {
		r.errorf(f.Pos, "attribute '%s' of %s must be a list of integer lists, got %s", name, r.op, f.Value)
		return nil
	}
	if f.Value.Kind != AttrList {
		return bad()
	}
	out := make([][]int64, 0, len(f.Value.List))
	for _, e := range f.Value.List {
		if e.Kind != AttrList {
			return bad()
		}
		l := make([]int64, 0, len(e.List))
		for _, x := range e.List {
			if x.Kind != AttrInt {
				return bad()
			}
			l = append(l, x.Int)
		}
		out = append(out, l)
	}
	return out
}

func (r *attrReader) optInt64(name string) int64 {
	if _, ok := r.fields[name]; !ok {
		r.used[name] = true
		return 0
	}
	return r.int(name)
}

func (r *attrReader) collective(groups string) CollectiveAttr {
	return CollectiveAttr{Groups: r.intLists(groups), Channel: r.optInt64("channel"),
		ChannelType: r.optInt64("channel_type"), GlobalIDs: r.bool("global_ids"), DynamicRoot: r.bool("dynamic_root")}
}

func (r *attrReader) reduceKind() ReduceKind {
	f, ok := r.get("kind", true)
	if !ok {
		return ReduceNone
	}
	for k, n := range reduceKindNames {
		if f.Value.Kind == AttrIdent && f.Value.Str == n {
			return k
		}
	}
	r.errorf(f.Pos, "attribute 'kind' of %s must be one of sum, max, min, prod, got %s", r.op, f.Value)
	return ReduceNone
}

func decodeAllReduce(r *attrReader) Attr {
	return &AllReduceAttr{Kind: r.reduceKind(), CollectiveAttr: r.collective("groups")}
}

func decodeAllGather(r *attrReader) Attr {
	return &AllGatherAttr{Dim: r.int("dim"), CollectiveAttr: r.collective("groups")}
}

func decodeReduceScatter(r *attrReader) Attr {
	return &ReduceScatterAttr{Kind: r.reduceKind(), Dim: r.int("dim"), CollectiveAttr: r.collective("groups")}
}

func decodeAllToAll(r *attrReader) Attr {
	return &AllToAllAttr{SplitDim: r.int("split_dim"), ConcatDim: r.int("concat_dim"),
		SplitCount: r.int("split_count"), CollectiveAttr: r.collective("groups")}
}

func decodeCollective(r *attrReader) Attr {
	a := r.collective("groups")
	return &a
}

func decodePermute(r *attrReader) Attr {
	c := r.collective("pairs")
	for _, f := range []string{"global_ids", "dynamic_root"} {
		if _, ok := r.fields[f]; ok {
			r.errorf(r.fields[f].Pos, "collective_permute has no attribute '%s'", f)
		}
	}
	return &PermuteAttr{Pairs: c.Groups, Channel: c.Channel, ChannelType: c.ChannelType}
}

// groups checks replica groups: non-empty groups of distinct ids >= 0
// (C1 and C3 of each op; that ids fall inside the grid is checked when
// the program runs). global says whether use_global_device_ids is allowed.
func (c *inferCtx) groups(a *CollectiveAttr, global bool) bool {
	if a.GlobalIDs && !global {
		c.fail("%s has no use_global_device_ids (global_ids)", c.op)
		return false
	}
	if a.DynamicRoot && c.op != OpCollectiveBroadcast {
		c.fail("%s has no dynamic_root", c.op)
		return false
	}
	if a.GlobalIDs && a.Channel <= 0 {
		c.fail("%s with global_ids needs a channel > 0", c.op)
		return false
	}
	if a.Channel < 0 || a.ChannelType < 0 {
		c.fail("%s channel %d, type %d: both must be at least 0", c.op, a.Channel, a.ChannelType)
		return false
	}
	if len(a.Groups) == 0 {
		c.fail("%s needs at least one replica group", c.op)
		return false
	}
	seen := map[int64]bool{}
	for i, g := range a.Groups {
		if len(g) == 0 {
			c.fail("replica group %d of %s is empty", i, c.op)
			return false
		}
		for _, id := range g {
			if id < 0 {
				c.fail("replica group %d of %s holds %d: ids are at least 0", i, c.op, id)
				return false
			}
			if seen[id] {
				c.fail("%s names id %d in more than one place of its replica groups", c.op, id)
				return false
			}
			seen[id] = true
		}
	}
	return true
}

// groupSize is the length every group must share for a collective whose
// result shape depends on it; false (and the error) if they differ.
func (c *inferCtx) groupSize(a *CollectiveAttr) (int64, bool) {
	n := len(a.Groups[0])
	for _, g := range a.Groups {
		if len(g) != n {
			c.fail("replica groups of %s have different sizes, %d and %d", c.op, n, len(g))
			return 0, false
		}
	}
	return int64(n), true
}

// CrossReplicaAndPartition reports whether a's groups are replica groups
// each taken over every partition (cross_replica_and_partition: a channel
// and no global ids), for the ops whose spec has that strategy.
func (a *CollectiveAttr) CrossReplicaAndPartition() bool { return a.Channel > 0 && !a.GlobalIDs }

func inferAllReduce(c *inferCtx) []Type {
	a, ok := c.attr.(*AllReduceAttr)
	if !ok || a.Kind == ReduceNone {
		return c.fail("%s has no reduction kind", c.op)
	}
	if !c.groups(&a.CollectiveAttr, c.op == OpAllReduce) {
		return nil
	}
	for _, t := range c.args[1:] {
		if t.DType != c.args[0].DType {
			return c.fail("operands of %s have different dtypes, %s and %s: one reduction body combines them all", c.op, c.args[0].DType, t.DType)
		}
	}
	return c.sameEach(numericT)
}

// sameEach: each result has its operand's type, of class k.
func (c *inferCtx) sameEach(k dtypeClass) []Type {
	out := make([]Type, len(c.args))
	for i, t := range c.args {
		if !c.checkClass(t, k, fmt.Sprintf("operand %d", i)) {
			return nil
		}
		out[i] = t.WithShape(t.Shape)
	}
	return out
}

func inferCollectiveBroadcast(c *inferCtx) []Type {
	a, ok := c.attr.(*CollectiveAttr)
	if !ok {
		return c.fail("%s has no replica groups", c.op)
	}
	if !c.groups(a, false) {
		return nil
	}
	if !a.DynamicRoot {
		return c.sameEach(anyT)
	}
	n := len(c.args) - 1
	if root := c.args[n]; n < 1 || root.DType != I32 || root.Rank() != 1 || root.Shape[0] != D(int64(n)) {
		return c.fail("collective_broadcast with dynamic_root takes its roots last, i32[%d] for %s, got %s", n, plural(n, "operand"), root)
	}
	c.args = c.args[:n]
	return c.sameEach(anyT)
}

func inferPermute(c *inferCtx) []Type {
	a, ok := c.attr.(*PermuteAttr)
	if !ok {
		return c.fail("collective_permute has no pairs")
	}
	src, dst := map[int64]bool{}, map[int64]bool{}
	for i, p := range a.Pairs {
		switch {
		case len(p) != 2:
			return c.fail("pair %d of collective_permute has %d ids, want 2 (source, target)", i, len(p))
		case p[0] < 0 || p[1] < 0:
			return c.fail("pair %d of collective_permute holds a negative id: %v", i, p)
		case src[p[0]]:
			return c.fail("collective_permute sends from %d twice", p[0])
		case dst[p[1]]:
			return c.fail("collective_permute sends to %d twice", p[1])
		}
		src[p[0]], dst[p[1]] = true, true
	}
	if a.Channel < 0 || a.ChannelType < 0 {
		return c.fail("collective_permute channel %d, type %d: both must be at least 0", a.Channel, a.ChannelType)
	}
	return c.sameEach(anyT)
}

// inferAllGather: the written result is the operand with the gathered
// dimension multiplied by the group size (times the partitions, unknown
// until the program runs, for cross_replica_and_partition).
func inferAllGather(c *inferCtx) []Type {
	a, ok := c.attr.(*AllGatherAttr)
	if !ok || !c.groups(&a.CollectiveAttr, true) {
		return c.fail("%s has no replica groups", c.op)
	}
	n, ok := c.groupSize(&a.CollectiveAttr)
	if !ok {
		return nil
	}
	return c.scaledResults(a.Dim, n, a.CrossReplicaAndPartition(), false)
}

func inferReduceScatter(c *inferCtx) []Type {
	a, ok := c.attr.(*ReduceScatterAttr)
	if !ok || a.Kind == ReduceNone {
		return c.fail("%s has no reduction kind", c.op)
	}
	if !c.groups(&a.CollectiveAttr, true) {
		return nil
	}
	n, ok := c.groupSize(&a.CollectiveAttr)
	if !ok || !c.checkClass(c.args[0], numericT, "operand") {
		return nil
	}
	return c.scaledResults(a.Dim, n, a.CrossReplicaAndPartition(), true)
}

// scaledResults checks each written result against its operand: equal but
// at dim, where the result is the operand times n (divided by n when
// split), or times a multiple of n when multiple.
func (c *inferCtx) scaledResults(dim, n int64, multiple, split bool) []Type {
	if len(c.hint) != len(c.args) {
		return c.fail("%s has %s, but %d types are written", c.op, plural(len(c.args), "result"), len(c.hint))
	}
	for i, x := range c.args {
		r := c.hint[i]
		if !c.axis(dim, x.Rank(), "dim") {
			return nil
		}
		if r.DType != x.DType || r.Rank() != x.Rank() {
			return c.fail("result %d of %s must be %s but for dimension %d, got %s", i, c.op, x, dim, r)
		}
		small, big := x, r
		if split {
			small, big = r, x
		}
		xs, ok1 := c.staticDim(small, int(dim))
		rs, ok2 := c.staticDim(big, int(dim))
		if !ok1 || !ok2 {
			return nil
		}
		for d := range x.Shape {
			if int64(d) != dim && x.Shape[d] != r.Shape[d] {
				return c.fail("result %d of %s must be %s but for dimension %d, got %s", i, c.op, x, dim, r)
			}
		}
		k := n
		if multiple && xs > 0 && rs%xs == 0 && rs/xs%n == 0 {
			k = rs / xs
		}
		if rs != xs*k && multiple {
			return c.fail("dimension %d of %s: %d is not %d × a multiple of %d, the group size times the partitions", dim, c.op, rs, xs, n)
		}
		if rs != xs*k {
			return c.fail("dimension %d of %s: %d is not %d × %d, the group size", dim, c.op, rs, xs, k)
		}
	}
	return c.hint
}

func inferAllToAll(c *inferCtx) []Type {
	a, ok := c.attr.(*AllToAllAttr)
	if !ok || !c.groups(&a.CollectiveAttr, false) {
		return c.fail("%s has no replica groups", c.op)
	}
	if a.SplitCount <= 0 {
		return c.fail("split_count of all_to_all must be at least 1, got %d", a.SplitCount)
	}
	for i, g := range a.Groups {
		if int64(len(g)) != a.SplitCount {
			return c.fail("replica group %d of all_to_all has %d ids, want split_count %d", i, len(g), a.SplitCount)
		}
	}
	out := make([]Type, len(c.args))
	for i, x := range c.args {
		if !c.axis(a.SplitDim, x.Rank(), "split_dim") || !c.axis(a.ConcatDim, x.Rank(), "concat_dim") {
			return nil
		}
		n, ok := c.staticDim(x, int(a.SplitDim))
		if !ok {
			return nil
		}
		if n%a.SplitCount != 0 {
			return c.fail("dimension %d of operand %d of all_to_all is %d, not a multiple of split_count %d", a.SplitDim, i, n, a.SplitCount)
		}
		s := append([]Dim{}, x.Shape...)
		s[a.SplitDim] = D(s[a.SplitDim].Size / a.SplitCount)
		if s[a.ConcatDim].Symbolic() {
			return c.fail("all_to_all needs a static size for dimension %d of %s", a.ConcatDim, x)
		}
		s[a.ConcatDim] = D(s[a.ConcatDim].Size * a.SplitCount)
		out[i] = x.WithShape(s)
	}
	return out
}

// inferProcessID: replica_id and partition_id give a u32 scalar.
func inferProcessID(*inferCtx) []Type { return []Type{Scalar(U32)} }

// IsCollective reports whether op exchanges values between processes.
func IsCollective(op Op) bool {
	switch op {
	case OpAllReduce, OpAllGather, OpAllToAll, OpReduceScatter, OpCollectiveBroadcast,
		OpCollectivePermute, OpCollectiveReduce:
		return true
	}
	return false
}
