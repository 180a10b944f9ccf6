// Package npy reads and writes NumPy .npy files: the format in which tpucc exchanges tensors
// with the XLA oracle (tools/xlacheck), with `tpucc run`, and with anyone holding numpy.
//
// What is carried: little-endian, C-order arrays of the dtypes tpucc has, any rank (rank 0
// is a scalar). Read accepts format versions 1.0 and 2.0; Write produces exactly the bytes
// np.save would (version 1.0, header padded to 64 bytes), so files diff cleanly against
// numpy's. Fortran-order, big-endian, structured and object arrays are refused with an error.
//
//	tpucc dtype   .npy descr   numpy dtype
//	f32           '<f4'        float32
//	f16           '<f2'        float16
//	bf16          'bfloat16'   ml_dtypes.bfloat16 (see below)
//	f64           '<f8'        float64
//	i1            '|b1'        bool (one byte per element, 0 or 1)
//	i8            '|i1'        int8
//	i16           '<i2'        int16
//	i32           '<i4'        int32
//	i64           '<i8'        int64
//	u8            '|u1'        uint8
//	u32           '<u4'        uint32
//	c64           '<c8'        complex64 (real part, then imaginary, each an f32)
//	c128          '<c16'       complex128
//	u16           '<u2'        uint16
//	u64           '<u8'        uint64
//	i2, i4        'int2', 'int4'    ml_dtypes.int2, int4 (one byte per element, as bf16 below)
//	u2, u4        'uint2', 'uint4'  ml_dtypes.uint2, uint4 (one byte per element)
//	f8e4m3fn ...  'float8_e4m3fn' ... ml_dtypes' f8, f6 and f4 types under their own names
//	              (one byte per element, f6 and f4 in the low bits)
//
// # The bf16 convention
//
// numpy has no bfloat16. np.save of an ml_dtypes.bfloat16 array writes descr '<V2' (two
// opaque bytes), and np.load gives back a '|V2' void array: the dtype is lost, and '<V2'
// could be anything two bytes wide. So tpucc writes bf16 with descr 'bfloat16', the name
// ml_dtypes registers with numpy. Then
//
//	import ml_dtypes, numpy as np
//	a = np.load("x.npy")          # dtype bfloat16
//
// works as it stands, with the dtype intact; without the ml_dtypes import np.load refuses
// the file ("descr is not a valid dtype descriptor: 'bfloat16'") instead of handing back
// garbage. To write one from Python, use np.lib.format.write_array_header_1_0 with
// {'descr': 'bfloat16', ...} followed by a.tobytes() (tools/xlacheck/xlacheck.py's save_npy
// does this). Read refuses '<V2' with a message that says so. Data are the raw bf16 bit
// patterns, little-endian, two bytes per element.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Array is one tensor: its dtype (tpucc's name, e.g. "f32"), its shape, and its elements as
// raw little-endian bytes in C order. A bool (i1) element is one byte, 0 or 1.
type Array struct {
	DType string
	Shape []int64
	Data  []byte
}

type dtypeInfo struct {
	name  string
	descr string // what Write puts in the header
	size  int
}

var dtypes = []dtypeInfo{
	{"f32", "<f4", 4},
	{"f16", "<f2", 2},
	{"bf16", "bfloat16", 2},
	{"f64", "<f8", 8},
	{"i1", "|b1", 1},
	{"i8", "|i1", 1},
	{"i16", "<i2", 2},
	{"i32", "<i4", 4},
	{"i64", "<i8", 8},
	{"u8", "|u1", 1},
	{"u32", "<u4", 4},
	{"c64", "<c8", 8},
	{"c128", "<c16", 16},
	{"u16", "<u2", 2},
	{"u64", "<u8", 8},
	{"i2", "int2", 1},
	{"i4", "int4", 1},
	{"u2", "uint2", 1},
	{"u4", "uint4", 1},
	{"f8e4m3fn", "float8_e4m3fn", 1},
	{"f8e5m2", "float8_e5m2", 1},
	{"f8e4m3fnuz", "float8_e4m3fnuz", 1},
	{"f8e5m2fnuz", "float8_e5m2fnuz", 1},
	{"f8e4m3b11fnuz", "float8_e4m3b11fnuz", 1},
	{"f8e4m3", "float8_e4m3", 1},
	{"f8e3m4", "float8_e3m4", 1},
	{"f8e8m0fnu", "float8_e8m0fnu", 1},
	{"f6e2m3fn", "float6_e2m3fn", 1},
	{"f6e3m2fn", "float6_e3m2fn", 1},
	{"f4e2m1fn", "float4_e2m1fn", 1},
}

// DTypes lists the dtype names this package carries, in a fixed order.
func DTypes() []string {
	names := make([]string, len(dtypes))
	for i, d := range dtypes {
		names[i] = d.name
	}
	return names
}

// ItemSize is the size in bytes of one element of dtype, or 0 for a dtype this package
// does not carry.
func ItemSize(dtype string) int {
	if d, ok := byName(dtype); ok {
		return d.size
	}
	return 0
}

func byName(name string) (dtypeInfo, bool) {
	for _, d := range dtypes {
		if d.name == name {
			return d, true
		}
	}
	return dtypeInfo{}, false
}

// byDescr maps a header descr to a dtype. For one-byte types numpy writes '|', but the
// byte order character means nothing there, so '<', '>' and '=' are accepted too.
func byDescr(descr string) (dtypeInfo, error) {
	for _, d := range dtypes {
		if d.descr == descr {
			return d, nil
		}
		if d.size == 1 && len(descr) == 3 && strings.ContainsRune("<>=", rune(descr[0])) && descr[1:] == d.descr[1:] {
			return d, nil
		}
	}
	switch {
	case descr == "<V2" || descr == "|V2":
		return dtypeInfo{}, fmt.Errorf("unsupported dtype %q: np.save of an ml_dtypes.bfloat16 array writes this; tpucc's bf16 files use descr 'bfloat16' (see package npy)", descr)
	case strings.HasPrefix(descr, ">"):
		return dtypeInfo{}, fmt.Errorf("unsupported dtype %q: big-endian data (use a.astype(a.dtype.newbyteorder('<')))", descr)
	}
	return dtypeInfo{}, fmt.Errorf("unsupported dtype %q", descr)
}

// NumElements is the product of the shape (1 for a scalar).
func (a *Array) NumElements() int64 {
	n := int64(1)
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// String gives the type the way .tir writes it, e.g. "f32[2,3]".
func (a *Array) String() string {
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	return a.DType + "[" + strings.Join(dims, ",") + "]"
}

// dataSize is the byte size the shape implies, or an error if it does not fit an int64.
func dataSize(shape []int64, itemSize int) (int64, error) {
	n := int64(itemSize)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %s", d, shapeRepr(shape))
		}
		if d != 0 && n > (1<<62)/d {
			return 0, fmt.Errorf("shape %s is too large", shapeRepr(shape))
		}
		n *= d
	}
	return n, nil
}

var magic = []byte("\x93NUMPY")

// maxHeader bounds the header length a reader will allocate for; numpy's own default
// limit (max_header_size) is 10000.
const maxHeader = 1 << 20

// Read reads one array from r, consuming exactly its bytes, so that several arrays written
// one after the other can be read in turn.
func Read(r io.Reader) (*Array, error) {
	a, err := read(r, -1)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// ReadFile reads the .npy file at path. Errors name the file, and bytes after the array's
// data are an error.
//
// Only a regular file is read: a directory, a FIFO or a device (/dev/zero
// named x.npy) is refused before any byte is read, since reading one would
// block or never end.
func ReadFile(path string) (*Array, error) {
	b, err := readRegular(path)
	if err != nil {
		return nil, err
	}
	br := bytes.NewReader(b)
	a, err := read(br, int64(len(b)))
	if err == nil && br.Len() > 0 {
		err = fmt.Errorf("%d bytes of trailing data after the array", br.Len())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// readRegular reads path whole after checking, on the opened file, that it
// is a regular file (a check on the name alone could be raced).
func readRegular(path string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO without a writer would otherwise wait
	// forever; it changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	return io.ReadAll(io.LimitReader(f, fi.Size()+1))
}

// read parses one array. fileSize is the total size when known (for the truncation
// message), else -1.
func read(r io.Reader, fileSize int64) (*Array, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, errors.New("empty file, not a .npy file")
		}
		if !bytes.HasPrefix(magic, pre[:min(n, len(magic))]) {
			return nil, errors.New("not a .npy file (bad magic)")
		}
		return nil, fmt.Errorf("truncated: %d bytes, too short for a .npy file", n)
	}
	if !bytes.Equal(pre[:6], magic) {
		return nil, errors.New("not a .npy file (bad magic)")
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	var prefixLen int64
	switch {
	case major == 1 && minor == 0:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, errors.New("truncated: file ends inside the header length")
		}
		hlen, prefixLen = int64(binary.LittleEndian.Uint16(l[:])), 10
	case major == 2 && minor == 0:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, errors.New("truncated: file ends inside the header length")
		}
		hlen, prefixLen = int64(binary.LittleEndian.Uint32(l[:])), 12
	default:
		return nil, fmt.Errorf("unsupported format version %d.%d (want 1.0 or 2.0)", major, minor)
	}
	if hlen > maxHeader {
		return nil, fmt.Errorf("header length %d is over the limit of %d", hlen, maxHeader)
	}
	if fileSize >= 0 && prefixLen+hlen > fileSize {
		return nil, fmt.Errorf("truncated: header says it is %d bytes, file has %d after the prefix", hlen, fileSize-prefixLen)
	}
	hdr := make([]byte, hlen)
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated: header says it is %d bytes, file has %d after the prefix", hlen, n)
	}
	h, err := parseHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf("bad header: %w", err)
	}
	d, err := byDescr(h.descr)
	if err != nil {
		return nil, err
	}
	if h.fortran {
		return nil, errors.New("fortran_order arrays are not supported (save np.ascontiguousarray(a) instead)")
	}
	size, err := dataSize(h.shape, d.size)
	if err != nil {
		return nil, err
	}
	data, err := readData(r, size)
	if err != nil {
		return nil, err
	}
	return &Array{DType: d.name, Shape: h.shape, Data: data}, nil
}

// readData reads exactly n bytes without trusting n for the allocation: a hostile header
// can claim terabytes, so memory grows only as data arrive.
func readData(r io.Reader, n int64) ([]byte, error) {
	var b bytes.Buffer
	if n <= 1<<26 {
		b.Grow(int(n))
	}
	got, err := io.CopyN(&b, r, n)
	if err == io.EOF || (err == nil && got < n) {
		return nil, fmt.Errorf("truncated: header says %d bytes of data, file has %d", n, got)
	}
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write writes a as a .npy file, byte for byte what np.save writes for the same array
// (except bf16, whose descr is 'bfloat16'; see the package doc).
func Write(w io.Writer, a *Array) error {
	hdr, err := header(a)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err = w.Write(a.Data)
	return err
}

// WriteFile writes a to path through a temporary file in the same directory and a rename,
// so that path holds either the whole array or what it held before.
func WriteFile(path string, a *Array) (err error) {
	hdr, err := header(a)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(hdr); err != nil {
		return err
	}
	if _, err = f.Write(a.Data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// header checks a and renders the magic, version, length and header dict exactly as
// numpy's _write_array_header does: keys sorted, 21 spare spaces' worth of room for the
// first dimension to grow, then spaces and a newline to a multiple of 64 bytes.
func header(a *Array) ([]byte, error) {
	if a == nil {
		return nil, errors.New("nil array")
	}
	d, ok := byName(a.DType)
	if !ok {
		return nil, fmt.Errorf("unsupported dtype %q", a.DType)
	}
	size, err := dataSize(a.Shape, d.size)
	if err != nil {
		return nil, err
	}
	if int64(len(a.Data)) != size {
		return nil, fmt.Errorf("%s needs %d bytes of data, has %d", a, size, len(a.Data))
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", d.descr, shapeRepr(a.Shape))
	if len(a.Shape) > 0 {
		const growthAxisMaxDigits = 21
		dict += strings.Repeat(" ", max(0, growthAxisMaxDigits-len(strconv.FormatInt(a.Shape[0], 10))))
	}
	for _, v := range []struct {
		major    byte
		lenBytes int
		limit    int
	}{{1, 2, 1<<16 - 1}, {2, 4, 1<<32 - 1}} {
		prefix := len(magic) + 2 + v.lenBytes
		hlen := len(dict) + 1 // the final newline
		pad := 64 - (prefix+hlen)%64
		if hlen+pad > v.limit {
			continue
		}
		out := make([]byte, 0, prefix+hlen+pad)
		out = append(out, magic...)
		out = append(out, v.major, 0)
		if v.lenBytes == 2 {
			out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
		}
		out = append(out, dict...)
		out = append(out, strings.Repeat(" ", pad)...)
		return append(out, '\n'), nil
	}
	return nil, errors.New("header too large")
}

// shapeRepr is Python's repr of the shape tuple: (), (3,), (2, 3).
func shapeRepr(shape []int64) string {
	switch len(shape) {
	case 0:
		return "()"
	case 1:
		return "(" + strconv.FormatInt(shape[0], 10) + ",)"
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	return "(" + strings.Join(dims, ", ") + ")"
}
