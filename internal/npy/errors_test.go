package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// v1 builds a version 1.0 file around a header dict, padded as numpy pads, plus data.
func v1(dict string, data []byte) []byte {
	hlen := len(dict) + 1
	pad := 64 - (10+hlen)%64
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(hlen+pad))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)+"\n"...)
	return append(b, data...)
}

// v2 is v1 in format 2.0, whose 4-byte header length allows headers past 64 KiB.
func v2(dict string, data []byte) []byte {
	hlen := len(dict) + 1
	pad := 64 - (12+hlen)%64
	b := append([]byte("\x93NUMPY\x02\x00"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(hlen+pad))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)+"\n"...)
	return append(b, data...)
}

func TestReadErrors(t *testing.T) {
	const f32x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
	cases := []struct {
		name string
		file []byte
		err  string // what ReadFile says for x.npy
	}{
		{"empty", nil, "x.npy: empty file, not a .npy file"},
		{"bad magic", []byte("PK\x03\x04 a zip file"), "x.npy: not a .npy file (bad magic)"},
		{"short", []byte("\x93NUM"), "x.npy: truncated: 4 bytes, too short for a .npy file"},
		{"version 3", []byte("\x93NUMPY\x03\x00\x10\x00\x00\x00"), "x.npy: unsupported format version 3.0 (want 1.0 or 2.0)"},
		{"no header length", []byte("\x93NUMPY\x01\x00\x10"), "x.npy: truncated: file ends inside the header length"},
		{"short header", []byte("\x93NUMPY\x01\x00\x40\x00{'descr'"), "x.npy: truncated: header says it is 64 bytes, file has 8 after the prefix"},
		{"huge header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "x.npy: header length 4294967295 is over the limit of 1048576"},
		{"truncated data", v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", make([]byte, 16)),
			"x.npy: truncated: header says 24 bytes of data, file has 16"},
		{"trailing data", v1(f32x3, make([]byte, 13)), "x.npy: 1 bytes of trailing data after the array"},
		{"complex256", v1("{'descr': '<c32', 'fortran_order': False, 'shape': (3,), }", nil), `x.npy: unsupported dtype "<c32"`},
		{"object", v1("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", nil), `x.npy: unsupported dtype "|O"`},
		{"fortran", v1("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", make([]byte, 12)),
			"x.npy: fortran_order arrays are not supported (save np.ascontiguousarray(a) instead)"},
		{"missing shape", v1("{'descr': '<f4', 'fortran_order': False}", nil), "x.npy: bad header: missing key 'shape'"},
		{"extra key", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", nil), "x.npy: bad header: unexpected key 'x'"},
		{"twice", v1("{'descr': '<f4', 'descr': '<f4'}", nil), "x.npy: bad header: key 'descr' appears twice"},
		{"negative dim", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", nil),
			"x.npy: bad header: 'shape' is not a tuple of non-negative integers"},
		{"float dim", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", nil),
			`x.npy: bad header: value of 'shape': expected ',' or ')' at offset 52`},
		{"huge shape", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", nil),
			"x.npy: shape (4611686018427387904, 4) is too large"},
		{"not a dict", v1("[1, 2]", nil), "x.npy: bad header: does not start with '{'"},
		{"junk after", v1(f32x3+" junk", make([]byte, 12)), `x.npy: bad header: unexpected text after the dict: "junk"`},
		{"shape not tuple", v1("{'descr': '<f4', 'fortran_order': False, 'shape': 3}", nil), "x.npy: bad header: 'shape' is not a tuple"},
		{"fortran not bool", v1("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", nil), "x.npy: bad header: 'fortran_order' is not True or False"},
		{"unterminated", v1("{'descr: '<f4'}", nil), "x.npy: bad header: expected ':' after key 'descr: '"},
		{"deep", v2("{'descr': '<f4', 'fortran_order': False, 'shape': "+strings.Repeat("(", 100000)+strings.Repeat(")", 100000)+"}", nil),
			"x.npy: bad header: value of 'shape': nested deeper than 8 levels at offset 59"},
		{"rank", v2("{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Repeat("1,", 100000)+")}", make([]byte, 4)),
			"x.npy: bad header: 'shape' has 100000 dimensions, more than 64"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "x.npy")
			if err := os.WriteFile(path, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFile(path)
			want := strings.Replace(c.err, "x.npy", path, 1)
			if err == nil || err.Error() != want {
				t.Errorf("ReadFile:\n got %v\nwant %s", err, want)
			}
			// Read says the same, prefixed "npy:" (and, on a stream, cannot see trailing
			// data or the file's size).
			if c.name == "trailing data" || c.name == "short header" {
				return
			}
			_, err = Read(bytes.NewReader(c.file))
			want = strings.Replace(c.err, "x.npy", "npy", 1)
			if err == nil || err.Error() != want {
				t.Errorf("Read:\n got %v\nwant %s", err, want)
			}
		})
	}
}

func TestAccepted(t *testing.T) {
	cases := []struct {
		name, dict string
		data       []byte
		want       string
	}{
		{"double quotes, no spaces", `{"descr":"<i4","fortran_order":False,"shape":(1,)}`, make([]byte, 4), "i32[1]"},
		{"one-byte order char", "{'descr': '<i1', 'fortran_order': False, 'shape': (2,), }", make([]byte, 2), "i8[2]"},
		{"list shape", "{'descr': '|b1', 'fortran_order': False, 'shape': [2, 1], }", make([]byte, 2), "i1[2,1]"},
		{"python 2 long", "{'descr': '<u4', 'fortran_order': False, 'shape': (1L,), }", make([]byte, 4), "u32[1]"},
		{"bf16", "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (), }", make([]byte, 2), "bf16[]"},
	}
	for _, c := range cases {
		a, err := Read(bytes.NewReader(v1(c.dict, c.data)))
		if err != nil || a.String() != c.want {
			t.Errorf("%s: got %v, %v; want %s", c.name, a, err, c.want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	cases := []struct {
		a   *Array
		err string
	}{
		{nil, "npy: nil array"},
		{&Array{DType: "c256"}, `npy: unsupported dtype "c256"`},
		{&Array{DType: "f32", Shape: []int64{-1}}, "npy: negative dimension -1 in shape (-1,)"},
		{&Array{DType: "i1", Shape: []int64{2, 2}, Data: make([]byte, 3)}, "npy: i1[2,2] needs 4 bytes of data, has 3"},
	}
	for _, c := range cases {
		err := Write(&bytes.Buffer{}, c.a)
		if err == nil || err.Error() != c.err {
			t.Errorf("Write(%v):\n got %v\nwant %s", c.a, err, c.err)
		}
	}
}

// FuzzRead: Read never panics, and whatever it accepts it writes back and reads again to
// the same array.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"f32_2x3.npy", "bf16_scalar.npy", "i32_2x3_v2.npy", "bad_structured.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("Write of an array Read accepted: %v", err)
		}
		c, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read of what Write wrote: %v", err)
		}
		if c.String() != a.String() || !bytes.Equal(c.Data, a.Data) {
			t.Fatalf("round trip changed %s into %s", a, c)
		}
	})
}

// TestReadFileRefusesNonRegular: a directory, a FIFO without a writer and a
// link to /dev/zero are refused at once (none of them ends or is an array).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.npy")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.npy")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir, "read " + dir + ": is a directory"},
		{fifo, "read " + fifo + ": not a regular file"},
		{zero, "read " + zero + ": not a regular file"},
		{filepath.Join(dir, "none.npy"), "open " + filepath.Join(dir, "none.npy") + ": no such file or directory"},
	} {
		if _, err := ReadFile(c.path); err == nil || err.Error() != c.want {
			t.Errorf("ReadFile(%s): got %v, want %s", c.path, err, c.want)
		}
	}
}
