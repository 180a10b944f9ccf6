package llvm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
)

// A program's object is built in parts: its kernels are split into as
// many modules as the process may run threads (GOMAXPROCS), one clang
// each, and the parts' objects are linked into the one shared object the
// executable loads. Clang is most of a build's time and runs one thread,
// so the parts divide its wall time by the cores.
//
// Each part's object is also kept in the cache, and every kernel in it is
// recorded as found there (KEY.kernel, parts.go), so a later program that has the
// same kernel (the prefill and decode steps of one model, another depth of
// it) links the cached part instead of compiling the kernel again. A
// kernel is named in its part by its own key (unit.sym), and the program's
// names for it (k12) are aliases the link makes, so parts from different
// programs link together without clashes.

// unit is one of a program's kernels as the cache sees it.
type unit struct {
	name string // the program's name for it, which steps call
	body string // its text under the name "kernel" (gen.bodies)
	key  string // kernelKey
	sym  string // its name inside a part
	cost int    // what clang's time on it is taken to follow (gen.cost)
}

// kernelHead is how a kernel's text begins under the name "kernel".
const kernelHead = "define void @kernel("

// units returns the module's context (what is not a step kernel:
// declarations, internal helpers, loop hints) as text and its step kernels;
// ok is false when the module cannot be split: a definition in the
// context that is not internal would be defined by every part, and a
// kernel called by another would lose its callee's name.
func (g *gen) units(t *toolchain, steps map[string]bool) (ctx string, us []unit, ok bool) {
	var funcs []*lir.Func
	for _, f := range g.m.Funcs {
		if len(f.Blocks) > 0 && steps[f.Name()] {
			us = append(us, unit{name: f.Name(), body: g.body(f)})
			continue
		}
		if len(f.Blocks) > 0 && f.Linkage != enum.LinkageInternal && f.Linkage != enum.LinkagePrivate {
			return "", nil, false
		}
		funcs = append(funcs, f)
	}
	if len(us) == 0 || len(g.m.Globals) > 0 {
		return "", nil, false
	}
	ctx = g.moduleText(funcs)
	texts := map[string]string{}
	for _, f := range funcs {
		texts[f.Name()] = f.LLString()
	}
	for i := range us {
		u := &us[i]
		called := calls(u.body)
		if !strings.HasPrefix(u.body, kernelHead) || slices.ContainsFunc(called, func(c string) bool { return steps[c] }) {
			return "", nil, false
		}
		u.key = t.kernelKey(g.canonical(u.body, called, texts, ctx))
		u.sym = "kx" + u.key[:24]
		u.cost = g.cost(u.body)
	}
	return ctx, us, true
}

// body is f's text under the name "kernel": dedupeKernels printed it
// already, and printing a large kernel again is not free.
func (g *gen) body(f *lir.Func) string {
	if b, ok := g.bodies[f.Name()]; ok {
		return b
	}
	name := f.Name()
	f.SetName("kernel")
	defer f.SetName(name)
	return f.LLString()
}

// canonical is what decides a kernel's code, in words that do not depend
// on the rest of the program: its text with each loop identifier written
// as its hint (the module numbers them in the order they were first asked
// for), after the text of every function of the context (texts) it calls,
// directly or through another. Two programs' copies of one kernel have the
// same canonical text, whatever else they hold. A metadata reference that
// is not a loop hint keeps the whole context, ctx.
func (g *gen) canonical(body string, called []string, texts map[string]string, ctx string) string {
	hints := map[string]string{}
	for hint, id := range g.loopIDs {
		hints[fmt.Sprintf("!%d", id.MetadataID)] = "!{" + hint + "}"
	}
	for key, l := range g.scopes {
		hints[fmt.Sprintf("!%d", l.MetadataID)] = "!{" + key + "}"
	}
	if g.ntNode != nil { // streaming stores' mark (stream.go)
		hints[fmt.Sprintf("!%d", g.ntNode.MetadataID)] = "!{nontemporal}"
	}
	unknown := false
	out := metadataRef.ReplaceAllStringFunc(body, func(ref string) string {
		h, ok := hints[ref]
		unknown = unknown || !ok
		return h
	})
	if unknown {
		return ctx + out
	}
	var b strings.Builder
	for _, name := range callees(called, texts) {
		b.WriteString(texts[name])
		b.WriteString("\n")
	}
	return b.String() + out
}

var (
	// metadataRef is a numbered metadata reference in a function's text.
	metadataRef = regexp.MustCompile(`![0-9]+`)
	// callRef is a function named as a callee in a function's text.
	callRef = regexp.MustCompile(`@([-a-zA-Z$._0-9]+)\(`)
)

// calls are the names that text calls (or defines: its own name).
func calls(text string) []string {
	var names []string
	for _, m := range callRef.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	return names
}

// callees are the names in texts that called names, directly or through
// one another, sorted.
func callees(called []string, texts map[string]string) []string {
	seen := map[string]bool{}
	for len(called) > 0 {
		name := called[len(called)-1]
		called = called[:len(called)-1]
		if t, ok := texts[name]; ok && !seen[name] {
			seen[name] = true
			called = append(called, calls(t)...)
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// moduleText is the module with only funcs defined or declared in it.
func (g *gen) moduleText(funcs []*lir.Func) string {
	all := g.m.Funcs
	g.m.Funcs = funcs
	defer func() { g.m.Funcs = all }()
	return g.text()
}

// partText is the module of the context and the kernels us, each under its
// own name (sym) and weak: should two parts that a link takes define one
// kernel (two processes that compiled it at once), the linker keeps one.
// Top-level entities may come in any order in LLVM's text, so the kernels
// follow the context's metadata.
func partText(ctx string, us []unit) string {
	var b strings.Builder
	b.WriteString(ctx)
	for _, u := range us {
		b.WriteString("\ndefine weak void @")
		b.WriteString(u.sym)
		b.WriteString("(")
		b.WriteString(strings.TrimPrefix(u.body, kernelHead))
	}
	return b.String()
}

// kernelKey names a kernel's object by everything that decides its code:
// the toolchain, the flags and the kernel's canonical text (gen.canonical).
func (t *toolchain) kernelKey(canonical string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tpucc-llvm kernel 1\n%s\n%s\n%q\n", t.version, t.features, clangFlags)
	io.WriteString(h, canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// partKey names a part's object by its module text.
func (t *toolchain) partKey(text string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tpucc-llvm part 1\n%s\n%s\n%q\n", t.version, t.features, clangFlags)
	io.WriteString(h, text)
	return hex.EncodeToString(h.Sum(nil))
}

// cost is what clang's time on a kernel whose text is body is taken to
// follow: its size, times the largest count its loops ask clang to unroll
// by (a loop unrolled n times is n copies of its body for everything after
// the unroller). Compile times add up kernel by kernel, and by size alone
// Qwen3-0.6B's decode step split into parts of 0.136 and 0.090 s of clang
// time (the kernels compiled alone): its down projection's gemv, unrolled
// 4 times, took twice what its size said. By this, 0.118 and 0.108 s.
func (g *gen) cost(body string) int {
	unroll := int64(1)
	for hint, id := range g.loopIDs {
		var n int64
		if _, err := fmt.Sscanf(hint, "llvm.loop.unroll.count %d", &n); err != nil || n <= unroll {
			continue
		}
		if strings.Contains(body, fmt.Sprintf(", !llvm.loop !%d\n", id.MetadataID)) {
			unroll = n
		}
	}
	return len(body) * int(unroll)
}

// balance splits us into at most n groups of about equal cost, the
// costliest kernel first into the lightest group: the slowest part is the
// build's wall time.
func balance(us []unit, n int) [][]unit {
	n = max(1, min(n, len(us)))
	sorted := append([]unit{}, us...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].cost > sorted[j].cost })
	groups := make([][]unit, n)
	load := make([]int, n)
	for _, u := range sorted {
		light := 0
		for i := range load {
			if load[i] < load[light] {
				light = i
			}
		}
		groups[light] = append(groups[light], u)
		load[light] += u.cost
	}
	return groups
}
