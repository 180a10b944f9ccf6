package llvm

import "github.com/tpucc/tpucc/backend"

// planMemory gives every temporary slot its storage: walking the steps in
// order, a step's outputs take the smallest free arena that fits (or a new
// one) and a temporary's arena is freed after its last use, so the peak is
// close to the largest set of values alive at once. Outputs are placed
// before the step's inputs are freed: a kernel never writes where it reads.
func planMemory(p *plan) map[int][]byte {
	last := make([]int, len(p.slots))
	for i := range last {
		last[i] = -1
	}
	for si, st := range p.steps {
		for _, b := range st.bufs {
			last[b] = si
		}
	}
	type arena struct{ data []byte }
	var free []*arena
	owner := map[int]*arena{}
	freed := map[int]bool{}
	for si, st := range p.steps {
		for _, b := range st.bufs[:st.outs] {
			if p.slots[b].kind != slotTemp || owner[b] != nil {
				continue
			}
			need := byteSize(p.slots[b].typ)
			best := -1
			for i, a := range free {
				if len(a.data) >= need && (best < 0 || len(a.data) < len(free[best].data)) {
					best = i
				}
			}
			if best >= 0 {
				owner[b] = free[best]
				free = append(free[:best], free[best+1:]...)
			} else {
				// Aligned for any dtype: an arena is reused by slots of
				// other dtypes, and a make([]byte, 5) may start at an odd
				// address (an i32[1] placed there could not be viewed).
				owner[b] = &arena{data: backend.AlignedBytes(need)}
			}
		}
		for _, b := range st.bufs {
			// A slot read twice by a step (mul %x, %x) is freed once.
			if p.slots[b].kind == slotTemp && last[b] == si && owner[b] != nil && !freed[b] {
				freed[b] = true
				free = append(free, owner[b])
			}
		}
	}
	out := map[int][]byte{}
	for b, a := range owner {
		out[b] = a.data
	}
	return out
}
