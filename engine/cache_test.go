package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// entryFiles lists the cache entries in dir.
func entryFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tpucc"))
	if err != nil {
		t.Fatal(err)
	}
	return files
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

// entryFile is the entry in dir whose key's signature starts with sig.
func entryFile(t *testing.T, dir, sig string) string {
	t.Helper()
	for _, path := range entryFiles(t, dir) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`\nsignature `+sig)) {
			return path
		}
	}
	t.Fatalf("no entry for %s in %s", sig, dir)
	return ""
}

// fresh is a Function on a new Cache object over dir: what a restarted
// process sees.
func fresh(t *testing.T, dir string) (*Function, *syncBuffer) {
	t.Helper()
	warn := &syncBuffer{}
	f, _, _ := newFunc(t, mlpProgram, Options{Cache: NewCache(dir, CacheOptions{Warn: warn})})
	return f, warn
}

func TestRestartCompilesNothing(t *testing.T) {
	dir := cacheDir(t)
	f, _ := fresh(t, dir)
	call(t, f, mlpProgram, mlpArgs(32, 1))
	call(t, f, mlpProgram, mlpArgs(48, 2))
	if s := f.Stats(); s.Compiles != 2 || len(entryFiles(t, dir)) != 2 {
		t.Fatalf("first process: %s, files %v", s, entryFiles(t, dir))
	}
	g, warn := fresh(t, dir)
	call(t, g, mlpProgram, mlpArgs(32, 3))
	call(t, g, mlpProgram, mlpArgs(48, 4))
	call(t, g, mlpProgram, mlpArgs(33, 5))
	s := g.Stats()
	if s.Compiles != 0 || s.DiskHits != 2 || s.Hits != 3 || s.Misses != 0 || warn.String() != "" {
		t.Errorf("restarted: %s, warnings %q", s, warn)
	}
	e := g.Explain()
	wantExplain := []string{
		"loaded mlp (main.go:12) for f32[32,4], f32[4,3], f32[3] from the persistent cache " + entryFile(t, dir, "f32[32,4]"),
		"loaded mlp (main.go:12) for f32[64,4], f32[4,3], f32[3] from the persistent cache " + entryFile(t, dir, "f32[64,4]") +
			": arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64",
		"mlp (main.go:12): f32[48,4], f32[4,3], f32[3] runs in bucket f32[64,4], f32[4,3], f32[3]",
		"mlp (main.go:12): f32[33,4], f32[4,3], f32[3] runs in bucket f32[64,4], f32[4,3], f32[3]",
	}
	if strings.Join(e, "\n") != strings.Join(wantExplain, "\n") {
		t.Errorf("explain:\n%s\nwant:\n%s", strings.Join(e, "\n"), strings.Join(wantExplain, "\n"))
	}
}

func TestCorruptEntriesAreDropped(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		damage    func([]byte) []byte
	}{
		{"flipped byte", "checksum mismatch", func(b []byte) []byte {
			b[len(b)-10] ^= 0x20
			return b
		}},
		{"truncated", "truncated: ", func(b []byte) []byte { return b[:len(b)*2/3] }},
		{"longer", "1 bytes, want 0", func(b []byte) []byte { return []byte(entryMagic + "\nsha256 00\nbytes 0\n\nx") }},
		{"empty", "no header", func(b []byte) []byte { return nil }},
		{"bad header", "bad header", func(b []byte) []byte { return append([]byte("tpucc-cache-entry 9"), b[19:]...) }},
		{"huge", "it declares 1099511627776 bytes, more than the cap of 1073741824", func(b []byte) []byte {
			return []byte(entryMagic + "\nsha256 00\nbytes 1099511627776\n\n")
		}},
		{"other key", "it holds another key", func(b []byte) []byte { return rewrite(t, b, keyEdit("version ", "version x")) }},
		// Edits made by hand with the checksum recomputed: the text and the
		// binary program must agree, whichever was changed.
		{"text edited", "its text and its binary program differ", func(b []byte) []byte {
			return rewrite(t, b, textEdit("relu %s", "abs %s"))
		}},
		{"binary edited", "its text and its binary program differ", func(b []byte) []byte {
			return rewrite(t, b, binaryEdit(t, "relu %s", "abs %s"))
		}},
		{"binary undecodable", "its program does not decode: truncated", func(b []byte) []byte {
			return rewrite(t, b, func(p *entryPayload) { p.IR = p.IR[:len(p.IR)-1] })
		}},
		// Consistent edits that change the program's signature.
		{"other parameters", "its program's argument 0 is f32[33,4], want f32[32,4]", func(b []byte) []byte {
			return rewrite(t, b, programEdit(t, "[32,", "[33,"))
		}},
		{"other result type", "its program's result 0 is f16[32,3], want f32[32,3]", func(b []byte) []byte {
			return rewrite(t, b, programEdit(t, "-> f32[32,3] {", "-> f16[32,3] {", "  return %r\n}", "  %c = convert %r : f16[32,3]\n  return %c\n}"))
		}},
		{"two results", "its program returns 2 results, want 1", func(b []byte) []byte {
			return rewrite(t, b, programEdit(t, "-> f32[32,3] {", "-> (f32[32,3], f32[32,3]) {", "  return %r\n}", "  return %r, %r\n}"))
		}},
		{"no results", "its program returns 0 results, want 1", func(b []byte) []byte {
			return rewrite(t, b, programEdit(t, "-> f32[32,3] {", "-> () {", "  return %r\n}", "  return\n}"))
		}},
		{"unverified program", "its program does not decode: invalid module: ", func(b []byte) []byte {
			return rewrite(t, b, func(p *entryPayload) {
				m := mustDecode(t, p.IR)
				// The fusion's result no longer matches its body or the return.
				m.Funcs[0].Body.Instrs[0].Results[0].Type = f32(32, 5)
				p.TIR, p.IR = ir.Print(m), EncodeModule(m)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := cacheDir(t)
			f, _ := fresh(t, dir)
			want := call(t, f, mlpProgram, mlpArgs(32, 1))
			path := entryFiles(t, dir)[0]
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			g, warn := fresh(t, dir)
			got := call(t, g, mlpProgram, mlpArgs(32, 1))
			if d := sameTensors(got, want); d != "" {
				t.Error(d)
			}
			call(t, g, mlpProgram, mlpArgs(32, 2))
			s := g.Stats()
			if s.Compiles != 1 || s.Corrupt != 1 || s.DiskHits != 0 {
				t.Errorf("stats: %s", s)
			}
			prefix := "tpucc: warning: dropped corrupt cache entry " + path + " (" + tc.why
			if w := warn.String(); !strings.HasPrefix(w, prefix) || !strings.HasSuffix(w, "); recompiling\n") || strings.Count(w, "\n") != 1 {
				t.Errorf("warning:\n%s\nwant prefix:\n%s", w, prefix)
			}
			// The recompile rewrote the entry: the next process loads it.
			h, warn2 := fresh(t, dir)
			call(t, h, mlpProgram, mlpArgs(32, 3))
			if s := h.Stats(); s.Compiles != 0 || s.DiskHits != 1 || warn2.String() != "" {
				t.Errorf("after repair: %s %q", s, warn2)
			}
		})
	}
}

// rewrite applies edits to an entry's payload and gives it a valid header,
// so that only the deeper checks can catch them.
func rewrite(t *testing.T, data []byte, edits ...func(*entryPayload)) []byte {
	t.Helper()
	_, payload, _ := bytes.Cut(data, []byte("\n\n"))
	var p entryPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		e(&p)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sum := sha256.Sum256(raw)
	fmt.Fprintf(&b, "%s\nsha256 %s\nbytes %d\n\n", entryMagic, hex.EncodeToString(sum[:]), len(raw))
	b.Write(raw)
	return b.Bytes()
}

func keyEdit(old, new string) func(*entryPayload) {
	return func(p *entryPayload) { p.Key = strings.Replace(p.Key, old, new, 1) }
}

// textEdit changes the program's text only.
func textEdit(old, new string) func(*entryPayload) {
	return func(p *entryPayload) { p.TIR = strings.ReplaceAll(p.TIR, old, new) }
}

// binaryEdit changes the binary program only.
func binaryEdit(t *testing.T, old, new string) func(*entryPayload) {
	return func(p *entryPayload) { p.IR = EncodeModule(parsed(t, strings.ReplaceAll(p.TIR, old, new))) }
}

// programEdit changes the text and the binary program alike (pairs of old
// and new strings).
func programEdit(t *testing.T, pairs ...string) func(*entryPayload) {
	return func(p *entryPayload) {
		text := p.TIR
		for i := 0; i < len(pairs); i += 2 {
			text = strings.ReplaceAll(text, pairs[i], pairs[i+1])
		}
		m := parsed(t, text)
		p.TIR, p.IR = ir.Print(m), EncodeModule(m)
	}
}

func parsed(t *testing.T, text string) *ir.Module {
	t.Helper()
	m, err := tir.Parse("edited.tir", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m
}

func TestConcurrentProcessesShareTheDirectory(t *testing.T) {
	// Eight "processes" (each its own Cache object) compile and write the
	// same entries at once; every one gets correct results and the
	// directory ends with one complete entry per program.
	dir := cacheDir(t)
	var wg sync.WaitGroup
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, warn := fresh(t, dir)
			for _, b := range []int64{4, 8, 16} {
				args := mlpArgs(b, int64(p))
				got, err := f.Call(args)
				if err != nil {
					t.Error(err)
					return
				}
				want, _ := mlpProgram.Eager(args)
				if d := sameTensors(got, want); d != "" {
					t.Error(d)
				}
			}
			if warn.String() != "" {
				t.Errorf("warning: %s", warn)
			}
		}()
	}
	wg.Wait()
	files := entryFiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("files: %v", files)
	}
	g, _ := fresh(t, dir)
	for _, b := range []int64{4, 8, 16} {
		call(t, g, mlpProgram, mlpArgs(b, 9))
	}
	if s := g.Stats(); s.Compiles != 0 || s.DiskHits != 3 {
		t.Errorf("stats: %s", s)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestEvictionKeepsTheDirectoryUnderItsCap(t *testing.T) {
	dir := cacheDir(t)
	c := NewCache(dir, CacheOptions{MaxBytes: 1})
	f, _, _ := newFunc(t, mlpProgram, Options{Cache: c, NoAutoDynamic: true})
	for _, b := range []int64{1, 2, 3} {
		call(t, f, mlpProgram, mlpArgs(b, b))
	}
	// Each write evicts every older entry: the cap is below one entry.
	if files := entryFiles(t, dir); len(files) != 1 || c.Stats().Evictions != 2 || f.Stats().Evictions != 2 {
		t.Errorf("files %v, cache %+v, function %s", files, c.Stats(), f.Stats())
	}
}

func TestMemoryOnlyCacheSharesPrograms(t *testing.T) {
	c := NewCache("", CacheOptions{})
	f, _, _ := newFunc(t, mlpProgram, Options{Cache: c})
	g, _, _ := newFunc(t, mlpProgram, Options{Cache: c})
	call(t, f, mlpProgram, mlpArgs(8, 1))
	call(t, g, mlpProgram, mlpArgs(8, 2))
	if s := g.Stats(); s.Compiles != 0 || s.MemoryHits != 1 || s.Hits != 1 {
		t.Errorf("stats: %s", s)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("TPUCC_CACHE_DIR", "")
	os.Unsetenv("TPUCC_CACHE_DIR")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	if d := DefaultDir(); d != "/xdg/tpucc" {
		t.Errorf("XDG: %s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	if d := DefaultDir(); d != "/home/u/.cache/tpucc" {
		t.Errorf("home: %s", d)
	}
	t.Setenv("TPUCC_CACHE_DIR", "/elsewhere")
	if d := DefaultDir(); d != "/elsewhere" {
		t.Errorf("TPUCC_CACHE_DIR: %s", d)
	}
	t.Setenv("TPUCC_CACHE_DIR", "off")
	if d := DefaultDir(); d != "" {
		t.Errorf("off: %q", d)
	}
}

// TestSecondProcess runs this test binary twice as a child process on one
// cache directory: the first compiles, the second only loads.
func TestSecondProcess(t *testing.T) {
	if dir := os.Getenv("TPUCC_TEST_CHILD_CACHE"); dir != "" {
		f, _, warn := newFunc(t, mlpProgram, Options{Cache: NewCache(dir, CacheOptions{})})
		call(t, f, mlpProgram, mlpArgs(32, 1))
		call(t, f, mlpProgram, mlpArgs(48, 1))
		s := f.Stats()
		fmt.Printf("child: compiles=%d disk-hits=%d warnings=%q\n", s.Compiles, s.DiskHits, warn.String())
		return
	}
	dir := cacheDir(t)
	var outs []string
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSecondProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TPUCC_TEST_CHILD_CACHE="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "child: ") {
				outs = append(outs, line)
			}
		}
	}
	want := []string{`child: compiles=2 disk-hits=0 warnings=""`, `child: compiles=0 disk-hits=2 warnings=""`}
	if strings.Join(outs, "\n") != strings.Join(want, "\n") {
		t.Errorf("children:\n%s\nwant:\n%s", strings.Join(outs, "\n"), strings.Join(want, "\n"))
	}
}

func TestTPUTargetRoundTrip(t *testing.T) {
	// assign-layout gives a TPU target's program tiled layouts: they must
	// survive the persistent entry, and callers get plain types.
	dir := cacheDir(t)
	for i, want := range []string{"compiles=1 disk-hits=0", "compiles=0 disk-hits=1"} {
		f, _, _ := newFunc(t, mlpProgram, Options{Target: "tpu-v5e", Cache: NewCache(dir, CacheOptions{})})
		got := call(t, f, mlpProgram, mlpArgs(8, int64(i)))
		s := f.Stats()
		if fmt.Sprintf("compiles=%d disk-hits=%d", s.Compiles, s.DiskHits) != want || got[0].Type().Layout != nil {
			t.Errorf("process %d: %s, result %s", i, s, got[0].Type())
		}
	}
	data, err := os.ReadFile(entryFiles(t, dir)[0])
	if err != nil || !bytes.Contains(data, []byte(":T(8,128)}")) {
		t.Errorf("the entry holds no tiled layout (%v)", err)
	}
}
