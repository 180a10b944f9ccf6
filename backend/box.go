package backend

// A BoxReader is storage that copies any box of its tensor to the host
// without the whole tensor ever being in host memory: a tensor assembled
// from parts, such as a model's layers stacked from the checkpoint. A split
// upload (ShardUploader) reads each device's piece through it, so loading a
// model split N ways holds one piece at a time, not the whole stack.
type BoxReader interface {
	// ReadBox fills piece, a row-major box of pdims elements, with the
	// elements of the tensor (of dims, elem bytes each) from start on.
	// Box positions past the tensor's edge are left as they are.
	ReadBox(dims []int64, piece []byte, pdims, start []int64, elem int)
}

// CopyBox copies between whole, a row-major array of dims, and piece, a
// box of pdims starting at start; toPiece picks the direction. Piece
// positions outside the array are padding: left as they are, never read
// back. The innermost dimension is copied as one run.
func CopyBox(whole []byte, dims []int64, piece []byte, pdims, start []int64, elem int, toPiece bool) {
	if len(dims) == 0 {
		if toPiece {
			copy(piece[:elem], whole[:elem])
		} else {
			copy(whole[:elem], piece[:elem])
		}
		return
	}
	wStride, pStride := make([]int64, len(dims)), make([]int64, len(dims))
	w, p := int64(elem), int64(elem)
	for d := len(dims) - 1; d >= 0; d-- {
		wStride[d], pStride[d] = w, p
		w *= dims[d]
		p *= pdims[d]
	}
	last := len(dims) - 1
	run := min(pdims[last], dims[last]-start[last]) * int64(elem)
	if run <= 0 {
		return
	}
	var rec func(d int, wOff, pOff int64)
	rec = func(d int, wOff, pOff int64) {
		if d == last {
			wOff += start[d] * wStride[d]
			if toPiece {
				copy(piece[pOff:pOff+run], whole[wOff:wOff+run])
			} else {
				copy(whole[wOff:wOff+run], piece[pOff:pOff+run])
			}
			return
		}
		for i := int64(0); i < pdims[d] && start[d]+i < dims[d]; i++ {
			rec(d+1, wOff+(start[d]+i)*wStride[d], pOff+i*pStride[d])
		}
	}
	rec(0, 0, 0)
}
