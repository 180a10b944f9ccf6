package llvm

import (
	"strings"

	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// dotGroup is a group of dimensions of an operand (batch, free or
// contracting) taken together as one index, outermost first: their sizes
// and their strides in the operand's row-major storage.
type dotGroup struct {
	sizes, strides []int64
}

func (g dotGroup) size() int64 {
	n := int64(1)
	for _, s := range g.sizes {
		n *= s
	}
	return n
}

// simplify drops dimensions of size 1 and merges neighbours that are laid
// out as one strided dimension, so a collapsible group costs one multiply.
func (g dotGroup) simplify() dotGroup {
	var out dotGroup
	for i, s := range g.sizes {
		if s == 1 {
			continue
		}
		n := len(out.sizes)
		if n > 0 && out.strides[n-1] == g.strides[i]*s {
			out.sizes[n-1] *= s
			out.strides[n-1] = g.strides[i]
			continue
		}
		out.sizes = append(out.sizes, s)
		out.strides = append(out.strides, g.strides[i])
	}
	return out
}

// stride1 reports whether the group is one dimension of stride 1 (or
// empty).
func (g dotGroup) stride1() bool {
	return len(g.sizes) == 0 || len(g.sizes) == 1 && g.strides[0] == 1
}

// offset is the storage offset of flat index i of the group.
func (k *kfn) offset(g dotGroup, i value.Value) value.Value {
	switch len(g.sizes) {
	case 0:
		return ci(0)
	case 1:
		return k.mulAdd(i, g.strides[0], ci(0))
	}
	var off value.Value = ci(0)
	for d, x := range k.delinear(i, g.sizes) {
		off = k.mulAdd(x, g.strides[d], off)
	}
	return off
}

// dotOperand is one operand of a dot_general: its batch, free and
// contracting groups.
type dotOperand struct {
	batch, free, contract dotGroup
	dt                    ir.DType
}

func rowMajorStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

func newDotOperand(t ir.Type, batch, contract []int64) dotOperand {
	shape := t.Dims()
	st := rowMajorStrides(shape)
	group := func(dims []int64) dotGroup {
		var g dotGroup
		for _, d := range dims {
			g.sizes = append(g.sizes, shape[d])
			g.strides = append(g.strides, st[d])
		}
		return g
	}
	return dotOperand{
		batch:    group(batch).simplify(),
		free:     group(freeDims(len(shape), batch, contract)).simplify(),
		contract: group(contract).simplify(),
		dt:       t.DType,
	}
}

// freeDims lists, in order, the dimensions of a rank-n operand that are
// neither batch nor contracting.
func freeDims(n int, used ...[]int64) []int64 {
	taken := map[int64]bool{}
	for _, u := range used {
		for _, d := range u {
			taken[d] = true
		}
	}
	var out []int64
	for d := 0; d < n; d++ {
		if !taken[int64(d)] {
			out = append(out, int64(d))
		}
	}
	return out
}

// gemm reads the operand at batch index b through a buffer of the kernel.
func (o dotOperand) gemm(k *kfn, buf int, b value.Value) gemmOperand {
	fb := k.fbuf(buf, o.dt)
	base := k.offset(o.batch, b)
	off := func(i, kk value.Value) value.Value {
		return k.cur.NewAdd(base, k.cur.NewAdd(k.offset(o.free, i), k.offset(o.contract, kk)))
	}
	op := gemmOperand{at: func(i, kk value.Value) value.Value { return fb.load(off(i, kk)) }}
	if o.inPlace() {
		op.ptr = func(i, kk value.Value) value.Value { return k.at(types.Float, fb.p, off(i, kk)) }
	}
	if wideable(o.dt) && len(o.contract.sizes) == 1 && o.contract.stride1() {
		_, mem, _ := elemType(o.dt)
		op.row = func(i value.Value) value.Value {
			return k.at(mem, fb.p, k.cur.NewAdd(base, k.offset(o.free, i)))
		}
		op.rowDT = o.dt
	}
	return op
}

// inPlace reports whether gemm gives the operand a ptr: f32, its free
// index of stride 1 (a rhs read by rows of its storage).
func (o dotOperand) inPlace() bool { return o.dt == ir.F32 && o.free.stride1() }

// dotShape is a dot_general as a batch of products: lhs (b, m, k), rhs
// (b, k, n), the result [B, M, N] row-major (its dimensions are batch,
// lhs free, rhs free, in that order).
type dotShape struct {
	B, M, K, N int64
	lhs, rhs   dotOperand
	out        ir.DType
}

func analyseDot(in *ir.Instr) dotShape {
	a := in.Attr.(*ir.DotAttr)
	l := newDotOperand(in.Args[0].Type, a.LhsBatch, a.LhsContract)
	r := newDotOperand(in.Args[1].Type, a.RhsBatch, a.RhsContract)
	return dotShape{B: l.batch.size(), M: l.free.size(), K: l.contract.size(), N: r.free.size(),
		lhs: l, rhs: r, out: in.Results[0].Type.DType}
}

// dotEpilogue is the elementwise expression after a dot_general computed
// in the kernel's output tile: root is the value stored, with the dot's
// result as one of its leaves (read back from the tile, where it was just
// written); ops names the fused ops, for reports.
type dotEpilogue struct {
	root *ir.Value
	defs map[*ir.Value]*ir.Instr
	ops  string
}

// dot generates a dot_general with float operands and result (f16/bf16
// widened when packed, computed in f32, rounded when stored). The kernel's
// range is (batch, NC column block, MC row block), row blocks innermost:
// a call packs each rhs block once for all the row blocks of its range, so
// both cores share the work by row blocks or, for few rows (an MLP's
// batch), by column blocks.
func (pl *planner) dot(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) bool {
	d := pl.dotShape(in)
	if d.B*d.M*d.N > 0 && dotSwapBF16Fits(d, pl.tgt) {
		return pl.dotSwap(in, env, epi, true) // bf16 operands, a batched decode's rows (dot_swap.go)
	}
	if d.B*d.M*d.N > 0 && bf16GemmFits(d, pl.tgt) {
		return pl.bf16Gemm(in, env, epi) // both operands bf16, many rows: packed vdpbf16ps (bf16gemm.go)
	}
	if d.B*d.M*d.N > 0 && gemvFits(d) {
		// A few rows: stream the rhs (gemv.go), bf16 operands too. From
		// memory (a decode step's weights) it read bf16 × bf16 products
		// at 1.5-4x bf16Dot's tiles (BenchmarkGemm/rhsT-cold-bf16xbf16,
		// alternated); the tiles win only in cache.
		return pl.gemv(in, env, epi)
	}
	if d.B*d.M*d.N > 0 && bf16DotFits(d, pl.tgt) {
		return pl.bf16Dot(in, env, epi) // both operands bf16, vdpbf16ps (bf16dot.go)
	}
	if d.B*d.M*d.N > 0 && dotRowsFits(d) {
		return pl.dotRows(in, env, epi) // a few rows, rhs [K, N]: stream its rows (dot_rows.go)
	}
	if d.B*d.M*d.N > 0 && dotSwapFits(d, pl.tgt) {
		return pl.dotSwap(in, env, epi, false) // weights [N, K] and more rows (dot_swap.go)
	}
	k, st := pl.newKernelStep(in, env)
	if d.B*d.M*d.N == 0 {
		k.finish()
		st.rows = 0
		pl.addStep(in, env, st)
		return true
	}
	// One block of rows (an MLP's 64): the rhs is packed as it is read,
	// and the next block fetched meanwhile (packRHS).
	gp := pl.tgt.gemm
	overlap := d.M <= min(gemmMC, gp.MC) && d.rhs.inPlace()
	mc, kc, nc := gp.blocks(d.M, d.K, d.N, overlap)
	if d.out != ir.F32 {
		kc = max(d.K, 1) // one slice: the f32 sum is rounded once, when stored
	}
	pl.p.scratchBytes = max(pl.p.scratchBytes, gemmScratch(mc, kc, nc))
	// The kernel's rows are (batch, column block, lhs panel of gemmMR rows)
	// triples, so the cores split the rows evenly. By mc-row blocks, 1024
	// rows were 9 blocks, and one core had 600 rows to the other's 424.
	nP, nJC, nPC := (d.M+gemmMR-1)/gemmMR, (d.N+nc-1)/nc, max((d.K+kc-1)/kc, 1)
	st.rows, st.work = d.B*nJC*nP, d.B*d.M*d.N*max(d.K, 1)
	var epiAt func(b, m, n value.Value)
	var epiIn []fbuf
	if epi != nil {
		st.what += "+" + epi.ops
		epiAt = pl.epilogue(k, &st, in, env, epi)
		epiIn = epilogueInputs(k, &st, in.Results[0], env, epi)
	}
	ap, bp, tile := k.gemmScratchPtrs(mc, kc, nc)
	c := gemmC{buf: k.fbuf(0, d.out), ld: d.N, epiIn: epiIn}
	// bj runs over (batch, column block) pairs that [lo, hi) touches.
	from := k.cur.NewSDiv(k.lo, ci(nP))
	to := k.ceilDiv(k.hi, nP)
	k.loop(from, to, nil, func(bj value.Value, _ []value.Value) []value.Value {
		b, jc, r0, r1 := k.panelRange(bj, nP, nJC, d.M)
		nb := k.ceilDiv(k.cur.NewSub(r1, r0), mc)
		lhs, rhs := d.lhs.gemm(k, 1, b), d.rhs.gemm(k, 2, b)
		c.base = k.cur.NewMul(b, ci(d.M*d.N))
		if epiAt != nil {
			c.epi = func(m, n value.Value) { epiAt(b, m, n) }
		}
		n0 := k.cur.NewMul(jc, ci(nc))
		ncur := k.smin(ci(nc), k.cur.NewSub(ci(d.N), n0))
		k.loop(ci(0), ci(nPC), nil, func(pc value.Value, _ []value.Value) []value.Value {
			k0 := k.cur.NewMul(pc, ci(kc))
			kcur := k.smin(ci(kc), k.cur.NewSub(ci(d.K), k0))
			isFirst := k.cur.NewICmp(enum.IPredEQ, pc, ci(0))
			isLast := k.cur.NewICmp(enum.IPredEQ, pc, ci(nPC-1))
			pf, fuse := d.packRHS(k, bp, rhs, overlap, n0, ncur, k0, kcur, isLast, kc, nc)
			k.loop(ci(0), nb, nil, func(ib value.Value, _ []value.Value) []value.Value {
				m0 := k.mulAdd(ib, mc, r0)
				mcur := k.smin(ci(mc), k.cur.NewSub(r1, m0))
				k.gemmBlock(lhs, c, ap, bp, tile, m0, ci(d.M), mcur, n0, ci(d.N), ncur, k0, kcur, isFirst, isLast, pf, fuse)
				return nil
			})
			return nil
		})
		return nil
	})
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// packRHS packs the rhs block of columns [n0, n0+ncur) and slice [k0,
// k0+kcur) into bp for a row block's micro-kernels. With overlap (the lhs
// is one block of rows, and the rhs f32 with columns of stride 1) it
// packs only the panels that the micro-kernel does not pack as it reads
// them (gemmFuse), and returns the prefetch of the block packed next (the
// next slice of these columns, else the first slice of the next column
// block) into L2 while this one is multiplied. An MLP's 64-row product
// feeds each packed block to 11 row panels only; packed first, from
// memory, with nothing to overlap its reads, the block took a third of
// the product's time on a core with 512-bit FMAs.
func (d dotShape) packRHS(k *kfn, bp value.Value, rhs gemmOperand, overlap bool, n0, ncur, k0, kcur, last value.Value, kc, nc int64) (func(nt, line value.Value), *gemmFuse) {
	if !overlap {
		k.gemmPack(bp, rhs, gemmNR, n0, ci(d.N), ncur, k0, kcur)
		return nil, nil
	}
	fuse := k.gemmPackFused(bp, rhs, n0, ci(d.N), ncur, k0, kcur)
	nextK0 := k.cur.NewSelect(last, ci(0), k.cur.NewAdd(k0, ci(kc)))
	shift := k.cur.NewSelect(last, ci(nc), ci(0))
	pf := func(nt, line value.Value) {
		col := k.smin(k.cur.NewAdd(nt, shift), ci(d.N-1))
		kk := k.smin(k.cur.NewAdd(nextK0, line), ci(max(d.K, 1)-1))
		k.prefetchL2(rhs.ptr(col, kk))
	}
	return pf, fuse
}

// epilogueInputs are the operands in memory that the epilogue epi of the
// product r reads at r's own index (a gate's up projection, a residual),
// as buffers added to the step, for the blocked product to ask for their
// lines while it computes a tile (gemmC.prefetchEpi). Operands read
// through a broadcast or another remapping are left out.
func epilogueInputs(k *kfn, st *step, r *ir.Value, env map[*ir.Value]int, epi *dotEpilogue) []fbuf {
	var out []fbuf
	seen := map[*ir.Value]bool{}
	var walk func(v *ir.Value)
	walk = func(v *ir.Value) {
		if v == r || seen[v] || !v.Type.SameShape(r.Type) {
			return
		}
		seen[v] = true
		if slot, ok := env[v]; ok {
			out = append(out, k.fbuf(st.input(slot), v.Type.DType))
			return
		}
		in := epi.defs[v]
		if in == nil || remapOps[in.Op] {
			return
		}
		for _, a := range in.Args {
			walk(a)
		}
	}
	walk(epi.root)
	return out
}

// input is the index among st's buffers of slot, an input of the step:
// one it reads already (from 1 on: 0 is its output), else added.
func (st *step) input(slot int) int {
	for i := 1; i < len(st.bufs); i++ {
		if st.bufs[i] == slot {
			return i
		}
	}
	st.bufs = append(st.bufs, slot)
	return len(st.bufs) - 1
}

// addDotStep records a finished dot kernel: with an epilogue, the step's
// output holds the epilogue's value, not the dot's (which nothing else reads).
func (pl *planner) addDotStep(in *ir.Instr, env map[*ir.Value]int, st step, epi *dotEpilogue) {
	if epi != nil {
		env[epi.root] = st.bufs[0]
		pl.p.steps = append(pl.p.steps, st)
		return
	}
	pl.addStep(in, env, st)
}

// epilogue prepares the fused epilogue of a dot kernel: it returns the
// emitter of element (b, m, n), which evaluates epi.root there, reading
// the dot's result from the output tile (buffer 0) and every other leaf
// from a buffer added to the step, and stores it in place.
func (pl *planner) epilogue(k *kfn, st *step, in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) func(b, m, n value.Value) {
	if epi.root.Type.DType != ir.F32 {
		panic("llvm: a rounding epilogue outside a streamed product")
	}
	at := pl.epilogueOf(k, st, in, env, epi)
	return func(b, m, n value.Value) { at(b, m, n, nil) }
}

// epilogueOf is epilogue's emitter, which takes the dot's element in a
// register (dot) instead of from the output tile when dot is not nil, and
// stores epi.root at its dtype: rounded to f16/bf16 (rounds), buffer 0
// is the root's, and the dot's result is never stored.
func (pl *planner) epilogueOf(k *kfn, st *step, in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) func(b, m, n, dot value.Value) {
	r := in.Results[0]
	a := in.Attr.(*ir.DotAttr)
	dims := r.Type.Dims()
	nb := len(a.LhsBatch)
	nm := len(in.Args[0].Type.Dims()) - nb - len(a.LhsContract)
	e := &expr{k: k, defs: epi.defs, memo: map[string]value.Value{}, bufs: map[*ir.Value]int{}}
	e.leaf = func(x *ir.Value) (int, bool) {
		if x == r {
			return 0, true
		}
		s, ok := env[x]
		if !ok {
			return 0, false
		}
		return st.input(s), true
	}
	dt := epi.root.Type.DType
	_, mem, _ := elemType(dt)
	return func(b, m, n, dot value.Value) {
		// Each call emits the expression at another site of the kernel
		// (the micro-kernel's variants each store their tile), so values
		// computed at one site must not be reused at the next: when the
		// index is the batch alone (a result of batch dimensions only, the
		// same b at every site), they were, and the second site stored a
		// value its block does not see.
		e.memo = map[string]value.Value{}
		idx := append(k.delinear(b, dims[:nb]), k.delinear(m, dims[nb:nb+nm])...)
		idx = append(idx, k.delinear(n, dims[nb+nm:])...)
		if dot != nil {
			e.memo[memoKey(r, idx)] = dot
		}
		k.store(stored(k, e.at(epi.root, idx), dt), k.buf(0, mem), k.linear(idx, dims))
	}
}

// remapOps read their operand at another index than their result's.
var remapOps = map[ir.Op]bool{ir.OpBroadcast: true, ir.OpTranspose: true, ir.OpReshape: true,
	ir.OpSlice: true, ir.OpConcat: true, ir.OpPad: true, ir.OpDynamicSlice: true, ir.OpIota: true, ir.OpConstant: true,
	ir.OpOneHot:             true,
	ir.OpShardingConstraint: true, // one host holds every piece: the identity
}

// findEpilogues records, for each f32 dot_general of a group, the
// expression it can compute in its output tile: following the dot's
// result through its only user while that user is elementwise (every
// operand read at the result's index), f32 and of the dot's shape, up to
// the first value that must be materialised. The values in between stay
// virtual, so nothing else reads them; every other leaf of the expression
// must be in memory before the dot runs. The chain may end in a rounding
// to f16/bf16 (rounds) where the dot is streamed: at batch-1 decode with
// bf16 products, silu(gate)·up was otherwise a step of its own between
// the up and down products, which it is not with f32 products.
func (pl *planner) findEpilogues(body []*ir.Instr, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr, mat map[*ir.Value]bool) {
	users := map[*ir.Value][]*ir.Instr{}
	for _, in := range body {
		for _, a := range in.Args {
			users[a] = append(users[a], in)
		}
	}
	ready := map[*ir.Value]bool{} // materialised by the group so far
	for _, in := range body {
		if in.Op == ir.OpDotGeneral && in.Results[0].Type.DType == ir.F32 {
			if epi := dotChain(in.Results[0], users, defs, mat); epi != nil && epiReady(epi.root, in.Results[0], defs, env, ready, map[*ir.Value]bool{}) &&
				(epi.root.Type.DType == ir.F32 || pl.streamed(in)) {
				pl.epis[in] = epi
				ready[epi.root] = true
			}
		}
		for _, r := range in.Results {
			if !isExpr(in) || mat[r] {
				ready[r] = true
			}
		}
	}
}

// dotChain follows r through single elementwise users to the first
// materialised value; nil when there is none or r is materialised itself.
// The values are f32 but for a last rounding to f16/bf16 (rounds).
func dotChain(r *ir.Value, users map[*ir.Value][]*ir.Instr, defs map[*ir.Value]*ir.Instr, mat map[*ir.Value]bool) *dotEpilogue {
	v := r
	var ops []string
	narrowed := false
	for !mat[v] {
		us := users[v]
		if len(us) == 0 {
			return nil
		}
		u := us[0]
		for _, x := range us {
			if x != u {
				return nil
			}
		}
		res := u.Results[0]
		if defs[res] != u || remapOps[u.Op] || !res.Type.SameShape(r.Type) {
			return nil
		}
		switch {
		case narrowed:
			if u.Op != ir.OpCopy { // past the rounding, only a fusion's bindings
				return nil
			}
		case res.Type.DType == ir.F32:
		case rounds(u):
			narrowed = true
		default:
			return nil
		}
		if u.Op != ir.OpCopy { // also the copies that bind an inlined fusion
			ops = append(ops, u.Op.String())
		}
		v = res
	}
	if v == r {
		return nil
	}
	return &dotEpilogue{root: v, defs: defs, ops: strings.Join(ops, "+")}
}

// rounds reports whether u rounds an f32 value to f16/bf16: a bf16
// product's activations (models' linear) stored for the next product,
// which reads them at their width. It ends a dot's chain, and only the
// streamed product (gemv) stores such an epilogue (findEpilogues).
func rounds(u *ir.Instr) bool {
	dt := u.Results[0].Type.DType
	return u.Op == ir.OpConvert && (dt == ir.BF16 || dt == ir.F16) && u.Args[0].Type.DType == ir.F32
}

// epiReady reports whether every leaf of v's expression, but the dot's
// result r, is in memory when the dot runs.
func epiReady(v, r *ir.Value, defs map[*ir.Value]*ir.Instr, env map[*ir.Value]int, ready, seen map[*ir.Value]bool) bool {
	if v == r || ready[v] || seen[v] {
		return true
	}
	if _, ok := env[v]; ok {
		return true
	}
	seen[v] = true
	in := defs[v]
	if in == nil {
		return false
	}
	for _, a := range in.Args {
		if !epiReady(a, r, defs, env, ready, seen) {
			return false
		}
	}
	return true
}

// panelRange splits bj, a (batch, column block) pair of a blocked
// product's range, into its batch b and column block jc, and gives the
// rows [r0, r1) of its gemmMR-row panels that [lo, hi) covers (of m rows).
func (k *kfn) panelRange(bj value.Value, nP, nJC, m int64) (b, jc, r0, r1 value.Value) {
	b, jc = k.cur.NewSDiv(bj, ci(nJC)), k.cur.NewSRem(bj, ci(nJC))
	first := k.cur.NewMul(bj, ci(nP))
	r0 = k.cur.NewMul(k.smax(k.cur.NewSub(k.lo, first), ci(0)), ci(gemmMR))
	r1 = k.smin(k.cur.NewMul(k.smin(k.cur.NewSub(k.hi, first), ci(nP)), ci(gemmMR)), ci(m))
	return b, jc, r0, r1
}
