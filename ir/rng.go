package ir

// RngAlgorithm is StableHLO's rng_algorithm: the counter-based generator
// rng_bit_generator runs.
type RngAlgorithm uint8

const (
	// RngDefault is implementation-defined in StableHLO; tpucc gives it
	// XLA:CPU's choice, Philox.
	RngDefault RngAlgorithm = iota
	RngThreeFry
	RngPhilox
)

var rngAlgorithmNames = []string{RngDefault: "default", RngThreeFry: "three_fry", RngPhilox: "philox"}

func (a RngAlgorithm) String() string { return rngAlgorithmNames[a] }

// RngAttr: rng_bit_generator {algorithm=default|three_fry|philox}.
type RngAttr struct{ Algorithm RngAlgorithm }

func (a *RngAttr) Fields() []AttrField {
	return []AttrField{{Name: "algorithm", Value: AttrValue{Kind: AttrIdent, Str: a.Algorithm.String()}}}
}

func decodeRng(r *attrReader) Attr {
	a := &RngAttr{}
	f, ok := r.get("algorithm", true)
	if !ok {
		return a
	}
	for k, n := range rngAlgorithmNames {
		if f.Value.Kind == AttrIdent && f.Value.Str == n {
			a.Algorithm = RngAlgorithm(k)
			return a
		}
	}
	r.errorf(f.Pos, "attribute 'algorithm' of %s must be one of default, three_fry, philox, got %s", r.op, f.Value)
	return a
}

// RngStateWords is the range of u64 words a state of algorithm a may
// have: three_fry's is a key and a counter, philox's a key and a 64- or
// 128-bit counter (StableHLO's rule, and XLA's).
func RngStateWords(a RngAlgorithm) (lo, hi int64) {
	if a == RngThreeFry {
		return 2, 2
	}
	return 2, 3
}

// rngBits reports whether random bits can fill d: XLA's generators make
// 32- or 64-bit words and keep the low bits of a 32-bit word for 8- and
// 16-bit types; i1, the sub-byte integers, complex and the narrow floats
// are not among the types it generates.
func rngBits(d DType) bool {
	return d.IsFloat() || d.IsInt() && !d.IsSubByte()
}

// inferRng: the written types are the new state, of the operand's type,
// and the static bits tensor.
func inferRng(c *inferCtx) []Type {
	s, a := c.args[0], c.attr.(*RngAttr)
	lo, hi := RngStateWords(a.Algorithm)
	n, ok := int64(-1), s.Rank() == 1 && s.DType == U64
	if ok {
		n, ok = c.staticDim(s, 0)
		if !ok {
			return nil
		}
	}
	if !ok || n < lo || n > hi {
		if lo == hi {
			return c.fail("the state of rng_bit_generator {algorithm=%s} must be u64[%d], got %s", a.Algorithm, lo, s)
		}
		return c.fail("the state of rng_bit_generator {algorithm=%s} must be u64[%d] or u64[%d], got %s", a.Algorithm, lo, hi, s)
	}
	if len(c.hint) != 2 {
		return c.fail("rng_bit_generator has 2 results (the new state and the bits), but %s written", plural(len(c.hint), "type"))
	}
	st, bits := c.hint[0], c.hint[1]
	if st.DType != s.DType || !st.SameShape(s) {
		return c.fail("the new state of rng_bit_generator must have the state's type %s, got %s", s, st)
	}
	if !rngBits(bits.DType) {
		return c.fail("rng_bit_generator makes integers of 8 to 64 bits, f16, bf16, f32 or f64, got %s", bits)
	}
	if !bits.IsStatic() {
		return c.fail("the bits of rng_bit_generator must have a static shape, got %s", bits)
	}
	return []Type{s, bits}
}

// RngSplitAxis is the axis along which rng_bit_generator pairs the narrow
// (8- to 32-bit) elements of a result of these dims to share one 64-bit
// output of Threefry: the first axis of even length, else the first longest,
// as XLA chooses. Every backend must pair the same elements to give XLA's bits.
func RngSplitAxis(dims []int64) int {
	best := 0
	for i, d := range dims {
		if d%2 == 0 {
			return i
		}
		if d > dims[best] {
			best = i
		}
	}
	return best
}
