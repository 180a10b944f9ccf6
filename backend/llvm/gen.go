package llvm

import (
	"fmt"
	"slices"
	"strings"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// Every kernel has one signature, so the executor calls them all alike:
//
//	void kNNN(i8** bufs, i64 lo, i64 hi, i8* scratch)
//
// bufs holds the kernel's buffers (outputs first, then inputs) and [lo, hi)
// is the range of its outermost loop that this call runs, which is how the
// executor splits a kernel across threads; scratch is memory private to
// this call (the plan's scratchBytes long), where matmuls pack panels.

// gen is one LLVM module under construction.
type gen struct {
	m     *lir.Module
	decls map[string]*lir.Func
	n     int
	// wide: the host has AVX-512, so kernels may keep <16 x float>
	// values in its 32 vector registers; without it each is two AVX2
	// halves, and a tile of sixteen of them would spill.
	wide bool
	// gemm: the blocked product's parameters (gemm_tune.go).
	gemm gemmParams
	// loopIDs: the loop identifiers of the hints given to clang, by
	// hint (loopID).
	loopIDs map[string]*metadata.Tuple
	// scopes, outScopes, domain: the noalias metadata of kernel outputs
	// (noalias.go), lists by key.
	scopes    map[string]*metadata.Tuple
	outScopes map[int]*metadata.Tuple
	domain    *metadata.Tuple
	// bodies: each kernel dedupeKernels kept, as text under the name
	// "kernel", by its name (split.go reads them).
	bodies map[string]string
	// ntNode: the !{i32 1} of non-temporal stores (stream.go), once made.
	ntNode *metadata.Tuple
}

func newGen(wide bool) *gen {
	return &gen{m: lir.NewModule(), decls: map[string]*lir.Func{}, wide: wide, gemm: staticGemm(wide), bodies: map[string]string{}}
}

// declare returns the external function name (an intrinsic or libm),
// declaring it once.
func (g *gen) declare(name string, ret types.Type, params ...types.Type) *lir.Func {
	if f, ok := g.decls[name]; ok {
		return f
	}
	ps := make([]*lir.Param, len(params))
	for i, t := range params {
		ps[i] = lir.NewParam("", t)
	}
	f := g.m.NewFunc(name, ret, ps...)
	g.decls[name] = f
	return f
}

// text is the module as LLVM 14 assembly.
func (g *gen) text() string {
	var b strings.Builder
	b.WriteString("; tpucc kernels\n")
	if !g.writeFuncs(&b) {
		b.WriteString(g.m.String())
	}
	return b.String()
}

// writeFuncs writes the module as Module.String does, each kernel that
// dedupeKernels printed taken from its text (bodies) rather than printed
// again (llir's printer is most of the Go side's IR time: 9 ms of Qwen3's
// decode step, TestModuleTextFromBodies); false, having written nothing,
// for a module with more than functions and metadata, or before dedupe.
func (g *gen) writeFuncs(b *strings.Builder) bool {
	m := g.m
	if len(g.bodies) == 0 || m.SourceFilename != "" || m.DataLayout != "" || m.TargetTriple != "" ||
		len(m.ModuleAsms)+len(m.TypeDefs)+len(m.ComdatDefs)+len(m.Globals)+len(m.Aliases)+len(m.IFuncs) > 0 ||
		len(m.AttrGroupDefs)+len(m.NamedMetadataDefs)+len(m.UseListOrders)+len(m.UseListOrderBBs) > 0 {
		return false
	}
	if err := m.AssignGlobalIDs(); err != nil {
		panic(fmt.Errorf("llvm: assigning the module's global IDs: %v", err))
	}
	if err := m.AssignMetadataIDs(); err != nil {
		panic(fmt.Errorf("llvm: assigning the module's metadata IDs: %v", err))
	}
	for i, f := range m.Funcs {
		if i != 0 {
			b.WriteString("\n")
		}
		if body, ok := g.bodies[f.Name()]; ok && strings.HasPrefix(body, kernelHead) {
			b.WriteString("define void @")
			b.WriteString(f.Name())
			b.WriteString("(")
			b.WriteString(body[len(kernelHead):])
		} else {
			b.WriteString(f.LLString())
		}
		b.WriteString("\n")
	}
	if len(m.MetadataDefs) > 0 && len(m.Funcs) > 0 {
		b.WriteString("\n")
	}
	for _, md := range m.MetadataDefs {
		fmt.Fprintf(b, "%s = %s\n", md.Ident(), md.LLString())
	}
	return true
}

var (
	i8pp = types.NewPointer(types.I8Ptr)
	i64  = types.I64
)

func ci(v int64) *constant.Int { return constant.NewInt(types.I64, v) }

// kfn is one kernel function being emitted; cur is the block that code is
// appended to.
type kfn struct {
	g       *gen
	f       *lir.Func
	name    string
	bufs    value.Value
	lo, hi  value.Value
	scratch value.Value
	cur     *lir.Block
	ptrs    map[int]value.Value
	delin   []delinearized // delinear's results, for linear
}

// delinearized is a flat index lin split into idx along dims (delinear);
// folded once linear gave lin back for idx.
type delinearized struct {
	lin    value.Value
	dims   []int64
	idx    []value.Value
	folded bool
}

// newKernel starts a kernel; its entry block is current.
func (g *gen) newKernel() *kfn {
	g.n++
	name := fmt.Sprintf("k%d", g.n)
	bufs := lir.NewParam("bufs", i8pp)
	lo := lir.NewParam("lo", i64)
	hi := lir.NewParam("hi", i64)
	scratch := lir.NewParam("scratch", types.I8Ptr)
	f := g.m.NewFunc(name, types.Void, bufs, lo, hi, scratch)
	k := &kfn{g: g, f: f, name: name, bufs: bufs, lo: lo, hi: hi, scratch: scratch, ptrs: map[int]value.Value{}}
	k.cur = f.NewBlock("entry")
	return k
}

// finish returns from the kernel, and drops what delinear computed that
// nothing uses (linear gave the flat index back instead).
func (k *kfn) finish() {
	k.cur.NewRet(nil)
	k.dropUnusedDelinear()
}

// dropUnusedDelinear removes the remainders and quotients of the
// delinears that linear folded that nothing else uses: a kernel that reads
// its operands at its own flat index keeps no trace of its shape, so two
// such kernels of different sizes are one (dedupeKernels; the range gives
// the size). Only those are looked at: a kernel without one costs nothing.
func (k *kfn) dropUnusedDelinear() {
	dead := map[value.Value]bool{}
	for _, d := range k.delin {
		if !d.folded {
			continue
		}
		for _, v := range d.idx {
			for v != nil {
				var next value.Value
				switch inst := v.(type) {
				case *lir.InstURem:
					next = inst.X
				case *lir.InstUDiv:
					next = inst.X
				}
				if next == nil {
					break
				}
				dead[v] = true
				if q, ok := next.(*lir.InstUDiv); ok {
					dead[q] = true
				}
				v = next
			}
		}
	}
	for len(dead) > 0 {
		used := map[value.Value]bool{}
		for _, b := range k.f.Blocks {
			for _, inst := range b.Insts {
				if u, ok := inst.(interface{ Operands() []*value.Value }); ok {
					for _, op := range u.Operands() {
						if _, ok := (*op).(lir.Instruction); ok {
							used[*op] = true
						}
					}
				}
			}
			for _, op := range b.Term.Operands() {
				if _, ok := (*op).(lir.Instruction); ok {
					used[*op] = true
				}
			}
		}
		removed := false
		for _, b := range k.f.Blocks {
			keep := b.Insts[:0]
			for _, inst := range b.Insts {
				if v, ok := inst.(value.Value); ok && dead[v] && !used[v] {
					delete(dead, v)
					removed = true
					continue
				}
				keep = append(keep, inst)
			}
			b.Insts = keep
		}
		if !removed {
			return
		}
	}
}

// buf is the pointer to buffer i of the kernel as elem*. It is loaded in
// the entry block, so it is invariant in every loop.
func (k *kfn) buf(i int, elem types.Type) value.Value {
	if p, ok := k.ptrs[i]; ok {
		if p.Type().(*types.PointerType).ElemType.Equal(elem) {
			return p
		}
	}
	entry := k.f.Blocks[0]
	slot := lir.NewGetElementPtr(types.I8Ptr, k.bufs, ci(int64(i)))
	slot.InBounds = true
	raw := lir.NewLoad(types.I8Ptr, slot)
	cast := lir.NewBitCast(raw, types.NewPointer(elem))
	// Insert before whatever the entry block holds so far so that the
	// pointer dominates every use.
	entry.Insts = append([]lir.Instruction{slot, raw, cast}, entry.Insts...)
	k.ptrs[i] = cast
	return cast
}

// at is &p[idx].
func (k *kfn) at(elem types.Type, p, idx value.Value) value.Value {
	g := k.cur.NewGetElementPtr(elem, p, idx)
	g.InBounds = true
	return g
}

func (k *kfn) load(elem types.Type, p, idx value.Value) value.Value {
	return k.cur.NewLoad(elem, k.at(elem, p, idx))
}

func (k *kfn) store(v, p, idx value.Value) {
	k.cur.NewStore(v, k.at(v.Type(), p, idx))
}

// loop emits for i := from; i < to; i++ { body } carrying the values acc
// (one phi each); body returns the carried values' next values. It returns
// the carried values after the loop.
func (k *kfn) loop(from, to value.Value, acc []value.Value, body func(i value.Value, acc []value.Value) []value.Value) []value.Value {
	phis, back := k.loopBack(from, to, acc, body)
	k.hint(back, "llvm.loop.interleave.count", interleaveCount)
	return phis
}

// interleaveCount is how many vectors the vectoriser keeps in flight in
// an innermost loop: clang's -O3 picks 4 by itself, but only while its
// unrolling is on (clangFlags turns it off, and with it interleaving
// unless a loop asks). Without it a reduction is one chain of dependent
// adds, and rms_norm took 1.27x as long (TestABFlags, not kept).
const interleaveCount = 4

// loopUnrolled is loop with clang asked to unroll it count times. Kernels
// build with -fno-unroll-loops (object.go's clangFlags), which leaves a
// loop rolled unless its metadata forces a count: a loop whose speed was
// measured to need unrolling asks for it here.
func (k *kfn) loopUnrolled(count int64, from, to value.Value, acc []value.Value, body func(i value.Value, acc []value.Value) []value.Value) []value.Value {
	phis, back := k.loopBack(from, to, acc, body)
	k.hint(back, "llvm.loop.unroll.count", count)
	return phis
}

// hint gives the loop whose back branch is back the identifier asking
// for name = count.
func (k *kfn) hint(back *lir.TermBr, name string, count int64) {
	back.Metadata = append(back.Metadata, &metadata.Attachment{Name: "llvm.loop", Node: k.g.loopID(name, count)})
}

// loopID is the module's loop identifier for one hint. Loops share it,
// so that kernels differing only in their loops' identifiers stay
// identical text for dedupeKernels; clang gives a loop it transforms an
// identifier of its own.
func (g *gen) loopID(name string, count int64) *metadata.Tuple {
	key := fmt.Sprintf("%s %d", name, count)
	if id, ok := g.loopIDs[key]; ok {
		return id
	}
	// Numbered now: a tuple without a number prints inline, and this one
	// refers to itself.
	n := metadata.MetadataID(len(g.m.MetadataDefs))
	hint := &metadata.Tuple{MetadataID: n + 1, Fields: []metadata.Field{
		&metadata.String{Value: name}, constant.NewInt(types.I32, count)}}
	id := &metadata.Tuple{MetadataID: n, Distinct: true}
	id.Fields = []metadata.Field{id, hint}
	g.m.MetadataDefs = append(g.m.MetadataDefs, id, hint)
	if g.loopIDs == nil {
		g.loopIDs = map[string]*metadata.Tuple{}
	}
	g.loopIDs[key] = id
	return id
}

// loopBack is loop, also returning the branch back to its header (which
// carries the loop's metadata).
func (k *kfn) loopBack(from, to value.Value, acc []value.Value, body func(i value.Value, acc []value.Value) []value.Value) ([]value.Value, *lir.TermBr) {
	pre := k.cur
	hdr := k.f.NewBlock("")
	bodyB := k.f.NewBlock("")
	exit := k.f.NewBlock("")
	pre.NewBr(hdr)
	i := hdr.NewPhi(lir.NewIncoming(from, pre))
	phis := make([]value.Value, len(acc))
	for j, a := range acc {
		phis[j] = hdr.NewPhi(lir.NewIncoming(a, pre))
	}
	hdr.NewCondBr(hdr.NewICmp(enum.IPredSLT, i, to), bodyB, exit)
	k.cur = bodyB
	next := body(i, phis)
	inc := k.cur.NewAdd(i, ci(1))
	inc.OverflowFlags = []enum.OverflowFlag{enum.OverflowFlagNSW}
	i.Incs = append(i.Incs, lir.NewIncoming(inc, k.cur))
	for j := range phis {
		phis[j].(*lir.InstPhi).Incs = append(phis[j].(*lir.InstPhi).Incs, lir.NewIncoming(next[j], k.cur))
	}
	back := k.cur.NewBr(hdr)
	k.cur = exit
	return phis, back
}

// loopPlain is loop with nothing carried and no hint, for an elementwise
// nest's loops (emitNestSplit, which hints them by what they compute,
// hintNest); it returns the branch back to its header.
func (k *kfn) loopPlain(from, to value.Value, body func(i value.Value)) *lir.TermBr {
	_, back := k.loopBack(from, to, nil, func(i value.Value, _ []value.Value) []value.Value {
		body(i)
		return nil
	})
	return back
}

// nestInterleave is the interleave count an elementwise nest's loops ask
// for when their elements are cheap (no call, no float division;
// hintNest); 1 asks none, and clang's vectoriser then keeps one vector in
// flight (-fno-unroll-loops turns its own interleaving off). Nothing is
// carried from one element to the next, so for copies, converts, compares
// and arithmetic more in flight bought no speed (BenchmarkNestInterleave),
// while interleaving them by 4 was a fifth of clang's object code and
// about a tenth of its time on Qwen3-0.6B's decode step
// (docs/CPU_BACKEND.md, "Elementwise nests of cheap elements are not
// interleaved"). A variable so that the benchmark builds both ways.
var nestInterleave int64 = 1

// hintNest asks clang to interleave the nest loops whose back branches
// are backs: by interleaveCount when the kernel calls a function that is
// not a multiply-add (exp, sin, a libm routine) or divides floats, whose
// long chains of dependent instructions more elements in flight hide, else
// by nestInterleave. (Integer division is index arithmetic by constants,
// which clang turns into multiplies.)
func hintNest(k *kfn, backs []*lir.TermBr) {
	n := nestInterleave
	if latencyBound(k.f) {
		n = interleaveCount
	}
	if n <= 1 {
		return
	}
	for _, b := range backs {
		k.hint(b, "llvm.loop.interleave.count", n)
	}
}

// latencyBound reports whether f divides floats or calls anything but a
// multiply-add.
func latencyBound(f *lir.Func) bool {
	for _, b := range f.Blocks {
		for _, in := range b.Insts {
			switch in := in.(type) {
			case *lir.InstFDiv, *lir.InstFRem:
				return true
			case *lir.InstCall:
				name := strings.TrimPrefix(in.Callee.Ident(), "@")
				if !strings.HasPrefix(name, "llvm.fmuladd.") && !strings.HasPrefix(name, "llvm.fma.") {
					return true
				}
			}
		}
	}
	return false
}

// loopN is loop over [0, n) with nothing carried.
func (k *kfn) loopN(n int64, body func(i value.Value)) {
	k.loop(ci(0), ci(n), nil, func(i value.Value, _ []value.Value) []value.Value {
		body(i)
		return nil
	})
}

// mulAdd is a*s + b in i64 (index arithmetic), folding constants.
func (k *kfn) mulAdd(a value.Value, s int64, b value.Value) value.Value {
	// Index arithmetic never wraps (nsw): the vectoriser's scalar evolution
	// can then see an index that steps by one as a contiguous access.
	var t value.Value = a
	if c, ok := a.(*constant.Int); ok {
		t = ci(c.X.Int64() * s)
	} else if s == 0 {
		t = ci(0)
	} else if s != 1 {
		m := k.cur.NewMul(a, ci(s))
		m.OverflowFlags = []enum.OverflowFlag{enum.OverflowFlagNSW}
		t = m
	}
	if c, ok := b.(*constant.Int); ok && c.X.Sign() == 0 {
		return t
	}
	if c, ok := t.(*constant.Int); ok && c.X.Sign() == 0 {
		return b
	}
	add := k.cur.NewAdd(t, b)
	add.OverflowFlags = []enum.OverflowFlag{enum.OverflowFlagNSW}
	return add
}

// linear is the row-major flat index of idx in dims. An index that
// delinear split along the same dims is its flat index again: clang would
// fold the arithmetic, but the kernel's text would keep the dims, and two
// kernels differing only in them (a convert of 1024 elements and one of
// 128) would not be one (dedupeKernels). So is a leading part of idx that
// delinear split along the leading dims (a copy's rows, split from the
// range, with a loop over the columns): (q*8+r)*128+i is row*128+i, and
// copies of [n,8,128] and [n,16,128] are one kernel.
func (k *kfn) linear(idx []value.Value, dims []int64) value.Value {
	from, best := 0, -1
	for i, d := range k.delin {
		n := len(d.dims)
		if n > from && n <= len(dims) && slices.Equal(d.dims, dims[:n]) && slices.Equal(d.idx, idx[:n]) {
			from, best = n, i
		}
	}
	var lin value.Value = ci(0)
	if best >= 0 {
		k.delin[best].folded = true
		lin = k.delin[best].lin
	}
	for d := from; d < len(dims); d++ {
		if d == 0 {
			lin = idx[0]
			continue
		}
		lin = k.mulAdd(lin, dims[d], idx[d])
	}
	return lin
}

// fast marks a float instruction as reassociable, which lets the loop
// vectoriser keep reductions in vector accumulators; nothing else about
// IEEE semantics is relaxed (no contraction into FMA, NaN and inf kept).
func fast(v value.Value) value.Value {
	switch x := v.(type) {
	case *lir.InstFAdd:
		x.FastMathFlags = []enum.FastMathFlag{enum.FastMathFlagReassoc, enum.FastMathFlagNSZ}
	case *lir.InstFMul:
		x.FastMathFlags = []enum.FastMathFlag{enum.FastMathFlagReassoc, enum.FastMathFlagNSZ}
	}
	return v
}

// emitNest emits the loops over dims, the outermost over the kernel's
// [lo, hi), and calls body with the indices in the innermost loop. A scalar
// runs body once per index of [lo, hi) (which is [0, 1)).
func emitNest(k *kfn, dims []int64, body func(idx []value.Value)) {
	emitNestSplit(k, dims, -1, nil, func(idx []value.Value, _ int) { body(idx) })
}

// emitNestSplit is emitNest with dimension axis (of two or more) split in
// parts [cuts[p], cuts[p+1]), empty parts left out, and body told the part:
// a dimension with a loop of its own has one loop per part; one of the
// leading dimensions that make the kernel's rows has, in each row, one
// branch per part, each with the nest inside. No cuts is a single part.
func emitNestSplit(k *kfn, dims []int64, axis int, cuts []int64, body func(idx []value.Value, part int)) {
	if len(dims) < 2 {
		cuts = nil
	}
	idx := make([]value.Value, len(dims))
	var backs []*lir.TermBr
	loop := func(from, to value.Value, body func(i value.Value)) {
		backs = append(backs, k.loopPlain(from, to, body))
	}
	defer func() { hintNest(k, backs) }()
	var rec func(d, part int)
	rec = func(d, part int) {
		if d == len(dims) {
			body(idx, part)
			return
		}
		if d == axis && cuts != nil {
			for p := range len(cuts) - 1 {
				if cuts[p] == cuts[p+1] {
					continue
				}
				loop(ci(cuts[p]), ci(cuts[p+1]), func(i value.Value) {
					idx[d] = i
					rec(d+1, p)
				})
			}
			return
		}
		loop(ci(0), ci(dims[d]), func(i value.Value) {
			idx[d] = i
			rec(d+1, part)
		})
	}
	_, lead := nestRows(dims)
	loop(k.lo, k.hi, func(i value.Value) {
		if len(dims) == 0 {
			body(nil, 0)
			return
		}
		copy(idx, k.delinear(i, dims[:lead]))
		if axis < 0 || axis >= lead || cuts == nil {
			rec(lead, 0)
			return
		}
		at := idx[axis]
		for p := range len(cuts) - 1 {
			if cuts[p] == cuts[p+1] {
				continue
			}
			in := k.cur.NewAnd(k.cur.NewICmp(enum.IPredSGE, at, ci(cuts[p])), k.cur.NewICmp(enum.IPredSLT, at, ci(cuts[p+1])))
			k.ifElse(in, func() { rec(lead, p) }, nil)
		}
	})
}

// nestRows is the range of a nest's kernel: its leading lead dimensions
// taken as one index, as few as make nestMinRows rows, never the innermost
// of two or more (it stays a loop, for the vectoriser). With the first
// dimension alone, a batch of one ([1, 16, 512, 512], a prefill's
// attention scores) was one row, and its kernels ran on one core.
func nestRows(dims []int64) (rows int64, lead int) {
	rows, lead = 1, 0
	for lead < len(dims) && (lead == 0 || lead < len(dims)-1 && rows < nestMinRows) {
		rows *= dims[lead]
		lead++
	}
	return rows, lead
}

// nestMinRows is how many rows a nest's kernel range is given when its
// dimensions allow: enough for the cores to share them evenly.
const nestMinRows = 16
