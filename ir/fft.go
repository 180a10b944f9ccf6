package ir

// FFTType is StableHLO's fft_type: the forward or inverse transform,
// complex to complex or between real and complex values.
type FFTType uint8

const (
	FFTForward     FFTType = iota // FFT: complex to complex, e^{-2πi jk/n}
	FFTInverse                    // IFFT: complex to complex, e^{+2πi jk/n}, divided by n
	FFTReal                       // RFFT: real to complex, the first n/2+1 outputs of the last axis
	FFTRealInverse                // IRFFT: complex to real, the inverse of RFFT
)

var fftTypeNames = []string{FFTForward: "fft", FFTInverse: "ifft", FFTReal: "rfft", FFTRealInverse: "irfft"}

func (t FFTType) String() string { return fftTypeNames[t] }

// FFTAttr: fft {type=fft|ifft|rfft|irfft, length=[...]}. Length is the size
// of each transformed axis, the operand's last len(Length) axes (1 to 3);
// for irfft the last one is the real result's size.
type FFTAttr struct {
	Type   FFTType
	Length []int64
}

func (a *FFTAttr) Fields() []AttrField {
	return []AttrField{intsField("length", a.Length), {Name: "type", Value: AttrValue{Kind: AttrIdent, Str: a.Type.String()}}}
}

func decodeFFT(r *attrReader) Attr {
	a := &FFTAttr{Length: r.ints("length", true)}
	f, ok := r.get("type", true)
	if !ok {
		return a
	}
	for t, n := range fftTypeNames {
		if f.Value.Kind == AttrIdent && f.Value.Str == n {
			a.Type = FFTType(t)
			return a
		}
	}
	r.errorf(f.Pos, "attribute 'type' of %s must be one of fft, ifft, rfft, irfft, got %s", r.op, f.Value)
	return a
}

// inferFFT: fft and ifft keep a complex operand's type; rfft takes f32
// (f64) to c64 (c128) with the last axis n/2+1 long; irfft takes it back,
// its last axis n long. The transformed axes must have static sizes equal
// to length (n/2+1 for the complex side's last axis).
func inferFFT(c *inferCtx) []Type {
	x, at := c.args[0], c.attr.(*FFTAttr)
	out := x.DType
	switch at.Type {
	case FFTReal:
		if x.DType != F32 && x.DType != F64 {
			return c.fail("operand of rfft must be f32 or f64, got %s", x)
		}
		out = x.DType.ComplexOf()
	default:
		if !x.DType.IsComplex() {
			return c.fail("operand of %s must be c64 or c128, got %s", at.Type, x)
		}
		if at.Type == FFTRealInverse {
			out = x.DType.ComplexPart()
		}
	}
	l := len(at.Length)
	if l < 1 || l > 3 {
		return c.fail("fft transforms 1 to 3 axes, got length=%s", intsValue(at.Length))
	}
	if x.Rank() < l {
		return c.fail("fft of %d axes needs an operand of rank at least %d, got %s", l, l, x)
	}
	shape := append([]Dim(nil), x.Shape...)
	for i, n := range at.Length {
		k := x.Rank() - l + i
		want := n
		if n < 0 {
			return c.fail("fft length %d is negative", n)
		}
		last := i == l-1
		if last && at.Type == FFTRealInverse {
			want = halfSpectrum(n)
			shape[k] = D(n)
		}
		got, ok := c.staticDim(x, k)
		if !ok {
			return nil
		}
		if got != want {
			return c.fail("dimension %d of the operand of %s must be %d for length=%s, got %s", k, at.Type, want, intsValue(at.Length), x)
		}
		if last && at.Type == FFTReal {
			shape[k] = D(halfSpectrum(n))
		}
	}
	return []Type{{DType: out, Shape: shape}}
}

// halfSpectrum is the length of a real signal's spectrum without its
// conjugate half: n/2+1, and 0 for an empty signal.
func halfSpectrum(n int64) int64 {
	if n == 0 {
		return 0
	}
	return n/2 + 1
}
