package compile_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// TestNewAfterFuncSaysItFoundThePrograms: a second function over the same
// Go function finds the first one's programs in the cache's memory. It
// compiles nothing, so it logs no recompile, and Explain says what
// happened.
func TestNewAfterFuncSaysItFoundThePrograms(t *testing.T) {
	w1, b1, w2 := weights()
	shared := compile.Cache(engine.NewCache("", engine.CacheOptions{}))
	var flog, clog bytes.Buffer
	fast := compile.Func(mlp, shared, compile.Log(&flog))
	c, err := compile.New(mlp, shared, compile.Log(&clog))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{32, 48, 64, 33} {
		fast(tensor.Random(b, ir.F32, b, 8), w1, b1, w2)
	}
	for _, b := range []int64{32, 48, 64, 33} {
		x := tensor.Random(b, ir.F32, b, 8)
		got, err := c.Call(x, w1, b1, w2)
		if err != nil {
			t.Fatal(err)
		}
		if d := agree(got[0], mlp(x, w1, b1, w2)); d != "" {
			t.Fatalf("batch %d: %s", b, d)
		}
	}
	if want := "recompiling " + mlpAt(t) + ": arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64\n"; flog.String() != want {
		t.Errorf("Func's log:\n%s\nwant:\n%s", &flog, want)
	}
	if clog.String() != "" {
		t.Errorf("New's log (it compiled nothing):\n%s", &clog)
	}
	weightsSig := ", f32[8,16], f32[16], f32[16,4]"
	want := []string{
		"found " + mlpAt(t) + " for f32[32,8]" + weightsSig + " in the cache's memory",
		"found " + mlpAt(t) + " for f32[64,8]" + weightsSig + " in the cache's memory: arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64",
		mlpAt(t) + ": f32[48,8]" + weightsSig + " runs in bucket f32[64,8]" + weightsSig,
		mlpAt(t) + ": f32[33,8]" + weightsSig + " runs in bucket f32[64,8]" + weightsSig,
	}
	if got := c.Explain(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("explain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := c.Stats(); s.Compiles != 0 || s.MemoryHits != 2 || s.Hits != 4 || s.Misses != 0 {
		t.Errorf("stats: %s", s)
	}
}

// TestTamperedEntriesNeverPanic: an entry whose program returns another
// number of results than the function, with its checksum made valid, used
// to panic in the call (an index out of range for two results, in
// reflect.MakeFunc for none). It is dropped with a warning and recompiled.
func TestTamperedEntriesNeverPanic(t *testing.T) {
	w1, b1, w2 := weights()
	x := tensor.Random(7, ir.F32, 4, 8)
	want := mlp(x, w1, b1, w2)
	for _, tc := range []struct{ name, results, ret, why string }{
		{"two results", "(T, T)", "return V, V", "its program returns 2 results, want 1"},
		{"no results", "()", "return", "its program returns 0 results, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := cacheDir(t)
			first := compile.Func(mlp, compile.Cache(engine.NewCache(dir, engine.CacheOptions{})))
			first(x, w1, b1, w2)
			paths, _ := filepath.Glob(filepath.Join(dir, "*.tpucc"))
			if len(paths) != 1 {
				t.Fatalf("entries: %v", paths)
			}
			tamper(t, paths[0], tc.results, tc.ret)
			var warn bytes.Buffer
			again := compile.Func(mlp, compile.Cache(engine.NewCache(dir, engine.CacheOptions{Warn: &warn})))
			if d := agree(again(x, w1, b1, w2), want); d != "" {
				t.Error(d)
			}
			w := fmt.Sprintf("tpucc: warning: dropped corrupt cache entry %s (%s); recompiling\n", paths[0], tc.why)
			if warn.String() != w {
				t.Errorf("warning:\n%q\nwant\n%q", &warn, w)
			}
		})
	}
}

// tamper rewrites the entry's program (text and binary alike) so that its
// entry returns results (T stands for the returned value's type) by ret (V
// for its name), and gives the file a valid checksum.
func tamper(t *testing.T, path, results, ret string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, payload, _ := bytes.Cut(data, []byte("\n\n"))
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	text := p["tir"].(string)
	sig := regexp.MustCompile(`\) -> (\S+) \{\n`).FindStringSubmatch(text)
	end := regexp.MustCompile(`\n  return (%\S+)\n\}\n$`).FindStringSubmatch(text)
	if sig == nil || end == nil {
		t.Fatalf("unexpected program:\n%s", text)
	}
	text = strings.Replace(text, ") -> "+sig[1]+" {", ") -> "+strings.ReplaceAll(results, "T", sig[1])+" {", 1)
	text = strings.TrimSuffix(text, end[0]) + "\n  " + strings.ReplaceAll(ret, "V", end[1]) + "\n}\n"
	m, err := tir.Parse("tampered.tir", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	p["tir"], p["ir"] = ir.Print(m), engine.EncodeModule(m)
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	out := fmt.Appendf(nil, "tpucc-cache-entry 2\nsha256 %s\nbytes %d\n\n", hex.EncodeToString(sum[:]), len(raw))
	if err := os.WriteFile(path, append(out, raw...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// cacheDir is a new directory for a persistent cache. t.TempDir's are made
// with os.Mkdir(0777) under the umask (0755 as a rule), which the cache
// refuses as open to others; a user's cache is created 0700.
func cacheDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
