package llvm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
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
// recorded as found there (kernelIndex), so a later program that has the
// same kernel (the prefill and decode steps of one model, another depth of
// it) links the cached part instead of compiling the kernel again. A
// kernel is named in its part by its own key (unit.sym), and the program's
// names for it (k12) are aliases the link makes, so parts from different
// programs link together without clashes.

// unit is one of a program's kernels as the cache sees it.
type unit struct {
	f    *lir.Func
	name string // the program's name for it, which steps call
	key  string // kernelKey
	sym  string // its name inside a part
	size int    // its text's length, how the parts are balanced
}

// units returns the module's context (what is not a step kernel:
// declarations, internal helpers, loop hints) as text and its step kernels;
// ok is false when the module cannot be split: a definition in the
// context that is not internal would be defined by every part, and a
// kernel called by another would lose its callee's name.
func (g *gen) units(t *toolchain, steps map[string]bool) (ctx []*lir.Func, us []unit, ok bool) {
	for _, f := range g.m.Funcs {
		if len(f.Blocks) > 0 && steps[f.Name()] {
			us = append(us, unit{f: f, name: f.Name()})
			continue
		}
		if len(f.Blocks) > 0 && f.Linkage != enum.LinkageInternal && f.Linkage != enum.LinkagePrivate {
			return nil, nil, false
		}
		ctx = append(ctx, f)
	}
	if len(us) == 0 || len(g.m.Globals) > 0 {
		return nil, nil, false
	}
	canon := g.canonicalizer(ctx)
	for i := range us {
		u := &us[i]
		u.f.SetName("kernel")
		body := u.f.LLString()
		u.f.SetName(u.name)
		for _, v := range us {
			if strings.Contains(body, "@"+v.name+"(") {
				return nil, nil, false
			}
		}
		u.key = t.kernelKey(canon(body))
		u.sym = "kx" + u.key[:24]
		u.size = len(body)
	}
	return ctx, us, true
}

// canonicalizer returns what decides a kernel's code, given its text, in
// words that do not depend on the rest of the program: the text with each
// loop identifier written as its hint (the module numbers them in the
// order they were first asked for), after the text of every function of
// the context it calls, directly or through another. Two programs' copies
// of one kernel have the same canonical text, whatever else they hold.
// A metadata reference that is not a loop hint keeps the whole context.
func (g *gen) canonicalizer(ctx []*lir.Func) func(body string) string {
	hints := map[string]string{}
	for hint, id := range g.loopIDs {
		hints[fmt.Sprintf("!%d", id.MetadataID)] = "!{" + hint + "}"
	}
	texts := map[string]string{}
	for _, f := range ctx {
		texts[f.Name()] = f.LLString()
	}
	whole := g.moduleText(ctx)
	return func(body string) string {
		unknown := false
		out := metadataRef.ReplaceAllStringFunc(body, func(ref string) string {
			h, ok := hints[ref]
			unknown = unknown || !ok
			return h
		})
		if unknown {
			return whole + out
		}
		var b strings.Builder
		for _, name := range callees(body, texts) {
			b.WriteString(texts[name])
			b.WriteString("\n")
		}
		return b.String() + out
	}
}

// metadataRef is a numbered metadata reference in a function's text.
var metadataRef = regexp.MustCompile(`![0-9]+`)

// callees are the names in texts that body calls, directly or through
// one another, sorted.
func callees(body string, texts map[string]string) []string {
	seen := map[string]bool{}
	work := []string{body}
	for len(work) > 0 {
		text := work[len(work)-1]
		work = work[:len(work)-1]
		for name, t := range texts {
			if !seen[name] && strings.Contains(text, "@"+name+"(") {
				seen[name] = true
				work = append(work, t)
			}
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
func (g *gen) partText(ctx []*lir.Func, us []unit) string {
	funcs := append([]*lir.Func{}, ctx...)
	linkage := make([]enum.Linkage, len(us))
	for i, u := range us {
		linkage[i] = u.f.Linkage
		u.f.SetName(u.sym)
		u.f.Linkage = enum.LinkageWeak
		funcs = append(funcs, u.f)
	}
	defer func() {
		for i, u := range us {
			u.f.SetName(u.name)
			u.f.Linkage = linkage[i]
		}
	}()
	return g.moduleText(funcs)
}

// kernelKey names a kernel's object by everything that decides its code:
// the toolchain, the flags and the kernel's canonical text (canonicalizer).
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

// balance splits us into at most n groups of about equal text, the
// largest kernel first into the lightest group: clang's time follows a
// module's size, and the slowest part is the build's wall time.
func balance(us []unit, n int) [][]unit {
	n = max(1, min(n, len(us)))
	sorted := append([]unit{}, us...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].size > sorted[j].size })
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
		load[light] += u.size
	}
	return groups
}
