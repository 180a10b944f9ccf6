package ir

// ReducePrecisionAttr: reduce_precision {exponent_bits=E, mantissa_bits=M}.
type ReducePrecisionAttr struct{ ExponentBits, MantissaBits int64 }

func (a *ReducePrecisionAttr) Fields() []AttrField {
	return []AttrField{intField("exponent_bits", a.ExponentBits), intField("mantissa_bits", a.MantissaBits)}
}

func decodeReducePrecision(r *attrReader) Attr {
	return &ReducePrecisionAttr{ExponentBits: r.int("exponent_bits"), MantissaBits: r.int("mantissa_bits")}
}

func inferReducePrecision(c *inferCtx) []Type {
	a := c.attr.(*ReducePrecisionAttr)
	if a.ExponentBits < 1 || a.MantissaBits < 0 {
		return c.fail("reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, got %d and %d", a.ExponentBits, a.MantissaBits)
	}
	return c.same(floatT)
}

// bitcastable: the dtypes bitcast_convert reinterprets. i1 has no bit width
// of its own here (it is stored in a byte; StableHLO gives it one bit).
func bitcastable(d DType) bool { return d.IsNumeric() }

// inferBitcastConvert: the result's elements are the operand's bits read as
// the result dtype, little-endian: of equal widths, the same shape; a wider
// operand element is several result elements along a new last dimension; a
// narrower one is gathered from the operand's last dimension.
func inferBitcastConvert(c *inferCtx) []Type {
	x, r := c.args[0], c.hint[0]
	if !bitcastable(x.DType) || !bitcastable(r.DType) {
		return c.fail("bitcast_convert needs numeric types, got %s to %s", x, r)
	}
	in, out := int64(x.DType.Bits()), int64(r.DType.Bits())
	want := x.Shape
	switch {
	case in > out:
		want = append(append([]Dim{}, x.Shape...), D(in/out))
	case in < out:
		if x.Rank() == 0 || x.Shape[x.Rank()-1] != D(out/in) {
			return c.fail("bitcast_convert from %s to %s needs a last dimension of %d", x, r.DType, out/in)
		}
		want = x.Shape[:x.Rank()-1]
	}
	if w := r.WithShape(want); !r.SameShape(w) {
		return c.fail("bitcast_convert of %s to %s gives %s, got %s", x, r.DType, w, r)
	}
	return []Type{r}
}
