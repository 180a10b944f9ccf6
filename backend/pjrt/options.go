package pjrt

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Option is one named value of the C API (PJRT_NamedValue), as a client's
// create options are given: Value is a bool, an int or int64, a float32, a
// string or an []int64.
type Option struct {
	Name  string
	Value any
}

// The PJRT_NamedValue_Type enumerators.
const (
	nvString    int32 = 0
	nvInt64     int32 = 1
	nvInt64List int32 = 2
	nvFloat     int32 = 3
	nvBool      int32 = 4
)

// namedValues lays out opts as PJRT_NamedValues. Names, strings and lists
// live in Go memory that the returned function unpins: the array's fields
// are uintptrs (the value is a union of numbers and pointers), so what they
// point to is pinned rather than relied on to be kept by the collector.
func namedValues(opts []Option) ([]namedValue, func(), error) {
	if len(opts) == 0 {
		return nil, func() {}, nil
	}
	var pin runtime.Pinner
	ptr := func(b []byte) uintptr {
		if len(b) == 0 {
			return 0
		}
		pin.Pin(&b[0])
		return uintptr(unsafe.Pointer(&b[0]))
	}
	nv := make([]namedValue, len(opts))
	for i, o := range opts {
		v := &nv[i]
		*v = namedValue{structSize: unsafe.Sizeof(namedValue{}), nameLen: uintptr(len(o.Name)), valueSize: 1}
		v.name = ptr([]byte(o.Name))
		switch x := o.Value.(type) {
		case bool:
			v.typ = nvBool
			if x {
				v.value = 1
			}
		case int:
			v.typ, v.value = nvInt64, uintptr(int64(x))
		case int64:
			v.typ, v.value = nvInt64, uintptr(x)
		case float32:
			v.typ, v.value = nvFloat, uintptr(math.Float32bits(x))
		case string:
			v.typ, v.value, v.valueSize = nvString, ptr([]byte(x)), uintptr(len(x))
		case []int64:
			v.typ, v.valueSize = nvInt64List, uintptr(len(x))
			if len(x) > 0 {
				pin.Pin(&x[0])
				v.value = uintptr(unsafe.Pointer(&x[0]))
			}
		default:
			pin.Unpin()
			return nil, nil, fmt.Errorf("pjrt: option %s: value of type %T (want bool, int, int64, float32, string or []int64)", o.Name, o.Value)
		}
	}
	return nv, pin.Unpin, nil
}

// ParseOptions reads options written as name=value pairs separated by
// commas, as $TPUCC_PJRT_OPTIONS holds them: true or false is a bool, an
// integer an int64, another number a float32, [1,2,3] an []int64, and
// anything else (or a value in double quotes) a string.
func ParseOptions(s string) ([]Option, error) {
	var opts []Option
	for len(s) > 0 {
		item, rest, err := nextItem(s)
		if err != nil {
			return nil, err
		}
		s = rest
		name, val, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("option %q: want name=value", item)
		}
		if strings.ContainsFunc(name, badNameRune) {
			return nil, fmt.Errorf("option name %q: want letters, digits, '_', '.' or '-'", name)
		}
		if slices.ContainsFunc(opts, func(o Option) bool { return o.Name == name }) {
			return nil, fmt.Errorf("option %s given twice", name)
		}
		v, err := optionValue(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("option %s: %w", name, err)
		}
		opts = append(opts, Option{name, v})
	}
	return opts, nil
}

func badNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
}

// nextItem splits s at the first comma outside brackets and quotes.
func nextItem(s string) (item, rest string, err error) {
	depth, quoted := 0, false
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ',' && depth == 0:
			return s[:i], s[i+1:], nil
		}
	}
	if quoted || depth != 0 {
		return "", "", fmt.Errorf("option %q: unbalanced quote or bracket", s)
	}
	return s, "", nil
}

func optionValue(v string) (any, error) {
	switch {
	case v == "true" || v == "false":
		return v == "true", nil
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if strings.Contains(v[1:len(v)-1], `"`) {
			return nil, fmt.Errorf("value %s: a quote inside a quoted string", v)
		}
		return v[1 : len(v)-1], nil
	case strings.HasPrefix(v, "["):
		return intList(v)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(v, 32); err == nil {
		return float32(f), nil
	}
	if strings.ContainsAny(v, `"[]`) {
		return nil, fmt.Errorf("value %s: quote or bracket in an unquoted string", v)
	}
	return v, nil
}

func intList(v string) ([]int64, error) {
	body, ok := strings.CutSuffix(v[1:], "]")
	if !ok || strings.ContainsAny(body, "[]") {
		return nil, fmt.Errorf("value %s: want a list of integers such as [1,2]", v)
	}
	list := []int64{}
	if strings.TrimSpace(body) == "" {
		return list, nil
	}
	for f := range strings.SplitSeq(body, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("value %s: %q is not an integer", v, strings.TrimSpace(f))
		}
		list = append(list, n)
	}
	return list, nil
}
