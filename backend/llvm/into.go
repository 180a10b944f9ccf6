package llvm

import (
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Results written into the caller's storage (backend.RunOptions.Into). A
// result's slot runs on the storage given for it, so the kernels that
// compute the result write there: no fresh memory (the pool's, or new
// memory's page faults, pool.go) and no copy. Where the storage given is
// also an argument's (allowed when the call donates that argument), a
// kernel could overwrite the argument while another still reads it, so
// that result is computed in storage of its own and copied over at the end
// of the call. The exception is a donated argument that the plan updates
// in place (donate.go) and whose own storage is given for that result:
// the update lands there, and nothing is copied.

// resultSlots maps each slot of p to the result it holds, -1 for none
// (newPlan gives every result a slot of its own).
func resultSlots(p *plan) []int {
	out := make([]int, len(p.slots))
	for i := range out {
		out[i] = -1
	}
	for r, s := range p.results {
		out[s] = r
	}
	return out
}

// resultTypes are the types CheckInto holds the storage given to.
func (x *Executable) resultTypes() []ir.Type { return x.entry.Results }

// intoFor is the storage into gives for the result slot i holds, nil for
// none.
func (x *Executable) intoFor(i int, into []*backend.Buffer) *backend.Buffer {
	if into == nil || x.resultOf[i] < 0 {
		return nil
	}
	return into[x.resultOf[i]]
}

// resultBuffer is the storage result slot i is computed in: the caller's,
// unless it gives none or an argument shares it; then new (newResult).
func (x *Executable) resultBuffer(i int, into, args []*backend.Buffer) *backend.Buffer {
	b := x.intoFor(i, into)
	if b == nil || sharesArg(b, args) {
		return newResult(x.plan.slots[i].typ)
	}
	return b
}

// intoParam is the buffer that a parameter slot the plan writes into
// (donate.go), and that is a result given storage into, runs on: into
// itself when it is the donated argument's own storage (the update in
// place lands there); a private copy of the argument when into shares
// storage with an argument otherwise (copied into into at the end); else
// into, filled with the argument.
func intoParam(arg *backend.Buffer, sl *slot, donated bool, into *backend.Buffer, args []*backend.Buffer) *backend.Buffer {
	switch {
	case donated && sameStorage(arg, into):
		return into
	case sharesArg(into, args):
		return arg.Clone().WithType(sl.typ)
	}
	copy(into.Bytes(), arg.Bytes())
	return into
}

// sharesArg reports whether b shares storage with one of bufs (nil
// entries aside).
func sharesArg(b *backend.Buffer, bufs []*backend.Buffer) bool {
	for _, a := range bufs {
		if a != nil && backend.Overlap(a, b) {
			return true
		}
	}
	return false
}

// sameStorage reports whether a and b are host buffers over exactly the
// same bytes.
func sameStorage(a, b *backend.Buffer) bool {
	da, db := a.Bytes(), b.Bytes()
	return len(da) == len(db) && len(da) > 0 && unsafe.SliceData(da) == unsafe.SliceData(db)
}
