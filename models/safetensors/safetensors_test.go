package safetensors

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// buf makes a buffer of type t whose bytes count up from first.
func buf(t *testing.T, typ ir.Type, first byte) *backend.Buffer {
	t.Helper()
	b := backend.New(typ)
	for i := range b.Bytes() {
		b.Bytes()[i] = first + byte(i)
	}
	return b
}

// raw is a file with the given header text and data bytes.
func raw(header string, data []byte) []byte {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
	return append(append(n[:], header...), data...)
}

func writeRaw(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tensors := []Named{
		{"b.weight", buf(t, ir.Tensor(ir.BF16, 2, 3), 10)},
		{"a.weight", buf(t, ir.Tensor(ir.F32, 4), 100)},
		{"c.half", buf(t, ir.Tensor(ir.F16, 1, 1, 2), 200)},
		{"d.ids", buf(t, ir.Tensor(ir.I64, 0, 5), 0)},
		{"e.scalar", buf(t, ir.Scalar(ir.I32), 7)},
		{"f.u16", buf(t, ir.Tensor(ir.U16, 6), 250)}, // 12 bytes: the u64 after it starts 8-aligned
		{"g.u64", buf(t, ir.Tensor(ir.U64, 2), 240)},
	}
	p := filepath.Join(dir, "m.safetensors")
	if err := WriteFile(p, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := strings.Join(f.Names(), " "), "b.weight a.weight c.half d.ids e.scalar f.u16 g.u64"; got != want {
		t.Errorf("Names() = %q, want %q (file order)", got, want)
	}
	if got := f.Metadata()["format"]; got != "pt" {
		t.Errorf("metadata format = %q, want pt", got)
	}
	if f.header.DataAt%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", f.header.DataAt)
	}
	for _, want := range tensors {
		got, err := f.Tensor(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Type().Equal(want.Buf.Type()) || !bytes.Equal(got.Bytes(), want.Buf.Bytes()) {
			t.Errorf("%s: got %s % x, want %s % x", want.Name, got.Type(), got.Bytes(), want.Buf.Type(), want.Buf.Bytes())
		}
	}
}

// The tensors are views of the mapping, not copies.
func TestZeroCopy(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteFile(p, []Named{{"x", buf(t, ir.Tensor(ir.F32, 8), 0)}, {"y", buf(t, ir.Tensor(ir.F32, 8), 0)}}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, _ := f.Tensor("x")
	y, _ := f.Tensor("y")
	if &x.Bytes()[0] != &f.data[f.header.DataAt] || &y.Bytes()[0] != &f.data[f.header.DataAt+32] {
		t.Errorf("tensors are not views of the mapped file")
	}
}

// Every way a header can be wrong, with the exact error.
func TestHeaderErrors(t *testing.T) {
	f32x2 := make([]byte, 8)
	cases := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty", nil, "truncated: 0 bytes, but a safetensors file starts with an 8-byte header length"},
		{"short", []byte{1, 2, 3}, "truncated: 3 bytes, but a safetensors file starts with an 8-byte header length"},
		{"absurd", []byte{0, 0, 0, 0, 0, 0, 0, 1}, "header length 72057594037927936 is absurd (the limit is 104857600)"},
		{"truncated header", raw(`{"x":{}}`, nil)[:12], "truncated: the header length 8 needs 16 bytes, the file has 12"},
		{"not object", raw(`[1,2,3]`, nil), "header is not a JSON object"},
		{"invalid json", raw(`{"x":`, nil), "header: invalid JSON: unexpected end"},
		{"trailing json", raw(`{} {}`, nil), "header: invalid JSON: data after the top-level value"},
		{"not utf8", raw("{\"x\xff\":1}", nil), "header: not valid UTF-8 at byte 3"},
		{"deep metadata", raw(`{"__metadata__":{"a":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}}`, nil),
			"header: invalid JSON: nested deeper than 64 levels at byte 83"},
		{"rank", raw(`{"x":{"dtype":"F32","shape":[`+strings.TrimSuffix(strings.Repeat("1,", 100000), ",")+`],"data_offsets":[0,4]}}`, make([]byte, 4)),
			`tensor "x": shape has 100000 dimensions, more than 64`},
		{"duplicate", raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32x2),
			`header: duplicate key "x" in the object at $`},
		{"duplicate field", raw(`{"x":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}}`, f32x2),
			`header: duplicate key "dtype" in the object at $.x`},
		{"unknown dtype", raw(`{"x":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}`, f32x2), `tensor "x": unknown dtype "F33"`},
		{"unsupported dtype", raw(`{"x":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}`, f32x2), `tensor "x": dtype F8_E4M3 is not supported by tpucc`},
		{"no dtype", raw(`{"x":{"shape":[2],"data_offsets":[0,8]}}`, f32x2), `tensor "x": no dtype`},
		{"no shape", raw(`{"x":{"dtype":"F32","data_offsets":[0,8]}}`, f32x2), `tensor "x": no shape`},
		{"no offsets", raw(`{"x":{"dtype":"F32","shape":[2]}}`, f32x2), `tensor "x": no data_offsets`},
		{"unknown field", raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"stride":[1]}}`, f32x2), `tensor "x": unknown field "stride"`},
		{"dtype type", raw(`{"x":{"dtype":5,"shape":[2],"data_offsets":[0,8]}}`, f32x2), `tensor "x": dtype: a JSON number where a string is expected`},
		{"negative dim", raw(`{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, f32x2), `tensor "x": shape dimension 0 is -2, not a non-negative integer`},
		{"string dim", raw(`{"x":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`, f32x2), `tensor "x": shape dimension 0 is "2", not a non-negative integer`},
		{"fraction dim", raw(`{"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, f32x2), `tensor "x": shape dimension 0 is 2.0, not a non-negative integer`},
		{"huge shape", raw(`{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, f32x2), `tensor "x": shape [4294967296 4294967296] has too many elements`},
		{"three offsets", raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}`, f32x2), `tensor "x": data_offsets has 3 entries, want 2`},
		{"reversed", raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`, f32x2), `tensor "x": data_offsets [8, 0) end before they begin`},
		{"past end", raw(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, f32x2), `tensor "x": data_offsets [0, 16) end past the data, which has 8 bytes (truncated file?)`},
		{"size mismatch", raw(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, f32x2), `tensor "x": data_offsets [0, 8) hold 8 bytes, but f32[3] needs 12`},
		{"overlap", raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32x2),
			`tensor "y": data_offsets [4, 8) overlap tensor "x", which ends at 8`},
		{"gap", raw(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F16","shape":[1],"data_offsets":[6,8]}}`, f32x2),
			`tensor "y": data_offsets [6, 8) leave bytes [4, 6) after tensor "x" unused`},
		{"leading gap", raw(`{"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32x2), `tensor "y": data_offsets [4, 8) leave bytes [0, 4) unused`},
		{"tail", raw(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32x2), `4 bytes after the last tensor are unused`},
		{"metadata", raw(`{"__metadata__":{"a":1}}`, nil), `header: __metadata__ must map strings to strings: a JSON number where a string is expected`},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := writeRaw(t, dir, strings.ReplaceAll(c.name, " ", "_")+".safetensors", c.content)
		f, err := OpenFile(p)
		if err == nil {
			f.Close()
			t.Errorf("%s: no error, want %q", c.name, c.want)
			continue
		}
		if want := p + ": " + c.want; err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, err, want)
		}
	}
}

func TestBoolMustBeZeroOrOne(t *testing.T) {
	p := writeRaw(t, t.TempDir(), "b.safetensors", raw(`{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}     `, []byte{1, 0, 2}))
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Tensor("m")
	if want := p + `: tensor "m": BOOL element 2 is the byte 2, not 0 or 1`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := f.Tensor("z"); err == nil || err.Error() != p+`: no tensor "z"` {
		t.Errorf("missing tensor: got %v", err)
	}
}

func TestOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFile(dir); err == nil || err.Error() != dir+": not a regular file (d---------)" {
		t.Errorf("directory: got %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if _, err := OpenFile(fifo); err == nil || err.Error() != fifo+": not a regular file (p---------)" {
		t.Errorf("fifo: got %v", err)
	}
}
