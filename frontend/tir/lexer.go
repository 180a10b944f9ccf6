package tir

import (
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// tirLexer tokenizes .tir text by hand. It replaces a participle regexp
// lexer (lexer.MustSimple over the rules below, tried in order) whose
// matching cost about a microsecond per byte; it must produce exactly that
// lexer's tokens, values, positions and errors, so diagnostics do not change
// (lexer_test.go keeps the regexp definition and compares the two):
//
//	Comment     //[^\n]*
//	Whitespace  [ \t\r\n]+
//	Arrow       ->
//	Number      -?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?
//	Value       %(?:[A-Za-z_][A-Za-z0-9_.]*|[0-9]+)
//	Global      @[A-Za-z_][A-Za-z0-9_.]*
//	Ident       [A-Za-z_][A-Za-z0-9_]*
//	String      "(?:[^"\\\n]|\\.)*"
//	Punct       [-{}\[\](),:=<>]
//
// The first rule that matches wins, so "->" is an Arrow, a '-' before a digit
// starts a Number and any other '-' is Punct (only -inf and -nan use it).
// Value and function names carry their sigil, so a name never collides with a
// keyword. Comments and whitespace are tokens too; the parser elides them.
var tirLexer lexer.Definition = tirLexerDef{}

// Token types, numbered as lexer.MustSimple numbers its rules: EOF is -1 and
// the rules follow in order from -2.
const (
	tokComment lexer.TokenType = -2 - iota
	tokWhitespace
	tokArrow
	tokNumber
	tokValue
	tokGlobal
	tokIdent
	tokString
	tokPunct
)

// tirLexerDef implements lexer.Definition and its string and byte fast paths.
type tirLexerDef struct{}

var (
	_ lexer.StringDefinition = tirLexerDef{}
	_ lexer.BytesDefinition  = tirLexerDef{}
)

// Symbols returns a fresh map each call, so no caller can alter another's.
func (tirLexerDef) Symbols() map[string]lexer.TokenType {
	return map[string]lexer.TokenType{
		"EOF":        lexer.EOF,
		"Comment":    tokComment,
		"Whitespace": tokWhitespace,
		"Arrow":      tokArrow,
		"Number":     tokNumber,
		"Value":      tokValue,
		"Global":     tokGlobal,
		"Ident":      tokIdent,
		"String":     tokString,
		"Punct":      tokPunct,
	}
}

func (d tirLexerDef) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexBytes(filename, src)
}

// LexBytes copies src once; every token's Value is a substring of the copy.
func (d tirLexerDef) LexBytes(filename string, src []byte) (lexer.Lexer, error) {
	return d.LexString(filename, string(src))
}

func (tirLexerDef) LexString(filename string, src string) (lexer.Lexer, error) {
	return &tirScanner{src: src, pos: lexer.Position{Filename: filename, Line: 1, Column: 1}}, nil
}

// tirScanner is one pass over src. pos is where the next token starts;
// pos.Offset indexes src. Columns count runes as utf8.RuneCountInString does
// (an invalid byte is one), like lexer.Position.Advance.
type tirScanner struct {
	src string
	pos lexer.Position
}

// Next returns the next token, an EOF token at the end, or, where no rule
// matches, the regexp lexer's error (the scanner then stays where it is).
func (s *tirScanner) Next() (lexer.Token, error) {
	off := s.pos.Offset
	if off >= len(s.src) {
		return lexer.EOFToken(s.pos), nil
	}
	typ, end := s.scan(off)
	if end == off {
		sample := []rune(s.src[off:])
		if len(sample) > 16 {
			sample = append(sample[:16], []rune("...")...)
		}
		return lexer.Token{}, &lexer.Error{Msg: "lexer: invalid input text " + strconv.Quote(string(sample)), Pos: s.pos}
	}
	tok := lexer.Token{Type: typ, Value: s.src[off:end], Pos: s.pos}
	s.pos.Offset = end
	switch typ {
	case tokWhitespace:
		for i := off; i < end; i++ {
			if s.src[i] == '\n' {
				s.pos.Line++
				s.pos.Column = 1
			} else {
				s.pos.Column++
			}
		}
	case tokComment, tokString:
		// No newline inside; the text may hold any bytes.
		s.pos.Column += utf8.RuneCountInString(tok.Value)
	default:
		s.pos.Column += end - off // ASCII only
	}
	return tok, nil
}

// scan returns the type of the token at off and where it ends; end == off
// when no rule matches there.
func (s *tirScanner) scan(off int) (lexer.TokenType, int) {
	src := s.src
	c := src[off]
	switch {
	case c == '/':
		if off+1 < len(src) && src[off+1] == '/' {
			i := off + 2
			for i < len(src) && src[i] != '\n' {
				i++
			}
			return tokComment, i
		}
	case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		i := off + 1
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n') {
			i++
		}
		return tokWhitespace, i
	case c == '-':
		if off+1 < len(src) {
			if src[off+1] == '>' {
				return tokArrow, off + 2
			}
			if isDigit(src[off+1]) {
				return tokNumber, scanNumber(src, off+1)
			}
		}
		return tokPunct, off + 1
	case isDigit(c):
		return tokNumber, scanNumber(src, off)
	case c == '%':
		if off+1 < len(src) {
			switch d := src[off+1]; {
			case isIdentStart(d):
				return tokValue, scanName(src, off+2)
			case isDigit(d):
				return tokValue, scanDigits(src, off+2)
			}
		}
	case c == '@':
		if off+1 < len(src) && isIdentStart(src[off+1]) {
			return tokGlobal, scanName(src, off+2)
		}
	case isIdentStart(c):
		i := off + 1
		for i < len(src) && (isIdentStart(src[i]) || isDigit(src[i])) {
			i++
		}
		return tokIdent, i
	case c == '"':
		if end, ok := scanString(src, off+1); ok {
			return tokString, end
		}
	case c == '{' || c == '}' || c == '[' || c == ']' || c == '(' || c == ')' || c == ',' || c == ':' || c == '=' || c == '<' || c == '>':
		return tokPunct, off + 1
	}
	return 0, off
}

// scanNumber scans [0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)? from i, which
// holds a digit. The exponent is taken only when a digit completes it.
func scanNumber(src string, i int) int {
	i = scanDigits(src, i)
	if i < len(src) && src[i] == '.' {
		i = scanDigits(src, i+1)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '-' || src[j] == '+') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			i = scanDigits(src, j)
		}
	}
	return i
}

func scanDigits(src string, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

// scanName scans [A-Za-z0-9_.]* from i.
func scanName(src string, i int) int {
	for i < len(src) && (isIdentStart(src[i]) || isDigit(src[i]) || src[i] == '.') {
		i++
	}
	return i
}

// scanString scans (?:[^"\\\n]|\\.)*" from i, just after the opening quote,
// and returns the end after the closing quote. An escape takes the whole
// next rune (an invalid byte is one rune, as in Go's regexp); a newline or
// the end of the text before the closing quote is no match.
func scanString(src string, i int) (int, bool) {
	for i < len(src) {
		switch src[i] {
		case '"':
			return i + 1, true
		case '\n':
			return 0, false
		case '\\':
			if i+1 >= len(src) || src[i+1] == '\n' {
				return 0, false
			}
			_, n := utf8.DecodeRuneInString(src[i+1:])
			i += 1 + n
		default:
			i++
		}
	}
	return 0, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentStart(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
