package pjrt

import (
	"errors"
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Results copied into the caller's storage (backend.RunOptions.Into). The
// plugin computes every result in the device's memory; a result given
// storage is copied from there straight into it, instead of into new host
// memory. An entry may not share storage with any argument, donated or not:
// the plugin may read an argument's host memory in place (lent, Upload), so
// a result copied over it could change what another result still reads.

// checkInto checks o.Into for a program whose results are results.
func checkInto(results []ir.Type, args []*backend.Buffer, o backend.RunOptions) error {
	if o.Into == nil {
		return nil
	}
	if o.KeepOnDevice {
		return errors.New("pjrt: results kept on the device (KeepOnDevice) cannot also be written into host storage (Into)")
	}
	if err := backend.CheckInto("main", results, o.Into, args, o.Donate); err != nil {
		return fmt.Errorf("pjrt: %w", err)
	}
	for i, b := range o.Into {
		for j, a := range args {
			if b != nil && a != nil && backend.Overlap(a, b) {
				return fmt.Errorf("pjrt: result %d of @main: the storage given is argument %d's; the pjrt backends write no result into an argument (the plugin may still read it)", i, j)
			}
		}
	}
	return nil
}

// toHostInto is result i (b) in host memory: copied into into[i] when
// that is given, else into new memory.
func toHostInto(b *Buffer, into []*backend.Buffer, i int) (*backend.Buffer, error) {
	if into == nil || into[i] == nil {
		return toHost(b)
	}
	dst := into[i].Bytes()
	if len(dst) == 0 {
		return into[i], nil
	}
	if err := b.copyToHost(dst, int64(len(dst))); err != nil {
		return nil, err
	}
	return into[i], nil
}
