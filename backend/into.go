package backend

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// Results written into the caller's storage (RunOptions.Into), as ONNX
// Runtime's I/O binding and PJRT's output buffers offer: a loop that calls
// one program again and again (a decode step, a streaming chain) hands the
// same storage back every call instead of taking fresh memory, whose first
// touch costs a page fault per 4 KiB, for every result.
//
// The rules, which CheckInto enforces for every backend:
//   - Into has one entry per result; a nil entry leaves that result to the
//     call (fresh storage, as Run).
//   - An entry has the result's dtype and shape (layouts aside) and is
//     plain host memory: not a device buffer, not a donated one.
//   - No two entries share storage.
//   - An entry may share storage with an argument only when the call
//     donates that argument (RunOptions.Donate): its value is consumed by
//     the call, so overwriting it is allowed.
//
// A backend that honours Into returns, for each non-nil entry, that very
// *Buffer, holding the result: the llvm backend's kernels write into it;
// the pjrt backend copies each result from the device straight into it
// (and refuses storage shared with any argument, and a program over a
// mesh); the runtime copies the results of an executable that is no
// OptionsRunner (the reference executor).

// CheckInto checks into, the storage offered for the results of a call of
// the function fn (results are its result types), against the call's args
// and the argument positions it donates. The error names the first result
// at fault by its index.
func CheckInto(fn string, results []ir.Type, into, args []*Buffer, donate []int) error {
	if len(into) != len(results) {
		return fmt.Errorf("@%s returns %d results, got storage for %d", fn, len(results), len(into))
	}
	for i, b := range into {
		if b == nil {
			continue
		}
		t := results[i]
		switch {
		case b.Donated() != "":
			return fmt.Errorf("result %d of @%s: the storage given (%s) %s", i, fn, b.typ, b.Donated())
		case b.dev != nil:
			return fmt.Errorf("result %d of @%s: the storage given (%s) is on a device; results are written into host memory", i, fn, b.typ)
		case b.typ.DType != t.DType || !b.typ.SameShape(t):
			return fmt.Errorf("result %d of @%s: the storage given is %s, want %s", i, fn, b.typ.WithShape(b.typ.Shape), t.WithShape(t.Shape))
		}
		for k, o := range into[:i] {
			if o != nil && Overlap(b, o) {
				return fmt.Errorf("results %d and %d of @%s: given the same storage", k, i, fn)
			}
		}
		for j, a := range args {
			if a != nil && Overlap(b, a) && !slices.Contains(donate, j) {
				return fmt.Errorf("result %d of @%s: the storage given is argument %d's, which the call does not donate", i, fn, j)
			}
		}
	}
	return nil
}

// Overlap reports whether a's and b's host storage share a byte (device
// and donated buffers have none).
func Overlap(a, b *Buffer) bool {
	if a.dev != nil || b.dev != nil || len(a.data) == 0 || len(b.data) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a.data))), uintptr(unsafe.Pointer(unsafe.SliceData(b.data)))
	return pa < pb+uintptr(len(b.data)) && pb < pa+uintptr(len(a.data))
}

// CopyInto writes each result into the storage into gives for it (CheckInto
// passed) and returns the results with into's buffers in their place: what
// a runtime does for an executable that cannot write into given storage.
func CopyInto(res, into []*Buffer) []*Buffer {
	for i, b := range into {
		if b != nil && res[i] != b {
			copy(b.data, res[i].Bytes())
			res[i] = b
		}
	}
	return res
}
