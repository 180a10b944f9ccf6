package cpu

import (
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// fftKernel computes fft in complex128 on a copy of the operand, one axis
// at a time, and rounds once into the result type: a radix-2 transform
// where an axis's length is a power of two, the direct sum otherwise. The
// twiddles are e^{∓2πi m/n} for m in [0, n), each from its own sine and
// cosine, so no error accumulates along an axis.
func fftKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	at := in.Attr.(*ir.FFTAttr)
	out := backend.New(in.Results[0].Type)
	if x.Len() == 0 || out.Len() == 0 {
		return out
	}
	shape := x.Type().Dims()
	first := len(shape) - len(at.Length)
	last := len(shape) - 1
	data := make([]complex128, x.Len())
	x.ReadComplex128s(0, data)
	switch at.Type {
	case ir.FFTForward, ir.FFTInverse:
		for k := first; k <= last; k++ {
			transformAxis(data, shape, k, at.Type == ir.FFTInverse)
		}
		out.WriteComplex128s(0, data)
	case ir.FFTReal:
		for k := first; k <= last; k++ {
			transformAxis(data, shape, k, false)
		}
		n, h := int(shape[last]), int(out.Type().Dims()[last])
		for row := 0; row < len(data)/n; row++ {
			out.WriteComplex128s(row*h, data[row*n:row*n+h])
		}
	case ir.FFTRealInverse:
		for k := first; k < last; k++ {
			transformAxis(data, shape, k, true)
		}
		full := hermitianRows(data, int(shape[last]), int(at.Length[len(at.Length)-1]))
		shape[last] = at.Length[len(at.Length)-1]
		transformAxis(full, shape, last, true)
		out.WriteComplex128s(0, full)
	}
	return out
}

// hermitianRows extends each row of h = n/2+1 spectrum elements to the n
// of a real signal's spectrum, X[k] = conj(X[n-k]) past the given half.
func hermitianRows(half []complex128, h, n int) []complex128 {
	rows := len(half) / h
	full := make([]complex128, rows*n)
	for r := 0; r < rows; r++ {
		src, dst := half[r*h:(r+1)*h], full[r*n:(r+1)*n]
		for k := range dst {
			if k < h {
				dst[k] = src[k]
			} else {
				dst[k] = cmplx.Conj(src[n-k])
			}
		}
	}
	return full
}

// transformAxis replaces every line of data along axis k by its transform;
// the inverse divides by the line's length.
func transformAxis(data []complex128, shape []int64, k int, inverse bool) {
	n := int(shape[k])
	inner := 1
	for _, d := range shape[k+1:] {
		inner *= int(d)
	}
	if n <= 1 {
		return
	}
	tw := twiddles(n, inverse)
	line, tmp := make([]complex128, n), make([]complex128, n)
	scale := complex(1/float64(n), 0)
	for base := 0; base < len(data); base += n * inner {
		for i := 0; i < inner; i++ {
			for j := range line {
				line[j] = data[base+j*inner+i]
			}
			res := dft(line, tmp, tw)
			for j, v := range res {
				if inverse {
					v *= scale
				}
				data[base+j*inner+i] = v
			}
		}
	}
}

// twiddles are e^{-2πi m/n} (e^{+2πi m/n} for the inverse), m in [0, n).
func twiddles(n int, inverse bool) []complex128 {
	sign := -1.0
	if inverse {
		sign = 1
	}
	tw := make([]complex128, n)
	for m := range tw {
		s, c := math.Sincos(2 * math.Pi * float64(m) / float64(n))
		tw[m] = complex(c, sign*s)
	}
	return tw
}

// dft transforms x (len n, tw its twiddles), using tmp of the same length;
// it returns the slice that holds the result.
func dft(x, tmp, tw []complex128) []complex128 {
	n := len(x)
	if n&(n-1) != 0 {
		for k := range tmp {
			var s complex128
			for j, v := range x {
				s += v * tw[(j*k)%n]
			}
			tmp[k] = s
		}
		return tmp
	}
	// Iterative radix-2: bit-reversed order, then log2(n) butterfly passes.
	shift := bits.UintSize - bits.TrailingZeros(uint(n))
	for i := range x {
		if j := int(bits.Reverse(uint(i)) >> shift); j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		step := n / size
		for start := 0; start < n; start += size {
			for j := 0; j < size/2; j++ {
				a, b := x[start+j], x[start+j+size/2]*tw[j*step]
				x[start+j], x[start+j+size/2] = a+b, a-b
			}
		}
	}
	return x
}

// fftScratchBytes: the complex128 copy of the operand, for irfft the
// extended rows, and per axis the twiddles and two lines.
func fftScratchBytes(in *ir.Instr) int64 {
	x, _ := in.Args[0].Type.NumElements()
	n := x
	at := in.Attr.(*ir.FFTAttr)
	if at.Type == ir.FFTRealInverse {
		r, _ := in.Results[0].Type.NumElements()
		n = addBytes(n, r)
	}
	var line int64
	for _, l := range at.Length {
		line = max(line, l)
	}
	return mulBytes(addBytes(n, mulBytes(line, 3)), 16)
}
