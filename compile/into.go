package compile

import (
	"fmt"
	"strconv"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/tensor"
)

// CallInto is Call with the results written into the storage of into's
// tensors, one per tensor result (a nil entry: that result in new
// storage), as ONNX Runtime's I/O binding and PJRT's output buffers do. It
// returns into's tensors themselves in their places, overwritten (and every
// tensor sharing their storage with them). A loop that calls the function
// again and again (a decode step, a streaming chain) hands the same tensors
// back every call instead of paying for fresh memory for each result.
//
// Each tensor given must be concrete, of its result's dtype and shape, and
// share no storage with an argument, except an argument the function
// donates (Donate): that argument then holds the result and stays usable.
// Anything else is an error that names the result, and nothing runs
// (engine.Function.CallInto). The llvm backend computes the results in the
// storage given; the pjrt backend copies them there from the device (and
// refuses an argument's storage, donated or not); the reference backend
// copies them there. A nil into is Call.
func (c *Compiled) CallInto(into []*tensor.Tensor, args ...any) ([]*tensor.Tensor, error) {
	if into == nil {
		return c.Call(args...)
	}
	bufs := make([]*backend.Buffer, len(into))
	for i, t := range into {
		if t == nil {
			continue
		}
		if err := tensor.Usable(c.name, "result "+strconv.Itoa(i)+"'s storage", t); err != nil {
			return nil, err
		}
		if t.IsTraced() {
			return nil, fmt.Errorf("%s: result %d's storage is a traced tensor: give a concrete one", c.name, i)
		}
		bufs[i] = t.Buffer()
	}
	return c.callInto(into, bufs, args)
}
