package llvm

import (
	"fmt"
	"strings"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/value"
)

// Kernel outputs alias nothing. A kernel reads its buffers' addresses from
// one array, so clang knows nothing of how they overlap: its loop
// vectoriser then adds a run-time overlap check between every pair of
// buffers a loop writes and reads (and a scalar copy of the loop for when
// they overlap), a third to a half of its time on a decode step's small
// kernels.
//
// The plan guarantees more: the storage of a kernel step's output (its
// bufs[:outs]) shares no byte with any other buffer of the step. Every
// kernel output is a new slot (heavy.go's kernel, plan.go's loopKernels),
// of kind slotTemp or slotResult, never a view (views are only read,
// view.go) nor a parameter. A temporary's arena is placed before the
// step's inputs are freed (memory.go), so it is none of theirs, and the
// step's outputs are placed one after another from arenas not in use. A
// result runs on the caller's storage only where it overlaps no argument
// (into.go's resultBuffer; backend.CheckInto refuses two results given
// the same storage), else on new memory. What is updated in place — a
// donated argument, or a carried value of a loop — is updated by
// stepUpdate (donate.go's runUpdate, in Go) or copied by stepCarry and
// stepCopy, or written by a loop kernel that reads the argument through
// the output's own buffer (overwrite.go): no kernel ever writes where
// another of its buffers reads. Inputs may alias each other (mul %x, %x; two
// views of one weight): they are only read, and are given no scope.
//
// So each output j of a kernel is given a scope of its own, and every
// access through buffer b is marked not to alias the scopes of the
// outputs other than b (LLVM's scoped noalias metadata): clang then
// proves the accesses independent without checking. An access through an
// address this cannot trace to one buffer (scratch, a phi of pointers)
// is left unmarked, which claims nothing. TestKernelOutputsAliasNothing
// checks the guarantee on plans with in-place updates, carried loops and
// views; TestNoAliasInPlace runs them against the reference.

// scopeKernels marks the accesses of every step kernel (scopeBuffers).
func (p *plan) scopeKernels() {
	outs := map[string]int{}
	for _, st := range p.steps {
		if st.kind != stepKernel {
			continue
		}
		if n, ok := outs[st.name]; ok && n != st.outs {
			outs[st.name] = -1 // two steps disagree: claim nothing
			continue
		}
		outs[st.name] = st.outs
	}
	for _, f := range p.gen.m.Funcs {
		if n := outs[f.Name()]; n > 0 && len(f.Blocks) > 0 {
			p.gen.scopeBuffers(f, n)
		}
	}
}

// scopeBuffers marks f's loads and stores through its buffers, of which
// the first outs are outputs.
func (g *gen) scopeBuffers(f *lir.Func, outs int) {
	bufOf := bufferPointers(f)
	for _, b := range f.Blocks {
		for _, inst := range b.Insts {
			var addr value.Value
			var md *lir.Metadata
			switch x := inst.(type) {
			case *lir.InstLoad:
				addr, md = x.Src, &x.Metadata
			case *lir.InstStore:
				addr, md = x.Dst, &x.Metadata
			default:
				continue
			}
			i, ok := traceBuffer(addr, bufOf)
			if !ok {
				continue
			}
			if i < outs {
				*md = append(*md, &metadata.Attachment{Name: "alias.scope", Node: g.scopeList([]int{i})})
			}
			var others []int
			for j := range outs {
				if j != i {
					others = append(others, j)
				}
			}
			if len(others) > 0 {
				*md = append(*md, &metadata.Attachment{Name: "noalias", Node: g.scopeList(others)})
			}
		}
	}
}

// bufferPointers maps each value of f's entry block that is buffer i's
// address (kfn.buf: the load of bufs[i] and its casts) to i.
func bufferPointers(f *lir.Func) map[value.Value]int {
	bufOf := map[value.Value]int{}
	slots := map[value.Value]int{}
	for _, inst := range f.Blocks[0].Insts {
		switch x := inst.(type) {
		case *lir.InstGetElementPtr:
			if len(f.Params) == 0 || x.Src != f.Params[0] || len(x.Indices) != 1 {
				continue
			}
			if c, ok := x.Indices[0].(*constant.Int); ok && c.X.IsInt64() {
				slots[x] = int(c.X.Int64())
			}
		case *lir.InstLoad:
			if i, ok := slots[x.Src]; ok {
				bufOf[x] = i
			}
		case *lir.InstBitCast:
			if i, ok := bufOf[x.From]; ok {
				bufOf[x] = i
			}
		}
	}
	return bufOf
}

// traceBuffer is the buffer whose address addr is computed from, through
// getelementptrs and casts.
func traceBuffer(addr value.Value, bufOf map[value.Value]int) (int, bool) {
	for {
		if i, ok := bufOf[addr]; ok {
			return i, true
		}
		switch x := addr.(type) {
		case *lir.InstGetElementPtr:
			addr = x.Src
		case *lir.InstBitCast:
			addr = x.From
		default:
			return 0, false
		}
	}
}

// scopeList is the module's list of the output scopes js (one domain for
// every kernel: kernels are never inlined into one another). Lists are
// shared by key like loop hints, so two kernels that differ only in their
// metadata numbers stay one text (dedupeKernels, canonical).
func (g *gen) scopeList(js []int) *metadata.Tuple {
	names := make([]string, len(js))
	for i, j := range js {
		names[i] = fmt.Sprint(j)
	}
	key := "scopes " + strings.Join(names, ",")
	if l, ok := g.scopes[key]; ok {
		return l
	}
	if g.scopes == nil {
		g.scopes = map[string]*metadata.Tuple{}
	}
	l := &metadata.Tuple{}
	for _, j := range js {
		l.Fields = append(l.Fields, g.scope(j))
	}
	g.number(l)
	g.scopes[key] = l
	return l
}

// scope is output j's scope.
func (g *gen) scope(j int) *metadata.Tuple {
	if s, ok := g.outScopes[j]; ok {
		return s
	}
	if g.domain == nil {
		g.domain = &metadata.Tuple{Distinct: true}
		g.domain.Fields = []metadata.Field{g.domain, &metadata.String{Value: "tpucc kernel buffers"}}
		g.number(g.domain)
	}
	s := &metadata.Tuple{Distinct: true}
	s.Fields = []metadata.Field{s, g.domain, &metadata.String{Value: fmt.Sprintf("output %d", j)}}
	g.number(s)
	if g.outScopes == nil {
		g.outScopes = map[int]*metadata.Tuple{}
	}
	g.outScopes[j] = s
	return s
}

// number adds t to the module's metadata under the next number (a tuple
// without one prints inline, and these refer to themselves).
func (g *gen) number(t *metadata.Tuple) {
	t.MetadataID = metadata.MetadataID(len(g.m.MetadataDefs))
	g.m.MetadataDefs = append(g.m.MetadataDefs, t)
}
