package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// codecCorpus returns every examples/*.tir and every golden in.tir that
// parses, by name, each as parsed and (name+"@v6e") after passes.Default()
// for tpu-v6e, so fusions, layouts and copies are covered.
func codecCorpus(t testing.TB) (names []string, mods map[string]*ir.Module) {
	mods = map[string]*ir.Module{}
	add := func(name string, src []byte) {
		m, err := tir.Parse(name, src)
		if err != nil {
			return // goldens of parse errors
		}
		names = append(names, name)
		mods[name] = m
		m2, _ := tir.Parse(name, src)
		target, ok := target.Lookup("tpu-v6e")
		if !ok {
			t.Fatal("no tpu-v6e target")
		}
		if err := passes.Run(m2, passes.Default(), passes.Options{Eval: cpu.Folder{}, Target: target}); err != nil {
			return // goldens the pipeline refuses (memory limits and the like)
		}
		names = append(names, name+"@v6e")
		mods[name+"@v6e"] = m2
	}
	examples, _ := filepath.Glob("../examples/*.tir")
	for _, p := range examples {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(p, src)
	}
	var archives []string
	filepath.WalkDir("../testdata/golden", func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".txtar") {
			archives = append(archives, p)
		}
		return nil
	})
	for _, p := range archives {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name == "in.tir" {
				add(p, f.Data)
			}
		}
	}
	if len(examples) == 0 || len(names) < 100 {
		t.Fatalf("corpus too small: %d examples, %d modules", len(examples), len(names))
	}
	return names, mods
}

func TestCodecRoundTrip(t *testing.T) {
	names, mods := codecCorpus(t)
	fused := 0
	for _, name := range names {
		m := mods[name]
		want := ir.Print(m)
		if strings.Contains(want, "fusion") && strings.Contains(want, ":T(") {
			fused++
		}
		got, err := DecodeModule(EncodeModule(m))
		if err != nil {
			t.Errorf("%s: decode: %v", name, err)
			continue
		}
		if p := ir.Print(got); p != want {
			t.Errorf("%s: round trip differs:\n%s\nwant\n%s", name, p, want)
		}
		if got.File != m.File || got.Funcs[0].Pos != m.Funcs[0].Pos {
			t.Errorf("%s: positions: file %q pos %v, want %q %v", name, got.File, got.Funcs[0].Pos, m.File, m.Funcs[0].Pos)
		}
	}
	if fused == 0 {
		t.Error("no module of the corpus has a fusion with a tiled layout")
	}
	t.Logf("%d modules, %d with fusions and tiled layouts", len(names), fused)
}

func TestCodecRejectsDamage(t *testing.T) {
	src := "func @main(%x: f32[4,8]) -> f32[8] {\n  %s = reduce_sum %x {axes=[0]}\n  return %s\n}\n"
	m, err := tir.Parse("d.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	enc := EncodeModule(m)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a binary module"},
		{"truncated", enc[:len(enc)-1], "truncated"},
		{"trailing", append(append([]byte{}, enc...), 0), "1 bytes after the module"},
		{"bad op", []byte(strings.Replace(string(enc), "reduce_sum", "reduce_sux", 1)), `unknown op "reduce_sux"`},
		{"bad attribute", []byte(strings.Replace(string(enc), "axes", "axis", 1)), "bad attributes of reduce_sum: d.tir:2:3: error: reduce_sum requires attribute 'axes'\nd.tir:2:3: error: reduce_sum has no attribute 'axis'"},
	} {
		if _, err := DecodeModule(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	names, mods := codecCorpus(f)
	for i, name := range names {
		if i%8 == 0 || strings.Contains(name, "examples") {
			f.Add(EncodeModule(mods[name]))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeModule(data)
		if err != nil {
			return
		}
		// Whatever decodes is a verified module whose encoding is stable.
		if p := ir.Print(m); ir.Print(mustDecode(t, EncodeModule(m))) != p {
			t.Errorf("re-encoding changed the module:\n%s", p)
		}
	})
}

func mustDecode(t *testing.T, data []byte) *ir.Module {
	m, err := DecodeModule(data)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	return m
}

// TestEntryLoadsFromBinary checks that an entry carries its program's
// binary encoding, the same program as its text, and that a load uses it:
// with the bytes damaged (and the checksums fixed) the text alone is not
// enough.
func TestEntryLoadsFromBinary(t *testing.T) {
	dir := cacheDir(t)
	f, _ := fresh(t, dir)
	want := call(t, f, mlpProgram, mlpArgs(32, 1))
	path := entryFiles(t, dir)[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, payload, _ := bytes.Cut(data, []byte("\n\n"))
	var p entryPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	m, err := DecodeModule(p.IR)
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(m); got != p.TIR {
		t.Errorf("the binary program prints as\n%s\nwant the entry's text\n%s", got, p.TIR)
	}

	p.IR = p.IR[:len(p.IR)-1]
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsha256 %s\nbytes %d\n\n", entryMagic, hex.EncodeToString(sum[:]), len(raw))
	b.Write(raw)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g, warn := fresh(t, dir)
	if d := sameTensors(call(t, g, mlpProgram, mlpArgs(32, 1)), want); d != "" {
		t.Error(d)
	}
	prefix := "tpucc: warning: dropped corrupt cache entry " + path + " (its program does not decode: truncated); recompiling\n"
	if s := g.Stats(); s.Compiles != 1 || s.Corrupt != 1 || warn.String() != prefix {
		t.Errorf("stats %s, warning %q, want %q", s, warn, prefix)
	}
}
