package stablehlo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// MaxSource bounds the text Parse reads; MaxDepth bounds how deeply brackets
// and regions nest, so a hostile file cannot exhaust the parser's stack.
const (
	MaxSource = 256 << 20
	MaxDepth  = 200
)

// scanner reads MLIR text a character at a time. Errors are raised as a
// panic carrying *ir.Error and turned back into an error by Parse.
type scanner struct {
	file  string
	src   string
	off   int
	line  int
	col   int // of src[off], counted in runes from 1
	depth int
	tests bool // check.expect_* ops are read (ParseTest)
	// index: the element type index is read (as i64), in a dense
	// attribute's type only (custom_call's layouts).
	index bool
	// quants, while non-nil, collects the quantized element type of each
	// tensor type read (nil for others): only a generic op's types may be
	// quantized (quant.go).
	quants *[]*quantType
	// replicas is the module's mhlo.num_replicas attribute (nil: none).
	replicas *attr
	// meshes are the module's one-device sdy.mesh names (mesh.go).
	meshes map[string]bool
}

type syntaxPanic struct{ err *ir.Error }

func newScanner(file, src string) *scanner { return &scanner{file: file, src: src, line: 1, col: 1} }

func (s *scanner) pos() ir.Pos { return ir.Pos{File: s.file, Line: s.line, Col: s.col} }

func (s *scanner) failf(pos ir.Pos, format string, args ...any) {
	panic(syntaxPanic{ir.Errorf(pos, format, args...)})
}

func (s *scanner) eof() bool { return s.off >= len(s.src) }

func (s *scanner) advance(n int) {
	for i := 0; i < n && s.off < len(s.src); i++ {
		c := s.src[s.off]
		s.off++
		switch {
		case c == '\n':
			s.line, s.col = s.line+1, 1
		case c&0xc0 != 0x80:
			s.col++
		}
	}
}

// skip passes blanks and // comments.
func (s *scanner) skip() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.advance(1)
		case strings.HasPrefix(s.src[s.off:], "//"):
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.advance(1)
			}
		default:
			return
		}
	}
}

// peek reports whether the next token starts with lit, after blanks.
func (s *scanner) peek(lit string) bool {
	s.skip()
	return strings.HasPrefix(s.src[s.off:], lit)
}

// accept consumes lit when it comes next. A word must not run on into an
// identifier character (so "x" does not accept the start of "xor").
func (s *scanner) accept(lit string) bool {
	if !s.peek(lit) {
		return false
	}
	if isIdent(lit[len(lit)-1]) && s.off+len(lit) < len(s.src) && isIdent(s.src[s.off+len(lit)]) && isIdent(lit[0]) {
		return false
	}
	s.advance(len(lit))
	return true
}

func (s *scanner) expect(lit string) {
	if !s.accept(lit) {
		s.failf(s.pos(), "expected %q, found %s", lit, s.found())
	}
}

// found describes the next token for a diagnostic.
func (s *scanner) found() string {
	s.skip()
	if s.eof() {
		return "the end of the file"
	}
	end := s.off + 1
	for end < len(s.src) && end-s.off < 20 && isIdent(s.src[end]) && isIdent(s.src[s.off]) {
		end++
	}
	return fmt.Sprintf("%q", s.src[s.off:end])
}

func isIdent(c byte) bool {
	return c == '_' || c == '.' || c == '$' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// word reads an identifier such as stablehlo.add, arg0 or 7 (value names may
// be all digits); "" when none comes next.
func (s *scanner) word() string {
	s.skip()
	start := s.off
	for s.off < len(s.src) && isIdent(s.src[s.off]) {
		s.advance(1)
	}
	return s.src[start:s.off]
}

func (s *scanner) needWord(what string) string {
	pos := s.pos()
	w := s.word()
	if w == "" {
		s.failf(pos, "expected %s, found %s", what, s.found())
	}
	return w
}

// sigil reads a name after c (%, @, ^ or #): %arg0, @main, ^bb0, #loc3.
// Quoted names (@"a b") are read as their text.
func (s *scanner) sigil(c byte, what string) string {
	s.skip()
	pos := s.pos()
	if s.eof() || s.src[s.off] != c {
		s.failf(pos, "expected %s, found %s", what, s.found())
	}
	s.advance(1)
	if !s.eof() && s.src[s.off] == '"' {
		return s.str()
	}
	start := s.off
	for s.off < len(s.src) && (isIdent(s.src[s.off]) || s.src[s.off] == '-') {
		s.advance(1)
	}
	if s.off == start {
		s.failf(pos, "expected %s, found %s", what, s.found())
	}
	return s.src[start:s.off]
}

// str reads a "..." string with MLIR's escapes (\\, \", \n, \t, \XX hex).
func (s *scanner) str() string {
	s.skip()
	pos := s.pos()
	if s.eof() || s.src[s.off] != '"' {
		s.failf(pos, "expected a string, found %s", s.found())
	}
	s.advance(1)
	var b strings.Builder
	for {
		if s.eof() || s.src[s.off] == '\n' {
			s.failf(pos, "unterminated string")
		}
		c := s.src[s.off]
		s.advance(1)
		switch {
		case c == '"':
			return b.String()
		case c != '\\':
			b.WriteByte(c)
		case s.eof():
			s.failf(pos, "unterminated string")
		default:
			b.WriteByte(s.escape(pos))
		}
	}
}

func (s *scanner) escape(pos ir.Pos) byte {
	c := s.src[s.off]
	s.advance(1)
	switch c {
	case '\\', '"':
		return c
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	if s.off < len(s.src) {
		if h, l := hexDigit(c), hexDigit(s.src[s.off]); h >= 0 && l >= 0 {
			s.advance(1)
			return byte(h<<4 | l)
		}
	}
	s.failf(pos, "bad escape \\%c in a string", c)
	return 0
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// balanced skips a bracketed group starting at the next open bracket, strings
// included, returning its text (loc(...) annotations, attributes we ignore).
func (s *scanner) balanced() string {
	s.skip()
	start, pos := s.off, s.pos()
	var stack []byte
	for {
		if s.eof() {
			s.failf(pos, "unclosed %q", s.src[start])
		}
		c := s.src[s.off]
		switch c {
		case '"':
			s.str()
			continue
		case '(', '[', '{', '<':
			if len(stack) >= MaxDepth {
				s.failf(s.pos(), "nested more than %d deep", MaxDepth)
			}
			stack = append(stack, closer(c))
		case ')', ']', '}', '>':
			if c == '>' && s.off > 0 && s.src[s.off-1] == '-' {
				break // the arrow of a function type
			}
			if len(stack) == 0 || stack[len(stack)-1] != c {
				s.failf(s.pos(), "unbalanced %q", c)
			}
			stack = stack[:len(stack)-1]
		}
		s.advance(1)
		if len(stack) == 0 {
			return s.src[start:s.off]
		}
	}
}

func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return '>'
}

// enter and leave bound recursion.
func (s *scanner) enter() {
	s.depth++
	if s.depth > MaxDepth {
		s.failf(s.pos(), "nested more than %d deep", MaxDepth)
	}
}

func (s *scanner) leave() { s.depth-- }

func itoa[T ~int | ~int64](v T) string { return strconv.FormatInt(int64(v), 10) }
