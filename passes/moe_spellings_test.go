package passes_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// The metamorphic test of moe-route: one MoE layer written in many
// equivalent spellings, each of which must be rewritten (three ragged_dots:
// gate, up, down) and give the dense program's numbers on the reference
// executor; and near misses, each of which must stay dense.

// Sizes: small, and T == E so that only the meaning of a dim, not its size,
// can tell tokens from experts.
const (
	spT, spE, spK, spH, spF = 4, 4, 2, 8, 6
)

// spelling picks one way to write each part of the layer.
type spelling struct {
	scores  string // softmax, softmax-renorm, sigmoid, sigmoid-renorm, sigmoid-bias, logits-softmax
	combine string // onehot-sum, onehot-dot, masked, iota, onehot-transposed
	hf      bool   // gate and up weights [E,F,H] (Hugging Face) rather than [E,H,F]
	proj    string // x-left, w-left, w-left-xt (W·xᵀ), batched, product
	downHF  bool   // down weights [E,H,F] rather than [E,F,H]
	down    string // act-left, w-left, product
	sum     string // dot, product, product-transposed, product-reshaped, per-expert, stacked
	shared  bool   // a dense shared expert added beside
	miss    string // a near miss ("" for none): soft, not-topk, ids-computed, leak, wrong-axis, order
	loop    bool   // the layer is the do region of a while that runs it twice, its weights carried in
}

func (s spelling) String() string {
	str := fmt.Sprintf("%s/%s/hf=%v/%s/downhf=%v/%s/%s/shared=%v/%s", s.scores, s.combine, s.hf, s.proj, s.downHF, s.down, s.sum, s.shared, s.miss)
	if s.loop {
		str += "/loop"
	}
	return str
}

// The values of each choice.
var (
	spScores   = []string{"softmax", "softmax-renorm", "sigmoid", "sigmoid-renorm", "sigmoid-bias", "logits-softmax"}
	spCombines = []string{"onehot-sum", "onehot-dot", "masked", "iota", "onehot-transposed"}
	spProjs    = []string{"x-left", "w-left", "w-left-xt", "batched", "product"}
	spDowns    = []string{"act-left", "w-left", "product"}
	spSums     = []string{"dot", "product", "product-transposed", "product-reshaped", "per-expert", "stacked"}
)

// spellings lists the cases: 120 drawn from the product of the choices with a
// fixed seed (the whole product, 43200, would take minutes), every sum form
// with every score form at least thrice (i walks both); TestMoESpellingsCover
// checks that each value of each choice is drawn beside each value of every
// other (the seed is one for which that holds).
func spellings() []spelling {
	r := rand.New(rand.NewSource(5))
	var out []spelling
	for i := 0; i < 120; i++ {
		s := spelling{
			scores:  spScores[i%len(spScores)],
			combine: spCombines[r.Intn(len(spCombines))],
			hf:      r.Intn(2) == 1,
			proj:    spProjs[r.Intn(len(spProjs))],
			downHF:  r.Intn(2) == 1,
			down:    spDowns[r.Intn(len(spDowns))],
			sum:     spSums[(i/len(spScores))%len(spSums)],
			shared:  r.Intn(2) == 1,
		}
		if s.combine == "masked" && s.scores == "logits-softmax" {
			s.combine = "onehot-sum" // the dense probabilities are the logits' softmax only over the k
		}
		out = append(out, s)
	}
	return out
}

// layer writes the program for s.
type layer struct {
	spelling
	b strings.Builder
}

func (l *layer) emit(format string, args ...any) { fmt.Fprintf(&l.b, "  "+format+"\n", args...) }

func (l *layer) program() string {
	params := fmt.Sprintf("%%x: f32[%d,%d], %%w_router: f32[%d,%d], %%w_gate: %s, %%w_up: %s, %%w_down: %s, %%s_gate: f32[%d,%d], %%s_down: f32[%d,%d]",
		spT, spH, spH, spE, l.gateType(), l.gateType(), l.downType(), spH, spF, spF, spH)
	fmt.Fprintf(&l.b, "func @moe(%s) -> f32[%d,%d] {\n", params, spT, spH)
	if l.loop {
		l.openLoop(params)
	}
	l.router()
	l.combineWeights()
	var routed string
	switch l.sum {
	case "per-expert":
		routed = l.perExpert()
	case "stacked":
		routed = l.stackedSum(l.combineName())
	default:
		l.experts()
		routed = l.expertSum()
	}
	if l.shared {
		l.emit("%%sg = dot_general %%x, %%s_gate {lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]", spT, spF)
		l.emit("%%sa = silu %%sg")
		l.emit("%%sh = dot_general %%sa, %%s_down {lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]", spT, spH)
		l.emit("%%y = add %s, %%sh", routed)
		routed = "%y"
	}
	if l.loop {
		l.closeLoop(routed)
		routed = "%loop_x"
	}
	l.emit("return %s", routed)
	l.b.WriteString("}\n")
	return l.b.String()
}

// loopParams are the function's parameters, which the loop carries under
// the same names, so the layer's text is the same inside the do region.
var loopParams = []string{"%x", "%w_router", "%w_gate", "%w_up", "%w_down", "%s_gate", "%s_down"}

// openLoop starts a while of two trips carrying a counter and the
// parameters, and its do region, which the layer's text then fills.
func (l *layer) openLoop(params string) {
	types := []string{"i32[]"}
	for _, p := range strings.Split(params, ", ") {
		types = append(types, p[strings.Index(p, ": ")+2:])
	}
	l.emit("%%trip_0 = constant 0 : i32[]")
	l.emit("%%loop_n, %%loop_x, %%loop_r, %%loop_g, %%loop_u, %%loop_d, %%loop_sg, %%loop_sd = while %%trip_0, %s : %s cond (%%trip: i32[], %s) {",
		strings.Join(loopParams, ", "), strings.Join(types, ", "), params)
	l.emit("  %%trips = constant 2 : i32[]")
	l.emit("  %%go = compare %%trip, %%trips {dir=lt} : i1[]")
	l.emit("  return %%go")
	l.emit("} do (%%trip: i32[], %s) {", params)
}

// closeLoop ends the do region: tanh of the layer's output is the next
// trip's x (bounded, so that the second trip does not magnify the first's
// rounding past the tolerance).
func (l *layer) closeLoop(routed string) {
	l.emit("%%trip_1 = constant 1 : i32[]")
	l.emit("%%trip_next = add %%trip, %%trip_1")
	l.emit("%%x_next = tanh %s", routed)
	l.emit("return %%trip_next, %%x_next, %s", strings.Join(loopParams[1:], ", "))
	l.emit("}")
}

func (l *layer) gateType() string {
	if l.hf {
		return fmt.Sprintf("f32[%d,%d,%d]", spE, spF, spH)
	}
	return fmt.Sprintf("f32[%d,%d,%d]", spE, spH, spF)
}

func (l *layer) downType() string {
	if l.downHF {
		return fmt.Sprintf("f32[%d,%d,%d]", spE, spH, spF)
	}
	return fmt.Sprintf("f32[%d,%d,%d]", spE, spF, spH)
}

// router defines %dense [T,E] (the scores), %w [T,K] and %ids [T,K].
func (l *layer) router() {
	l.emit("%%logits = dot_general %%x, %%w_router {lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]", spT, spE)
	tk := fmt.Sprintf("f32[%d,%d], i32[%d,%d]", spT, spK, spT, spK)
	switch l.scores {
	case "softmax", "softmax-renorm":
		l.emit("%%dense = softmax %%logits {axis=1}")
	case "sigmoid", "sigmoid-renorm":
		l.emit("%%dense = sigmoid %%logits")
	case "logits-softmax":
		l.emit("%%dense = softmax %%logits {axis=1}")
		l.topK("%logits", "%top_l", tk)
		l.emit("%%w = softmax %%top_l {axis=1}")
		return
	case "sigmoid-bias":
		// DeepSeek-V3: experts chosen by the scores plus a bias, weighted by
		// the scores themselves (gathered by a one-hot sum), renormalised.
		l.emit("%%dense = sigmoid %%logits")
		l.emit("%%bias_i = iota {axis=1} : f32[%d,%d]", spT, spE)
		l.emit("%%bias_c = constant 0.1 : f32[]")
		l.emit("%%bias_cb = broadcast %%bias_c {dims=[]} : f32[%d,%d]", spT, spE)
		l.emit("%%bias = mul %%bias_i, %%bias_cb")
		l.emit("%%biased = add %%dense, %%bias")
		l.topK("%biased", "%top_b", tk)
		l.emit("%%sel = one_hot %%ids {depth=%d} : f32[%d,%d,%d]", spE, spT, spK, spE)
		l.emit("%%dense_b = broadcast %%dense {dims=[0,2]} : f32[%d,%d,%d]", spT, spK, spE)
		l.emit("%%picked = mul %%sel, %%dense_b")
		l.emit("%%top_w = reduce_sum %%picked {axes=[2]}")
		l.emit("%%top_sum = reduce_sum %%top_w {axes=[1], keepdims=true}")
		l.emit("%%w = div %%top_w, %%top_sum")
		return
	}
	l.topK("%dense", "%top_w", tk)
	if strings.HasSuffix(l.scores, "renorm") {
		l.emit("%%top_sum = reduce_sum %%top_w {axes=[1], keepdims=true}")
		l.emit("%%w = div %%top_w, %%top_sum")
	} else {
		l.emit("%%w = reshape %%top_w : f32[%d,%d]", spT, spK)
	}
}

// topK defines vals = the top k of src and %ids, its indices; for the
// not-topk near miss, %ids are another top_k's, over F features; for
// ids-computed, not a top_k's at all.
func (l *layer) topK(src, vals, tk string) {
	switch l.miss {
	case "not-topk":
	case "ids-computed":
		// Ids made from the scores by arithmetic: they may repeat or fall
		// outside [0, E).
		l.emit("%s, %%unused = top_k %s {k=%d} : %s", vals, src, spK, tk)
		l.emit("%%ids_s = slice %%logits {start=[0,0], limit=[%d,%d]} : f32[%d,%d]", spT, spK, spT, spK)
		l.emit("%%ids_a = abs %%ids_s")
		l.emit("%%ids = convert %%ids_a : i32[%d,%d]", spT, spK)
		return
	default:
		l.emit("%s, %%ids = top_k %s {k=%d} : %s", vals, src, spK, tk)
		return
	}
	l.emit("%%other = dot_general %%x, %%s_gate {lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]", spT, spF)
	l.emit("%%top_o, %%ids = top_k %%other {k=%d} : %s", spK, tk)
	l.emit("%s, %%unused = top_k %s {k=%d} : %s", vals, src, spK, tk)
}

// combineWeights defines %combine [T,E].
func (l *layer) combineWeights() {
	tke := fmt.Sprintf("f32[%d,%d,%d]", spT, spK, spE)
	if l.combine == "iota" {
		l.emit("%%idb = broadcast %%ids {dims=[0,1]} : i32[%d,%d,%d]", spT, spK, spE)
		l.emit("%%pos = iota {axis=2} : i32[%d,%d,%d]", spT, spK, spE)
		l.emit("%%eq = compare %%pos, %%idb {dir=eq}")
		l.emit("%%hot = convert %%eq : %s", tke)
	} else {
		l.emit("%%hot = one_hot %%ids {depth=%d} : %s", spE, tke)
	}
	switch {
	case l.miss == "soft":
		l.emit("%%combine = reshape %%dense : f32[%d,%d]", spT, spE)
	case l.combine == "onehot-dot":
		l.emit("%%combine = dot_general %%w, %%hot {lhs_batch=[0], rhs_batch=[0], lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]", spT, spE)
	case l.combine == "masked":
		l.emit("%%mask = reduce_max %%hot {axes=[1]}")
		l.emit("%%combine = mul %%dense, %%mask")
	case l.combine == "onehot-transposed":
		// The one-hot as [T,E,K] and the weights broadcast into it.
		l.emit("%%hot_t = transpose %%hot {perm=[0,2,1]} : f32[%d,%d,%d]", spT, spE, spK)
		l.emit("%%wb = broadcast %%w {dims=[0,2]} : f32[%d,%d,%d]", spT, spE, spK)
		l.emit("%%per_k = mul %%wb, %%hot_t")
		l.emit("%%combine = reduce_sum %%per_k {axes=[2]}")
	default:
		l.emit("%%w3 = reshape %%w : f32[%d,%d,1]", spT, spK)
		l.emit("%%per_k = mul %%hot, %%w3")
		l.emit("%%combine = reduce_sum %%per_k {axes=[1]}")
	}
	if l.miss == "leak" {
		l.emit("%%eps = constant 0.01 : f32[]")
		l.emit("%%epsb = broadcast %%eps {dims=[]} : f32[%d,%d]", spT, spE)
		l.emit("%%combine_l = add %%combine, %%epsb")
	}
}

func (l *layer) combineName() string {
	if l.miss == "leak" {
		return "%combine_l"
	}
	return "%combine"
}

// hContract is the dim of the gate and up stacks that holds H.
func (l *layer) hContract() int {
	if l.hf {
		return 2
	}
	return 1
}

// fContract is the dim of the down stack that holds F.
func (l *layer) fContract() int {
	if l.downHF {
		return 2
	}
	return 1
}

// experts defines %eo, the expert outputs, with roles l.outRoles().
func (l *layer) experts() {
	roles := l.projection("gate", "%w_gate")
	l.projection("up", "%w_up")
	l.emit("%%act = silu %%gate")
	l.emit("%%h = mul %%act, %%up")
	t, e, f := strings.IndexByte(roles, 'T'), strings.IndexByte(roles, 'E'), strings.IndexByte(roles, 'F')
	switch l.down {
	case "act-left":
		l.emit("%%eo = dot_general %%h, %%w_down {lhs_batch=[%d], rhs_batch=[0], lhs_contract=[%d], rhs_contract=[%d]} : f32[%d,%d,%d]", e, f, l.fContract(), spE, spT, spH)
	case "w-left":
		l.emit("%%eo = dot_general %%w_down, %%h {lhs_batch=[0], rhs_batch=[%d], lhs_contract=[%d], rhs_contract=[%d]} : f32[%d,%d,%d]", e, l.fContract(), f, spE, spH, spT)
	case "product":
		// [E,T,F,H]: h broadcast over H, the stack over T, summed over F.
		l.emit("%%hb = broadcast %%h {dims=%s} : f32[%d,%d,%d,%d]", dimsOf(roles, "ETFH"), spE, spT, spF, spH)
		wd := "[0,2,3]"
		if l.downHF {
			wd = "[0,3,2]"
		}
		l.emit("%%wdb = broadcast %%w_down {dims=%s} : f32[%d,%d,%d,%d]", wd, spE, spT, spF, spH)
		l.emit("%%dp = mul %%hb, %%wdb")
		l.emit("%%eo = reduce_sum %%dp {axes=[2]}")
	}
	_ = t
}

// dimsOf is where each role of from sits in to, as a dims list.
func dimsOf(from, to string) string {
	var ds []string
	for _, r := range from {
		ds = append(ds, fmt.Sprint(strings.IndexRune(to, r)))
	}
	return "[" + strings.Join(ds, ",") + "]"
}

// outRoles are the roles of %eo's dims.
func (l *layer) outRoles() string {
	if l.down == "w-left" {
		return "EHT"
	}
	return "ETH"
}

// projection defines %name = x projected by every expert of stack, and
// returns the roles of its dims.
func (l *layer) projection(name, stack string) string {
	hc := l.hContract()
	switch l.proj {
	case "x-left":
		l.emit("%%%s = dot_general %%x, %s {lhs_contract=[1], rhs_contract=[%d]} : f32[%d,%d,%d]", name, stack, hc, spT, spE, spF)
		return "TEF"
	case "w-left":
		l.emit("%%%s = dot_general %s, %%x {lhs_contract=[%d], rhs_contract=[1]} : f32[%d,%d,%d]", name, stack, hc, spE, spF, spT)
		return "EFT"
	case "w-left-xt":
		l.emit("%%%s_xt = transpose %%x {perm=[1,0]} : f32[%d,%d]", name, spH, spT)
		l.emit("%%%s = dot_general %s, %%%s_xt {lhs_contract=[%d], rhs_contract=[0]} : f32[%d,%d,%d]", name, stack, name, hc, spE, spF, spT)
		return "EFT"
	case "batched":
		l.emit("%%%s_x = broadcast %%x {dims=[1,2]} : f32[%d,%d,%d]", name, spE, spT, spH)
		l.emit("%%%s = dot_general %%%s_x, %s {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[%d]} : f32[%d,%d,%d]", name, name, stack, hc, spE, spT, spF)
		return "ETF"
	}
	// product: [E,T,F,H] summed over H.
	l.emit("%%%s_x = broadcast %%x {dims=[1,3]} : f32[%d,%d,%d,%d]", name, spE, spT, spF, spH)
	wd := "[0,3,2]"
	if l.hf {
		wd = "[0,2,3]"
	}
	l.emit("%%%s_w = broadcast %s {dims=%s} : f32[%d,%d,%d,%d]", name, stack, wd, spE, spT, spF, spH)
	l.emit("%%%s_p = mul %%%s_x, %%%s_w", name, name, name)
	l.emit("%%%s = reduce_sum %%%s_p {axes=[3]}", name, name)
	return "ETF"
}

// expertSum defines the routed sum [T,H] and returns its name.
func (l *layer) expertSum() string {
	o := l.outRoles()
	t, e := strings.IndexByte(o, 'T'), strings.IndexByte(o, 'E')
	eoT := fmt.Sprintf("f32[%s]", l.shapeOf(o))
	comb := l.combineName()
	if l.miss == "wrong-axis" {
		t, e = e, t // the combine read as [E,T]: tokens and experts swapped
	}
	switch l.sum {
	case "dot":
		l.emit("%%routed = dot_general %s, %%eo {lhs_batch=[0], rhs_batch=[%d], lhs_contract=[1], rhs_contract=[%d]} : f32[%d,%d]", comb, t, e, spT, spH)
		return "%routed"
	case "product":
		l.emit("%%cb = broadcast %s {dims=[%d,%d]} : %s", comb, t, e, eoT)
	case "product-transposed":
		l.emit("%%ct = transpose %s {perm=[1,0]} : f32[%d,%d]", comb, spE, spT)
		l.emit("%%cb = broadcast %%ct {dims=[%d,%d]} : %s", e, t, eoT)
	case "product-reshaped":
		l.emit("%%c3 = reshape %s : f32[%d,%d,1]", comb, spT, spE)
		l.emit("%%cb = broadcast %%c3 {dims=[%d,%d,%d]} : %s", t, e, strings.IndexByte(o, 'H'), eoT)
	case "stacked":
		return l.stackedSum(comb)
	}
	l.emit("%%ep = mul %%eo, %%cb")
	l.emit("%%routed = reduce_sum %%ep {axes=[%d]}", strings.IndexByte(o, 'E'))
	if o == "EHT" {
		l.emit("%%routed_t = transpose %%routed {perm=[1,0]} : f32[%d,%d]", spT, spH)
		return "%routed_t"
	}
	return "%routed"
}

// stackedSum: the expert outputs computed per expert, E separate matmuls
// stacked into [E,T,H], then summed against the combine weights.
func (l *layer) stackedSum(comb string) string {
	outs := l.perExpertOutputs()
	var parts []string
	if l.miss == "order" {
		outs[0], outs[1] = outs[1], outs[0] // expert 1's output where expert 0's belongs
	}
	for e, o := range outs {
		l.emit("%%o3_%d = reshape %s : f32[1,%d,%d]", e, o, spT, spH)
		parts = append(parts, fmt.Sprintf("%%o3_%d", e))
	}
	l.emit("%%eo_st = concat %s {axis=0} : f32[%d,%d,%d]", strings.Join(parts, ", "), spE, spT, spH)
	l.emit("%%routed = dot_general %s, %%eo_st {lhs_batch=[0], rhs_batch=[1], lhs_contract=[1], rhs_contract=[0]} : f32[%d,%d]", comb, spT, spH)
	return "%routed"
}

func roleSize(r byte) int {
	return map[byte]int{'T': spT, 'E': spE, 'H': spH, 'F': spF}[r]
}

func (l *layer) shapeOf(roles string) string {
	var ds []string
	for i := range roles {
		ds = append(ds, fmt.Sprint(roleSize(roles[i])))
	}
	return strings.Join(ds, ",")
}

// perExpertOutputs writes each expert's FFN on its own matrices, sliced
// out of the stacks, and returns the E outputs [T,H].
func (l *layer) perExpertOutputs() []string {
	gt, dt := l.gateType()[4:], l.downType()[4:]
	gt, dt = gt[strings.IndexByte(gt, ',')+1:len(gt)-1], dt[strings.IndexByte(dt, ',')+1:len(dt)-1]
	var outs []string
	for e := 0; e < spE; e++ {
		for _, w := range []string{"gate", "up"} {
			l.emit("%%s%s%d = slice %%w_%s {start=[%d,0,0], limit=[%d,%s]} : f32[1,%s]", w, e, w, e, e+1, gt, gt)
			l.emit("%%m%s%d = reshape %%s%s%d : f32[%s]", w, e, w, e, gt)
			l.emit("%%p%s%d = dot_general %%x, %%m%s%d {lhs_contract=[1], rhs_contract=[%d]} : f32[%d,%d]", w, e, w, e, l.hContract()-1, spT, spF)
		}
		l.emit("%%sdown%d = slice %%w_down {start=[%d,0,0], limit=[%d,%s]} : f32[1,%s]", e, e, e+1, dt, dt)
		l.emit("%%mdown%d = reshape %%sdown%d : f32[%s]", e, e, dt)
		l.emit("%%a%d = silu %%pgate%d", e, e)
		l.emit("%%h%d = mul %%a%d, %%pup%d", e, e, e)
		l.emit("%%o%d = dot_general %%h%d, %%mdown%d {lhs_contract=[1], rhs_contract=[%d]} : f32[%d,%d]", e, e, e, l.fContract()-1, spT, spH)
		outs = append(outs, fmt.Sprintf("%%o%d", e))
	}
	return outs
}

// perExpert writes one branch per expert, weighted by its column of the
// combine weights, all branches added.
func (l *layer) perExpert() string {
	var terms []string
	for e, o := range l.perExpertOutputs() {
		col := e
		if l.miss == "order" {
			col = (e + 1) % spE // each expert weighted by the next one's column
		}
		l.emit("%%c%d = slice %s {start=[0,%d], limit=[%d,%d]} : f32[%d,1]", e, l.combineName(), col, spT, col+1, spT)
		l.emit("%%cb%d = broadcast %%c%d {dims=[0,1]} : f32[%d,%d]", e, e, spT, spH)
		l.emit("%%t%d = mul %s, %%cb%d", e, o, e)
		terms = append(terms, fmt.Sprintf("%%t%d", e))
	}
	acc := terms[0]
	for i, t := range terms[1:] {
		l.emit("%%acc%d = add %s, %s", i, acc, t)
		acc = fmt.Sprintf("%%acc%d", i)
	}
	return acc
}

// TestMoESpellings: every spelling is rewritten (three ragged_dots) with the
// dense program's numbers.
func TestMoESpellings(t *testing.T) {
	for _, s := range spellings() {
		rd, src := routeSpelling(t, s)
		if rd != 3 {
			t.Errorf("%v: %d ragged_dots, want 3\n%s", s, rd, src)
		}
	}
}

// TestMoESpellingsNearMiss: spellings whose combine weights are not provably
// zero outside each token's top-k stay dense.
func TestMoESpellingsNearMiss(t *testing.T) {
	base := spellings()
	for i, miss := range []string{"soft", "not-topk", "ids-computed", "leak", "wrong-axis", "order"} {
		for j := 0; j < 6; j++ {
			s := base[j*len(spScores)+(i+j)%len(spScores)] // sum form j, scores varying
			s.miss = miss
			if miss == "wrong-axis" && (s.sum == "per-expert" || s.sum == "stacked") {
				s.sum = "product-transposed"
			}
			if miss == "order" && s.sum != "per-expert" {
				s.sum = "stacked"
			}
			if rd, src := routeSpelling(t, s); rd != 0 {
				t.Errorf("%v: %d ragged_dots, want 0 (dense)\n%s", s, rd, src)
			}
		}
	}
}

// TestMoESpellingsInLoop: a quarter of the spellings, and one near miss of
// each kind, as the body of a loop over layers: moe-route rewrites the layer
// inside the do region (three ragged_dots there, none outside) with the
// dense loop's numbers, and leaves the near misses dense.
func TestMoESpellingsInLoop(t *testing.T) {
	for i, s := range spellings() {
		if i%4 != 0 {
			continue
		}
		s.loop = true
		if rd, src := routeSpelling(t, s); rd != 3 {
			t.Errorf("%v: %d ragged_dots in the loop, want 3\n%s", s, rd, src)
		}
	}
	base := spellings()
	for i, miss := range []string{"soft", "not-topk", "ids-computed", "leak", "wrong-axis", "order"} {
		s := base[i*len(spScores)+i%len(spScores)]
		s.miss, s.loop = miss, true
		if miss == "wrong-axis" && (s.sum == "per-expert" || s.sum == "stacked") {
			s.sum = "product-transposed"
		}
		if miss == "order" && s.sum != "per-expert" {
			s.sum = "stacked"
		}
		if rd, src := routeSpelling(t, s); rd != 0 {
			t.Errorf("%v: %d ragged_dots, want 0 (dense)\n%s", s, rd, src)
		}
	}
}

// routeSpelling compiles s with the default pipeline, checks its numbers
// against the dense program's on the reference executor, and returns the
// number of ragged_dots and the source.
func routeSpelling(t *testing.T, s spelling) (int, string) {
	t.Helper()
	l := &layer{spelling: s}
	src := l.program()
	dense, err := tir.Parse("moe.tir", []byte(src))
	if err != nil {
		t.Fatalf("%v: %v\n%s", s, err, src)
	}
	routed, _ := tir.Parse("moe.tir", []byte(src))
	if err := passes.Run(routed, passes.Default(), passes.Options{VerifyEach: true, Eval: cpu.Folder{}}); err != nil {
		t.Fatalf("%v: %v", s, err)
	}
	// In a loop, only the ragged_dots of the do region (in a fusion there
	// or not) count.
	n := 0
	routed.Entry().Body.Walk(func(in *ir.Instr) {
		inLoop := false
		for p := in.Block.Parent; p != nil && !inLoop; p = p.Block.Parent {
			inLoop = p.Op == ir.OpWhile
		}
		if in.Op == ir.OpRaggedDot && inLoop == s.loop {
			n++
		}
	})
	args := cpu.RandomInputs(dense.Entry(), 3)
	want, err := cpu.Run(dense, dense.Entry(), args)
	if err != nil {
		t.Fatalf("%v: dense: %v", s, err)
	}
	got, err := cpu.Run(routed, routed.Entry(), args)
	if err != nil {
		t.Fatalf("%v: routed: %v", s, err)
	}
	for i := 0; i < want[0].Len(); i++ {
		w, g := want[0].Float64At(i), got[0].Float64At(i)
		if math.Abs(w-g) > 1e-5*(1+math.Abs(w)) {
			t.Errorf("%v: element %d is %g, dense %g", s, i, g, w)
			break
		}
	}
	return n, src
}

// TestMoESpellingsCover: the drawn spellings put every value of each choice
// beside every value of every other choice (pairwise coverage), so a
// spelling that breaks only next to another is drawn.
func TestMoESpellingsCover(t *testing.T) {
	choices := func(s spelling) []string {
		return []string{"scores=" + s.scores, "combine=" + s.combine, fmt.Sprint("hf=", s.hf), "proj=" + s.proj,
			fmt.Sprint("downhf=", s.downHF), "down=" + s.down, "sum=" + s.sum, fmt.Sprint("shared=", s.shared)}
	}
	seen := map[[2]string]bool{}
	for _, s := range spellings() {
		c := choices(s)
		for i := range c {
			for j := range c {
				seen[[2]string{c[i], c[j]}] = true
			}
		}
	}
	bools := []string{"false", "true"}
	all := [][]string{spScores, spCombines, bools, spProjs, bools, spDowns, spSums, bools}
	names := []string{"scores=", "combine=", "hf=", "proj=", "downhf=", "down=", "sum=", "shared="}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			for _, a := range all[i] {
				for _, b := range all[j] {
					if names[i] == "scores=" && a == "logits-softmax" && names[j] == "combine=" && b == "masked" {
						continue // not a layer: see spellings
					}
					if !seen[[2]string{names[i] + a, names[j] + b}] {
						t.Errorf("no spelling has %s%s beside %s%s", names[i], a, names[j], b)
					}
				}
			}
		}
	}
}
