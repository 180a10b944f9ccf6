package engine

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Arg is one argument of a call as the cache sees it: a tensor (its value, or
// only its type for Lower) or a static value that becomes part of the key.
type Arg struct {
	Tensor *backend.Buffer // the value of a tensor argument; nil for a shape-only one
	Type   ir.Type         // a tensor argument's type
	Static any             // a static argument's value (see StaticArg)
	static bool
}

// TensorArg is a tensor argument.
func TensorArg(t *backend.Buffer) Arg { return Arg{Tensor: t, Type: t.Type()} }

// ShapeArg is a tensor argument known only by its type, for Lower.
func ShapeArg(t ir.Type) Arg { return Arg{Type: t} }

// StaticArg is a static argument: a bool, an integer, a float or a string
// (or a named type of one of these). Its value, with its Go type, is part of
// the key: 3 and 3.0 and "3" are three signatures.
func StaticArg(v any) (Arg, error) {
	if _, ok := appendStatic(nil, v); !ok {
		return Arg{}, fmt.Errorf("static argument of type %T: want a bool, integer, float or string", v)
	}
	return Arg{Static: v, static: true}, nil
}

// IsStatic reports whether a is a static argument.
func (a Arg) IsStatic() bool { return a.static }

// appendStatic appends the canonical spelling of a static value: its Go type
// and value, so equal spellings mean equal values. Floats are written exactly
// (as their bits when the decimal would not round-trip, for NaN payloads).
func appendStatic(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(append(b, "int:"...), int64(x), 10), true
	case int64:
		return strconv.AppendInt(append(b, "int64:"...), x, 10), true
	case bool:
		return strconv.AppendBool(append(b, "bool:"...), x), true
	case float64:
		return appendFloat(append(b, "float64:"...), x), true
	case string:
		return strconv.AppendQuote(append(b, "string:"...), x), true
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return b, false
	}
	b = append(b, rv.Type().String()...)
	b = append(b, ':')
	switch rv.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(b, rv.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, rv.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		return appendFloat(b, rv.Float()), true
	case reflect.String:
		return strconv.AppendQuote(b, rv.String()), true
	}
	return b, false
}

func appendFloat(b []byte, x float64) []byte {
	if math.IsNaN(x) {
		return strconv.AppendUint(append(b, "nan/"...), math.Float64bits(x), 16)
	}
	if x == 0 && math.Signbit(x) {
		return append(b, "-0"...)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

// appendKey appends the in-memory key of a call: every argument's dtype and
// shape, or static value. It is built on every call, so it avoids fmt.
func appendKey(b []byte, args []Arg) ([]byte, bool) {
	for _, a := range args {
		if a.static {
			b = append(b, 's')
			var ok bool
			if b, ok = appendStatic(b, a.Static); !ok {
				return b, false
			}
			b = append(b, 0)
			continue
		}
		t := a.Type
		b = append(b, 't', byte(t.DType), byte(len(t.Shape)))
		for _, d := range t.Shape {
			if d.Symbolic() || d.Size < 0 {
				return b, false
			}
			b = strconv.AppendInt(b, d.Size, 10)
			b = append(b, ',')
		}
	}
	return b, true
}

// signature is a call's arguments without their values: what a program is
// specialised on.
type signature struct {
	types   []ir.Type // per argument; zero Type for a static one
	statics []string  // per argument: canonical static value, "" for a tensor
}

func newSignature(args []Arg) signature {
	s := signature{types: make([]ir.Type, len(args)), statics: make([]string, len(args))}
	for i, a := range args {
		if a.static {
			b, _ := appendStatic(nil, a.Static)
			s.statics[i] = string(b)
			continue
		}
		s.types[i] = ir.Type{DType: a.Type.DType, Shape: append([]ir.Dim(nil), a.Type.Shape...)}
	}
	return s
}

func (s signature) isStatic(i int) bool { return s.statics[i] != "" }

// withDims returns s with the sizes of some dimensions replaced.
func (s signature) withDims(sizes map[DimRef]int64) signature {
	out := signature{types: make([]ir.Type, len(s.types)), statics: s.statics}
	for i, t := range s.types {
		out.types[i] = ir.Type{DType: t.DType, Shape: append([]ir.Dim(nil), t.Shape...)}
		for d := range t.Shape {
			if n, ok := sizes[DimRef{i, d}]; ok {
				out.types[i].Shape[d] = ir.D(n)
			}
		}
	}
	return out
}

// text spells s for keys and logs: f32[32,64], int:3.
func (s signature) text() string {
	parts := make([]string, len(s.types))
	for i := range s.types {
		if s.isStatic(i) {
			parts[i] = s.statics[i]
		} else {
			parts[i] = s.types[i].String()
		}
	}
	return strings.Join(parts, ", ")
}

// tensorTypes lists the types of the tensor arguments, in order: the
// parameters of the traced program.
func (s signature) tensorTypes() []ir.Type {
	var out []ir.Type
	for i, t := range s.types {
		if !s.isStatic(i) {
			out = append(out, t)
		}
	}
	return out
}

// staticText spells a static value for logs: the value without its type.
func staticText(canon string) string {
	if _, v, ok := strings.Cut(canon, ":"); ok {
		return v
	}
	return canon
}

// diff describes how u differs from s, one item per changed argument or
// dimension, in argument order.
func (s signature) diff(u signature) []change {
	var out []change
	for i := range u.types {
		if i >= len(s.types) {
			break
		}
		switch {
		case s.isStatic(i) || u.isStatic(i):
			if s.statics[i] != u.statics[i] {
				out = append(out, change{arg: i, dim: -1, text: fmt.Sprintf("arg %d changed %s -> %s", i, staticText(s.statics[i]), staticText(u.statics[i]))})
			}
		case s.types[i].DType != u.types[i].DType || s.types[i].Rank() != u.types[i].Rank():
			out = append(out, change{arg: i, dim: -1, text: fmt.Sprintf("arg %d changed %s -> %s", i, s.types[i], u.types[i])})
		default:
			for d := range u.types[i].Shape {
				a, b := s.types[i].Shape[d].Size, u.types[i].Shape[d].Size
				if a != b {
					out = append(out, change{arg: i, dim: d, text: fmt.Sprintf("arg %d dim %d changed %d -> %d", i, d, a, b)})
				}
			}
		}
	}
	return out
}

// change is one difference between two signatures; dim is -1 for a whole
// argument (a static value, a dtype or a rank).
type change struct {
	arg, dim int
	text     string
}
