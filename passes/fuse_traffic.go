package passes

import (
	"math"
	"math/bits"

	"github.com/tpucc/tpucc/ir"
)

// traffic is a group's memory traffic kept as running sums, so that the
// bytes of a union of two groups come from the smaller one's members alone
// instead of a walk over both (which made fusing a chain cubic). The terms
// are those of Target.GroupBytes: every value read from outside the group,
// once, at the largest footprint a member reads it at, and every result of
// a non-constant member that an instruction outside the group reads.
type traffic struct {
	reads   readSet // value ID -> footprint of the values read from outside
	sum     u128    // the terms whose size is known
	unknown int     // the terms whose size is not (-1): the group cannot be costed
}

// bytes is the group's traffic, or -1 when a term is unknown or the sum
// overflows int64.
func (t *traffic) bytes() int64 {
	if t.unknown > 0 {
		return -1
	}
	return t.sum.int64()
}

// readBytes is what instruction in reads of its operand k when that operand
// comes from outside the group: the target's footprint, or without a target
// the operand's logical size (every constant read in full).
func (p *fusePlan) readBytes(in *ir.Instr, k int) int64 {
	if p.c.Target != nil {
		return p.c.Target.OperandBytes(in, k)
	}
	return logicalBytes(in.Args[k].Type)
}

// writeBytes is what writing v costs.
func (p *fusePlan) writeBytes(v *ir.Value) int64 {
	if p.c.Target != nil {
		return p.c.Target.Bytes(v.Type)
	}
	return logicalBytes(v.Type)
}

// logicalBytes is dtype size times element count: the bytes without a target.
func logicalBytes(t ir.Type) int64 {
	n, ok := t.NumElements()
	if !ok {
		return -1
	}
	size := int64(t.DType.Size())
	if n != 0 && size > math.MaxInt64/n {
		return -1
	}
	return n * size
}

// initTraffic sets the traffic of instruction i as a group of its own.
func (p *fusePlan) initTraffic(i int, t *traffic) {
	in := p.instrs[i]
	for k, a := range in.Args {
		s := p.readBytes(in, k)
		if old, ok := t.reads.get(a.ID); ok {
			s = largerRead(old, s)
		}
		t.reads.put(a.ID, s)
	}
	for k := range t.reads.ids {
		t.add(t.reads.sizes[k])
	}
	if p.kind[i] == fkConst {
		return // constants are data: never written
	}
	for _, v := range in.Results {
		if p.outside[v.ID] > 0 {
			t.add(p.writeBytes(v))
		}
	}
}

func (t *traffic) add(s int64) {
	if s < 0 {
		t.unknown++
		return
	}
	t.sum = t.sum.add(s)
}

// largerRead combines two footprints of one value: the larger, or unknown
// when either is.
func largerRead(x, y int64) int64 {
	if x < 0 || y < 0 {
		return -1
	}
	return max(x, y)
}

// How a value that the smaller group reads from outside fares in the union.
const (
	readNew      uint8 = iota // the larger group does not read it: it joins its reads
	readShared                // both read it: one read, at the larger footprint
	readInternal              // the larger group defines it: no longer a read
)

// readChange is one value the smaller group reads from outside.
type readChange struct {
	id    int
	size  int64 // its footprint in the union (readNew, readShared)
	slots int   // operands of the smaller group reading it (readInternal)
	how   uint8
}

// resultChange is one result of the smaller group's members.
type resultChange struct {
	id      int
	readByL bool // the larger group read it from outside
	slotsL  int  // operands of the larger group reading it
}

// mergeDelta is the effect of merging group s into group l, computed by
// preview and applied by commit; its slices are reused from one merge to
// the next.
type mergeDelta struct {
	s, l       int
	cut        u128 // known bytes the union does not pay
	cutUnknown int  // unknown terms the union does not have
	reads      []readChange
	results    []resultChange
}

// unionBytes is the traffic of s ∪ l, as GroupBytes would give it.
func (p *fusePlan) unionBytes(d *mergeDelta) int64 {
	s, l := &p.groups[d.s].traffic, &p.groups[d.l].traffic
	if s.unknown+l.unknown-d.cutUnknown > 0 {
		return -1
	}
	return s.sum.plus(l.sum).minus(d.cut).int64()
}

func (d *mergeDelta) drop(s int64) {
	if s < 0 {
		d.cutUnknown++
		return
	}
	d.cut = d.cut.add(s)
}

// preview fills p.delta with what merging group s into group l changes,
// looking only at s's members, their operands and their results' users.
func (p *fusePlan) preview(s, l int) {
	d := &p.delta
	*d = mergeDelta{s: s, l: l, reads: d.reads[:0], results: d.results[:0]}
	gs, gl := p.groups[s], p.groups[l]
	var touched []*ir.Value
	p.steps += 2 * len(gs.members)
	for _, m := range gs.members {
		for _, a := range p.instrs[m].Args {
			if p.defGroup(a) == s {
				continue // internal to s
			}
			if p.slots[a.ID] == 0 {
				touched = append(touched, a)
			}
			p.slots[a.ID]++
		}
	}
	for _, v := range touched {
		p.previewRead(d, v, gs, gl)
		p.slots[v.ID] = 0
	}
	for _, m := range gs.members {
		for _, v := range p.instrs[m].Results {
			p.previewResult(d, v, p.kind[m] == fkConst, gl)
		}
	}
}

// previewRead: v is read by s from outside.
func (p *fusePlan) previewRead(d *mergeDelta, v *ir.Value, gs, gl *fuseGroup) {
	size, _ := gs.traffic.reads.get(v.ID)
	if p.defGroup(v) == d.l {
		d.drop(size)
		if n := p.outside[v.ID]; n > 0 && n == p.slots[v.ID] && p.kind[p.pos[v.Def.ID]] != fkConst {
			d.drop(p.writeBytes(v)) // only s read it outside l
		}
		d.reads = append(d.reads, readChange{id: v.ID, slots: p.slots[v.ID], how: readInternal})
		return
	}
	lsize, shared := gl.traffic.reads.get(v.ID)
	if !shared {
		d.reads = append(d.reads, readChange{id: v.ID, size: size, how: readNew})
		return
	}
	// Two terms become one, the larger.
	switch {
	case size >= 0 && lsize >= 0:
		d.cut = d.cut.add(min(size, lsize))
	case size < 0 && lsize < 0:
		d.cutUnknown++
	default:
		d.cut = d.cut.add(max(size, lsize))
	}
	d.reads = append(d.reads, readChange{id: v.ID, size: largerRead(size, lsize), how: readShared})
}

// previewResult: v is a result of a member of s; constant says the member
// is a constant (never written).
func (p *fusePlan) previewResult(d *mergeDelta, v *ir.Value, constant bool, gl *fuseGroup) {
	c := resultChange{id: v.ID}
	if size, ok := gl.traffic.reads.get(v.ID); ok {
		d.drop(size)
		c.readByL = true
	}
	if n := p.outside[v.ID]; n > 0 {
		for _, u := range p.uses.Users(v) {
			if i, ok := p.at(u); ok && p.find(i) == d.l {
				c.slotsL++
			}
		}
		if !constant && c.slotsL == n {
			d.drop(p.writeBytes(v))
		}
	}
	if c.readByL || c.slotsL > 0 {
		d.results = append(d.results, c)
	}
}

// commitTraffic applies p.delta: l's traffic becomes the union's.
func (p *fusePlan) commitTraffic() {
	d := &p.delta
	gs, gl := p.groups[d.s], p.groups[d.l]
	t := &gl.traffic
	t.sum = gs.traffic.sum.plus(t.sum).minus(d.cut)
	t.unknown = gs.traffic.unknown + t.unknown - d.cutUnknown
	for _, r := range d.reads {
		switch r.how {
		case readInternal:
			p.outside[r.id] -= r.slots
		default:
			t.reads.put(r.id, r.size)
		}
	}
	for _, r := range d.results {
		if r.readByL {
			t.reads.del(r.id)
		}
		p.outside[r.id] -= r.slotsL
	}
	gs.traffic = traffic{}
}

// readSet maps value IDs to footprints: a slice for the few reads of most
// groups, with an index once it grows.
type readSet struct {
	ids   []int
	sizes []int64
	at    map[int]int // id -> position, when len(ids) > readSetLinear
}

const readSetLinear = 16

func (r *readSet) find(id int) int {
	if r.at != nil {
		if k, ok := r.at[id]; ok {
			return k
		}
		return -1
	}
	for k, x := range r.ids {
		if x == id {
			return k
		}
	}
	return -1
}

func (r *readSet) get(id int) (int64, bool) {
	if k := r.find(id); k >= 0 {
		return r.sizes[k], true
	}
	return 0, false
}

func (r *readSet) put(id int, size int64) {
	if k := r.find(id); k >= 0 {
		r.sizes[k] = size
		return
	}
	r.ids = append(r.ids, id)
	r.sizes = append(r.sizes, size)
	if r.at != nil {
		r.at[id] = len(r.ids) - 1
	} else if len(r.ids) > readSetLinear {
		r.at = make(map[int]int, 2*len(r.ids))
		for k, x := range r.ids {
			r.at[x] = k
		}
	}
}

func (r *readSet) del(id int) {
	k := r.find(id)
	if k < 0 {
		return
	}
	last := len(r.ids) - 1
	r.ids[k], r.sizes[k] = r.ids[last], r.sizes[last]
	r.ids, r.sizes = r.ids[:last], r.sizes[:last]
	if r.at != nil {
		delete(r.at, id)
		if k < last {
			r.at[r.ids[k]] = k
		}
	}
}

// u128 holds a sum of int64 byte counts without overflowing, so that
// subtracting later gives what adding the remaining terms once would have.
type u128 struct{ hi, lo uint64 }

func (x u128) add(v int64) u128 { return x.plus(u128{lo: uint64(v)}) }

func (x u128) plus(y u128) u128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	return u128{x.hi + y.hi + carry, lo}
}

func (x u128) minus(y u128) u128 {
	lo, borrow := bits.Sub64(x.lo, y.lo, 0)
	return u128{x.hi - y.hi - borrow, lo}
}

// int64 is x, or -1 when it does not fit.
func (x u128) int64() int64 {
	if x.hi != 0 || x.lo > math.MaxInt64 {
		return -1
	}
	return int64(x.lo)
}
