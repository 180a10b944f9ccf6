package backend

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// Stack returns a buffer [len(rows), …] whose row i is rows[i] (all of one
// static type), without copying them: the stacked array is made the first
// time something reads the buffer on the host (Bytes), and a split upload
// (ShardUploader) reads each device's piece from the rows themselves
// (BoxReader), so stacks of stacks of memory-mapped tensors (a model's
// layers of experts, straight from its checkpoint) reach the devices one
// piece at a time. When the array is made, made (if not nil) is called with
// views of its rows, for a caller that keeps the rows elsewhere to point
// there instead and let the rows' own storage go.
func Stack(rows []*Buffer, made func(views []*Buffer)) *Buffer {
	if len(rows) == 0 {
		panic("backend: a stack of no rows")
	}
	t := rows[0].Type()
	for i, r := range rows {
		if !r.Type().Equal(t) {
			panic(fmt.Sprintf("backend: row %d of a stack is %s, row 0 is %s", i, r.Type(), t))
		}
	}
	st := ir.Tensor(t.DType, append([]int64{int64(len(rows))}, t.Dims()...)...)
	return OnDevice(st, &stackRows{rows: rows, made: made})
}

// stackRows is a Stack's storage (DeviceData and BoxReader).
type stackRows struct {
	rows []*Buffer
	made func([]*Buffer)
}

// ToHost makes the stacked array: each row read whole (a row that is
// itself a stack is read from its rows, not made).
func (s *stackRows) ToHost() ([]byte, error) {
	t := s.rows[0].Type()
	n := byteSize(t)
	out := LongLivedBytes(n * len(s.rows)) // a model's weights: kept as long as it is
	views := make([]*Buffer, len(s.rows))
	dims := sizes(t)
	for i, r := range s.rows {
		row := out[i*n : (i+1)*n]
		readRow(r, dims, row, dims, make([]int64, len(dims)))
		v, err := View(t, row)
		if err != nil {
			return nil, fmt.Errorf("stacking row %d: %w", i, err)
		}
		views[i] = v
	}
	s.rows = views
	if s.made != nil {
		s.made(views)
	}
	return out, nil
}

// ReadBox reads a box of the stack from the rows it spans.
func (s *stackRows) ReadBox(dims []int64, piece []byte, pdims, start []int64, elem int) {
	per := int64(elem)
	for _, d := range pdims[1:] {
		per *= d
	}
	for i := int64(0); i < pdims[0] && start[0]+i < dims[0]; i++ {
		readRow(s.rows[start[0]+i], dims[1:], piece[i*per:(i+1)*per], pdims[1:], start[1:])
	}
}

// Close lets the rows go.
func (s *stackRows) Close() error {
	s.rows = nil
	return nil
}

// readRow reads a box of r, through its own BoxReader when it has one.
func readRow(r *Buffer, dims []int64, piece []byte, pdims, start []int64) {
	elem := r.Type().DType.Size()
	if src, ok := r.Device().(BoxReader); ok {
		src.ReadBox(dims, piece, pdims, start, elem)
		return
	}
	CopyBox(r.Bytes(), dims, piece, pdims, start, elem, true)
}

func sizes(t ir.Type) []int64 {
	out := make([]int64, t.Rank())
	for i, d := range t.Shape {
		out[i] = d.Size
	}
	return out
}
