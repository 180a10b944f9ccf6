// Package safetensors reads and writes checkpoints in the safetensors format:
// an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the tensors' bytes.
//
// A checkpoint is untrusted input. Every header is verified before any tensor
// is handed out: known dtypes only, each byte range inside the file and of
// exactly shape × dtype size, no two ranges overlapping, no gap and no
// trailing byte, no repeated name, valid UTF-8 JSON. Files are memory-mapped
// read-only and tensors are zero-copy views materialised only when asked.
package safetensors

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/internal/jsonstrict"
)

// MaxHeader is the largest header accepted, in bytes. A header describes
// tensors, not data: real checkpoints stay far below a megabyte per thousand
// tensors, so a larger length is corruption or an attack.
const MaxHeader = 100 << 20

// MaxRank bounds a tensor's dimensions (numpy 2's limit): checkpoints hold
// tensors of rank 1 to 4, and a rank-100000 shape of ones passes every
// other check while its type costs each later pass in proportion.
const MaxRank = 64

// Info describes one tensor of a file. Begin and End are byte offsets into
// the data section, which starts right after the header.
type Info struct {
	Name       string
	DType      ir.DType
	Shape      []int64
	Begin, End int64
}

// Type is the tensor's type.
func (i Info) Type() ir.Type { return ir.Tensor(i.DType, i.Shape...) }

// Header is a parsed, verified header.
type Header struct {
	Tensors  []Info            // sorted by Begin
	Metadata map[string]string // the optional "__metadata__" object
	DataAt   int64             // where the data section starts in the file
}

// dtypes maps the format's dtype names to tpucc's.
var dtypes = map[string]ir.DType{
	"F64": ir.F64, "F32": ir.F32, "F16": ir.F16, "BF16": ir.BF16,
	"I64": ir.I64, "I32": ir.I32, "I16": ir.I16, "I8": ir.I8,
	"U32": ir.U32, "U8": ir.U8, "BOOL": ir.I1, "U16": ir.U16, "U64": ir.U64,
}

// unsupported are dtypes the format defines that tpucc has no type for.
var unsupported = map[string]bool{
	"F8_E4M3": true, "F8_E5M2": true,
	"F8_E8M0": true, "F6_E2M3": true, "F6_E3M2": true, "F4": true, "C64": true,
}

// dtypeName is the format's name of d; ok is false for a dtype it lacks.
func dtypeName(d ir.DType) (string, bool) {
	for name, dt := range dtypes {
		if dt == d {
			return name, true
		}
	}
	return "", false
}

// rawInfo is a tensor entry as the JSON spells it.
type rawInfo struct {
	DType       *string            `json:"dtype"`
	Shape       *[]json.RawMessage `json:"shape"`
	DataOffsets *[]json.RawMessage `json:"data_offsets"`
}

// ParseHeader verifies the header at the start of a file of fileSize bytes;
// prefix holds at least the file's first min(fileSize, 8+MaxHeader) bytes.
// Errors do not name the file: the caller adds it.
func ParseHeader(prefix []byte, fileSize int64) (*Header, error) {
	if fileSize < 8 || len(prefix) < 8 {
		return nil, fmt.Errorf("truncated: %d bytes, but a safetensors file starts with an 8-byte header length", fileSize)
	}
	n := binary.LittleEndian.Uint64(prefix)
	if n > MaxHeader {
		return nil, fmt.Errorf("header length %d is absurd (the limit is %d)", n, MaxHeader)
	}
	if 8+int64(n) > fileSize || 8+int(n) > len(prefix) {
		return nil, fmt.Errorf("truncated: the header length %d needs %d bytes, the file has %d", n, 8+n, fileSize)
	}
	text := prefix[8 : 8+n]
	if len(text) == 0 || text[0] != '{' {
		return nil, fmt.Errorf("header is not a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := jsonstrict.Decode(text, &raw); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	h := &Header{DataAt: 8 + int64(n)}
	dataLen := fileSize - h.DataAt
	for _, name := range sortedKeys(raw) {
		if name == "__metadata__" {
			if err := jsonstrict.Decode(raw[name], &h.Metadata); err != nil {
				return nil, fmt.Errorf("header: __metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		info, err := parseInfo(name, raw[name], dataLen)
		if err != nil {
			return nil, err
		}
		h.Tensors = append(h.Tensors, info)
	}
	if err := checkLayout(h.Tensors, dataLen); err != nil {
		return nil, err
	}
	return h, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseInfo verifies one tensor entry on its own.
func parseInfo(name string, msg json.RawMessage, dataLen int64) (Info, error) {
	fail := func(format string, args ...any) (Info, error) {
		return Info{}, fmt.Errorf("tensor %q: %s", name, fmt.Sprintf(format, args...))
	}
	var r rawInfo
	if err := jsonstrict.Decode(msg, &r); err != nil {
		return fail("%v", err)
	}
	switch {
	case r.DType == nil:
		return fail("no dtype")
	case r.Shape == nil:
		return fail("no shape")
	case r.DataOffsets == nil:
		return fail("no data_offsets")
	}
	if len(*r.DataOffsets) != 2 {
		return fail("data_offsets has %d entries, want 2", len(*r.DataOffsets))
	}
	dt, ok := dtypes[*r.DType]
	if !ok {
		if unsupported[*r.DType] {
			return fail("dtype %s is not supported by tpucc", *r.DType)
		}
		return fail("unknown dtype %q", *r.DType)
	}
	if len(*r.Shape) > MaxRank {
		return fail("shape has %d dimensions, more than %d", len(*r.Shape), MaxRank)
	}
	info := Info{Name: name, DType: dt, Shape: make([]int64, len(*r.Shape))}
	count := int64(1)
	for i, d := range *r.Shape {
		v, ok := natural(d)
		if !ok {
			return fail("shape dimension %d is %s, not a non-negative integer", i, d)
		}
		info.Shape[i] = v
		if v != 0 && count > math.MaxInt64/8/v {
			return fail("shape %v has too many elements", info.Shape[:i+1])
		}
		count *= v
	}
	for i, d := range *r.DataOffsets {
		v, ok := natural(d)
		if !ok {
			return fail("data_offsets[%d] is %s, not a non-negative integer", i, d)
		}
		if i == 0 {
			info.Begin = v
		} else {
			info.End = v
		}
	}
	if info.End < info.Begin {
		return fail("data_offsets [%d, %d) end before they begin", info.Begin, info.End)
	}
	if info.End > dataLen {
		return fail("data_offsets [%d, %d) end past the data, which has %d bytes (truncated file?)", info.Begin, info.End, dataLen)
	}
	if want := count * int64(dt.Size()); info.End-info.Begin != want {
		return fail("data_offsets [%d, %d) hold %d bytes, but %s needs %d", info.Begin, info.End, info.End-info.Begin, info.Type(), want)
	}
	return info, nil
}

// natural parses a JSON number literal that is a non-negative int64 written
// without fraction or exponent (a string holding digits is not one).
func natural(raw json.RawMessage) (int64, bool) {
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	return v, err == nil
}

// checkLayout sorts tensors by offset and requires them to tile the data
// section exactly: an overlap would alias two weights, and a gap or a tail is
// bytes nobody accounts for.
func checkLayout(ts []Info, dataLen int64) error {
	slices.SortStableFunc(ts, func(a, b Info) int {
		if a.Begin != b.Begin {
			return cmp.Compare(a.Begin, b.Begin)
		}
		return cmp.Compare(a.End, b.End)
	})
	at, prev := int64(0), ""
	for _, t := range ts {
		switch {
		case t.Begin < at:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d) overlap tensor %q, which ends at %d", t.Name, t.Begin, t.End, prev, at)
		case t.Begin > at && prev == "":
			return fmt.Errorf("tensor %q: data_offsets [%d, %d) leave bytes [0, %d) unused", t.Name, t.Begin, t.End, t.Begin)
		case t.Begin > at:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d) leave bytes [%d, %d) after tensor %q unused", t.Name, t.Begin, t.End, at, t.Begin, prev)
		}
		if t.End > at || prev == "" {
			at, prev = t.End, t.Name
		}
	}
	if at != dataLen {
		return fmt.Errorf("%d bytes after the last tensor are unused", dataLen-at)
	}
	return nil
}
