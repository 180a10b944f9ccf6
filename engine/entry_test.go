package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeEntry feeds the entry loader payloads under a valid header (a
// checksum is no defence against an edit that recomputes it), and raw
// files: whatever it accepts has the call's signature, and nothing panics.
func FuzzDecodeEntry(f *testing.F) {
	dir := cacheDir(f)
	fn, _, _ := newFunc(&testing.T{}, mlpProgram, Options{Cache: NewCache(dir, CacheOptions{})})
	if _, err := fn.Call(mlpArgs(32, 1)); err != nil {
		f.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.tpucc"))
	data, err := os.ReadFile(paths[0])
	if err != nil {
		f.Fatal(err)
	}
	_, payload, _ := bytes.Cut(data, []byte("\n\n"))
	var p entryPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		f.Fatal(err)
	}
	key := fullKey{text: p.Key, hash: "h"}
	traced, err := mlpProgram.Trace(mlpArgs(32, 1))
	if err != nil {
		f.Fatal(err)
	}
	want := traced.Entry()
	f.Add(payload, false)
	f.Add(data, true)
	file := filepath.Join(dir, "fuzz.tpucc")
	f.Fuzz(func(t *testing.T, in []byte, raw bool) {
		if !raw {
			sum := sha256.Sum256(in)
			in = append(fmt.Appendf(nil, "%s\nsha256 %s\nbytes %d\n\n", entryMagic, hex.EncodeToString(sum[:]), len(in)), in...)
		}
		if err := os.WriteFile(file, in, 0o600); err != nil {
			t.Fatal(err)
		}
		exe, err := readEntry(file, key, "tpu-v5e", want)
		if err != nil {
			return
		}
		if err := sameSignature(exe.Entry, want); err != nil {
			t.Errorf("accepted an entry of another signature: %v", err)
		}
	})
}
