package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// entryMagic starts every entry file; the number is the format's version
// (2: the program is loaded from its binary encoding, IR).
const entryMagic = "tpucc-cache-entry 2"

// maxEntryBytes is the hard cap on an entry's payload: a header that
// declares more is refused before anything is allocated.
const maxEntryBytes = 1 << 30

// maxHeaderBytes bounds the header (magic, checksum and length lines).
const maxHeaderBytes = 256

// entryPayload is what an entry file holds after its header.
//
// The program is there twice: as text (TIR), for people reading the
// directory, and as EncodeModule's bytes (IR), which load without parsing
// (parsing the text costs more than compiling a small program). The two
// must be the same program: a loaded entry's IR is decoded, printed and
// compared with TIR, so an edit of either is caught.
type entryPayload struct {
	Key   string `json:"key"`   // the full key text, which must match the lookup's
	Name  string `json:"name"`  // the function, for people reading the directory
	Entry string `json:"entry"` // the entry function of TIR
	TIR   string `json:"tir"`   // the optimised program, as ir.Print writes it
	IR    []byte `json:"ir"`    // the same program, as EncodeModule writes it
	HLO   string `json:"hlo"`   // its StableHLO text
	// Native is the backend's code for the program, when its executable
	// hands it back (backend.Persistable): its ID ("llvm-object
	// sha256:HEX ir-sha256:HEX") and bytes. A backend that compiles
	// expecting it (backend.ExpectingCompiler) checks both before using
	// them, so an edited or stale object is rebuilt, never loaded.
	Native     string `json:"native,omitempty"`
	NativeData []byte `json:"native_data,omitempty"`
}

// encodeEntry writes the header (magic, SHA-256 and length of the payload)
// and the payload.
func encodeEntry(k fullKey, name string, exe *Executable) ([]byte, error) {
	p := entryPayload{Key: k.text, Name: name, Entry: exe.Entry.Name,
		TIR: ir.Print(exe.Module), IR: EncodeModule(exe.Module), HLO: exe.HLO}
	if px, ok := exe.Exec.(backend.Persistable); ok {
		if code, ok := px.NativeCode(); ok {
			p.Native, p.NativeData = code.ID, code.Data
		}
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsha256 %s\nbytes %d\n\n", entryMagic, hex.EncodeToString(sum[:]), len(payload))
	b.Write(payload)
	return b.Bytes(), nil
}

// decodeEntry checks an entry file's contents as strictly as a fresh
// compile's result and returns its program. The checksum only proves that
// the file is whole: a file edited with its checksum recomputed (or written
// by a broken compiler) passes it, so the program itself is checked too:
// it decodes and verifies (DecodeModule), its text is the same program,
// its entry takes and returns exactly the types the call's trace (want)
// takes and returns (layouts aside: passes lay values out for the target),
// and it passes the target's checks.
func decodeEntry(data []byte, k fullKey, target string, want *ir.Func) (*Executable, error) {
	payload, err := checkEntry(data)
	if err != nil {
		return nil, err
	}
	var p entryPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("bad payload: %v", err)
	}
	if p.Key != k.text {
		return nil, fmt.Errorf("it holds another key")
	}
	m, err := DecodeModule(p.IR)
	if err != nil {
		return nil, fmt.Errorf("its program does not decode: %v", firstLine(err.Error()))
	}
	if ir.Print(m) != p.TIR {
		return nil, fmt.Errorf("its text and its binary program differ")
	}
	f := m.Func(p.Entry)
	if f == nil {
		return nil, fmt.Errorf("its program has no function @%s", p.Entry)
	}
	if err := sameSignature(f, want); err != nil {
		return nil, err
	}
	t, err := LookupTarget(target)
	if err != nil {
		return nil, err
	}
	if err := t.Check(m); err != nil {
		return nil, fmt.Errorf("its program fails the checks of %s: %v", target, firstLine(err.Error()))
	}
	exe := &Executable{Module: m, Entry: f, HLO: p.HLO, Target: t.Name()}
	if p.Native != "" {
		exe.native = &backend.NativeCode{ID: p.Native, Data: p.NativeData}
	}
	return exe, nil
}

// sameSignature reports how f's parameters or results differ from want's in
// number, dtype or shape.
func sameSignature(f, want *ir.Func) error {
	if len(f.Params) != len(want.Params) {
		return fmt.Errorf("its program takes %d arguments, want %d", len(f.Params), len(want.Params))
	}
	for i, v := range f.Params {
		if w := want.Params[i].Type; !sameDTypeAndShape(v.Type, w) {
			return fmt.Errorf("its program's argument %d is %s, want %s", i, v.Type, w)
		}
	}
	if len(f.Results) != len(want.Results) {
		return fmt.Errorf("its program returns %d results, want %d", len(f.Results), len(want.Results))
	}
	for i, t := range f.Results {
		if w := want.Results[i]; !sameDTypeAndShape(t, w) {
			return fmt.Errorf("its program's result %d is %s, want %s", i, t, w)
		}
	}
	return nil
}

func sameDTypeAndShape(t, u ir.Type) bool { return t.DType == u.DType && t.SameShape(u) }

// parseHeader reads an entry's header from the start of its file: it
// returns the payload's checksum and length and where the payload starts.
func parseHeader(data []byte) (sumHex string, n int64, start int, err error) {
	header, _, ok := bytes.Cut(data[:min(len(data), maxHeaderBytes)], []byte("\n\n"))
	if !ok {
		return "", 0, 0, fmt.Errorf("no header")
	}
	lines := strings.Split(string(header), "\n")
	if len(lines) != 3 || lines[0] != entryMagic {
		return "", 0, 0, fmt.Errorf("bad header")
	}
	sumHex, ok1 := strings.CutPrefix(lines[1], "sha256 ")
	nText, ok2 := strings.CutPrefix(lines[2], "bytes ")
	n, err = strconv.ParseInt(nText, 10, 64)
	if !ok1 || !ok2 || err != nil || n < 0 {
		return "", 0, 0, fmt.Errorf("bad header")
	}
	if n > maxEntryBytes {
		return "", 0, 0, fmt.Errorf("it declares %d bytes, more than the cap of %d", n, maxEntryBytes)
	}
	return sumHex, n, len(header) + 2, nil
}

// checkEntry verifies the header, length and checksum and returns the payload.
func checkEntry(data []byte) ([]byte, error) {
	sumHex, n, start, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	payload := data[start:]
	if int64(len(payload)) != n {
		if int64(len(payload)) < n {
			return nil, fmt.Errorf("truncated: %d of %d bytes", len(payload), n)
		}
		return nil, fmt.Errorf("%d bytes, want %d", len(payload), n)
	}
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(sum[:]) != sumHex {
		return nil, fmt.Errorf("checksum mismatch")
	}
	return payload, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
