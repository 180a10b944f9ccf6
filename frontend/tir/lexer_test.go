package tir

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"golang.org/x/tools/txtar"
)

// regexpLexer is the participle regexp lexer that tirLexer replaced, kept as
// the reference the hand-written one must match token for token.
var regexpLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `//[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Arrow", Pattern: `->`},
	{Name: "Number", Pattern: `-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?`},
	{Name: "Value", Pattern: `%(?:[A-Za-z_][A-Za-z0-9_.]*|[0-9]+)`},
	{Name: "Global", Pattern: `@[A-Za-z_][A-Za-z0-9_.]*`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "String", Pattern: `"(?:[^"\\\n]|\\.)*"`},
	{Name: "Punct", Pattern: `[-{}\[\](),:=<>]`},
})

// lexAll returns def's tokens for src up to and including EOF, or the tokens
// before the error and the error.
func lexAll(t testing.TB, def lexer.Definition, src []byte) ([]lexer.Token, error) {
	t.Helper()
	// As participle's ParseBytes does.
	var lx lexer.Lexer
	var err error
	if bd, ok := def.(lexer.BytesDefinition); ok {
		lx, err = bd.LexBytes("x.tir", src)
	} else {
		lx, err = def.Lex("x.tir", bytes.NewReader(src))
	}
	if err != nil {
		t.Fatalf("Lex: %v", err)
	}
	var toks []lexer.Token
	for len(toks) <= len(src) {
		tok, err := lx.Next()
		if err != nil {
			return toks, err
		}
		toks = append(toks, tok)
		if tok.EOF() {
			return toks, nil
		}
	}
	t.Fatalf("more tokens than bytes in %q", src)
	return nil, nil
}

// sameTokens fails unless both lexers give src the same tokens (type, value,
// position) and the same error (message and position), if any.
func sameTokens(t testing.TB, name string, src []byte) {
	t.Helper()
	want, wantErr := lexAll(t, regexpLexer, src)
	got, gotErr := lexAll(t, tirLexer, src)
	for i := range min(len(want), len(got)) {
		if got[i] != want[i] {
			t.Fatalf("%s: token %d = %#v, want %#v (regexp lexer)", name, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d tokens, want %d (regexp lexer); errors %v, want %v", name, len(got), len(want), gotErr, wantErr)
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: error %v, want %v (regexp lexer)", name, gotErr, wantErr)
	}
	if wantErr != nil {
		var g, w *lexer.Error
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || *g != *w {
			t.Fatalf("%s: error %#v, want %#v (regexp lexer)", name, gotErr, wantErr)
		}
	}
}

func TestLexerSymbols(t *testing.T) {
	got, want := tirLexer.Symbols(), regexpLexer.Symbols()
	if len(got) != len(want) {
		t.Fatalf("Symbols() = %v, want %v", got, want)
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("Symbols()[%q] = %d, want %d", name, got[name], typ)
		}
	}
}

// lexerCorpus is every .tir file of the golden cases and the examples.
func lexerCorpus(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	archives, err := filepath.Glob("../../testdata/golden/*/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, p := range archives {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name == "in.tir" || f.Name == "out.tir" {
				files[p+":"+f.Name] = f.Data
			}
		}
	}
	examples, err := filepath.Glob("../../examples/*.tir")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, p := range examples {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	return files
}

func TestLexerMatchesRegexpOnCorpus(t *testing.T) {
	for name, src := range lexerCorpus(t) {
		sameTokens(t, name, src)
	}
}

// Edge cases of the rules: where a match stops, and which rule wins.
func TestLexerMatchesRegexpOnEdges(t *testing.T) {
	for _, src := range []string{
		"", "-", "->", "-1", "--1", "-.5", "1.", "1.e", "1.e5", "1e", "1e+", "1e-3", "1E+07x", "12.5e3.4",
		"%", "%1", "%1a", "%a.b.", "%_", "%.", "@", "@a.b", "@1", "a1_b.c", "_", "/", "/a", "//", "// é\n x",
		`"`, `"a`, `"a"`, `"\"`, `"\""`, `"\\"`, "\"\\\n\"", "\"a\nb\"", "\"\\é\"", "\"\xff\"", "\"\\\xff\"", "\"\xe2\x82\"",
		"\xff", "é", "a\xffb", "// \xe2\x82\n%x", " \t\r\n\n  x", "{}[](),:=", "$", "#", "'", "a<b", "\x00",
		"abcdefghijklmnop$qrstuvwxyz0123456789", "x\n\"ééééééééééééééééééé",
	} {
		sameTokens(t, fmt.Sprintf("%q", src), []byte(src))
	}
}

// tirBytes are the bytes .tir's rules care about, and a few they refuse.
const tirBytes = "-+>.eE09aZ_%@/\"\\\n \t\r{}[](),:=#$\xc3\xa9\xff\x80\xe2"

func TestLexerMatchesRegexpOnRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		src := make([]byte, r.IntN(40))
		for j := range src {
			if i%2 == 0 {
				src[j] = byte(r.UintN(256))
			} else {
				src[j] = tirBytes[r.IntN(len(tirBytes))]
			}
		}
		sameTokens(t, fmt.Sprintf("%q", src), src)
	}
	// Corpus files with a few bytes changed.
	corpus := lexerCorpus(t)
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	slices.Sort(names) // the same mutations every run
	for range 5000 {
		orig := corpus[names[r.IntN(len(names))]]
		if len(orig) == 0 {
			continue
		}
		src := append([]byte(nil), orig...)
		for range 1 + r.IntN(3) {
			src[r.IntN(len(src))] = tirBytes[r.IntN(len(tirBytes))]
		}
		sameTokens(t, fmt.Sprintf("%q", src), src)
	}
}

// FuzzLexer: the hand-written lexer matches the regexp lexer on any input.
func FuzzLexer(f *testing.F) {
	for _, src := range lexerCorpus(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) { sameTokens(t, "fuzz input", src) })
}

// BenchmarkLexer lexes examples/transformer_block.tir with each lexer:
//
//	go test -run '^$' -bench Lexer ./frontend/tir
func BenchmarkLexer(b *testing.B) {
	src, err := os.ReadFile("../../examples/transformer_block.tir")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		def  lexer.Definition
	}{{"regexp", regexpLexer}, {"hand", tirLexer}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				lexAll(b, c.def, src)
			}
		})
	}
}
