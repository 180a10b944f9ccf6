package tir

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tpucc/tpucc/ir"
)

// checkUTF8 reports the first byte that is not valid UTF-8, at the column the
// lexer would give it (columns count runes, an invalid byte counts as one).
func checkUTF8(file string, src []byte) error {
	line, col := 1, 1
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			return ir.Errorf(ir.Pos{File: file, Line: line, Col: col}, "syntax error: invalid UTF-8 byte 0x%02x", src[i])
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return nil
}

// Budgets of a .tir file, checked before the parser builds anything.
// Parsing takes about 200 bytes of memory per byte of source (participle's
// syntax tree, then the IR), so MaxSource keeps a parse within about 3.5 GB;
// the largest programs in use (bench/compiletime's 8000 operations) are
// under 1 MiB. MaxRank is numpy 2's limit on dimensions: a type of 100000
// dimensions cost a second and 100 MB before any check saw it.
const (
	MaxSource = 16 << 20
	MaxRank   = 64
)

// checkSize refuses a source over MaxSource.
func checkSize(file string, src []byte) error {
	if len(src) > MaxSource {
		return ir.Errorf(ir.Pos{File: file, Line: 1, Col: 1}, "the file is %d bytes, more than the %d (16 MiB) a .tir file may have", len(src), MaxSource)
	}
	return nil
}

// maxNesting bounds bracket depth. Programs nest a few levels (a literal as
// deep as its rank); unbounded depth would exhaust the recursive-descent
// parser's stack, which Go cannot recover from.
const maxNesting = 256

// checkNesting reports the first bracket nested deeper than maxNesting,
// ignoring brackets in comments and strings. src is valid UTF-8.
func checkNesting(file string, src []byte) error {
	depth, line, col := 0, 1, 0
	inComment, inString, escaped := false, false, false
	for i, c := range src {
		if c&0xc0 != 0x80 {
			col++ // the first byte of a rune
		}
		switch {
		case c == '\n':
			line, col = line+1, 0
			inComment, inString = false, false
		case inComment:
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			inComment = true
		case c == '"':
			inString = true
		case c == '[' || c == '(' || c == '{':
			depth++
			if depth > maxNesting {
				return ir.Errorf(ir.Pos{File: file, Line: line, Col: col}, "syntax error: brackets nested more than %d deep", maxNesting)
			}
		case c == ']' || c == ')' || c == '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// syntaxError turns participle's error into one positioned diagnostic. The
// "expected" part is computed from the grammar fragment participle reports, so
// it names what could come next rather than the rest of the production.
func syntaxError(file string, src []byte, err error) error {
	var lexErr *lexer.Error
	if errors.As(err, &lexErr) {
		pos := toPos(file, lexErr.Pos)
		return ir.Errorf(pos, "syntax error: %s", badChar(src, lexErr.Pos.Offset))
	}
	var tokErr *participle.UnexpectedTokenError
	if errors.As(err, &tokErr) {
		msg := "syntax error: unexpected " + describeToken(tokErr.Unexpected)
		if exp := expectedText(tokErr.Message()); exp != "" {
			msg += ", expected " + exp
		} else {
			// Only the top level stops without naming what it wanted.
			msg += ", expected 'func'"
		}
		return ir.Errorf(toPos(file, tokErr.Unexpected.Pos), "%s", msg)
	}
	var perr participle.Error
	if errors.As(err, &perr) {
		return ir.Errorf(toPos(file, perr.Position()), "syntax error: %s", perr.Message())
	}
	return ir.Errorf(ir.Pos{File: file, Line: 1, Col: 1}, "syntax error: %v", err)
}

// badChar describes the character the lexer could not start a token with.
func badChar(src []byte, off int) string {
	if off < 0 || off >= len(src) {
		return "unexpected end of file"
	}
	r, _ := utf8.DecodeRune(src[off:])
	switch r {
	case '%':
		return "'%' must be followed by a value name ([A-Za-z_][A-Za-z0-9_.]* or digits)"
	case '@':
		return "'@' must be followed by a function name ([A-Za-z_][A-Za-z0-9_.]*)"
	case '"':
		return "unterminated string"
	case '/':
		return "unexpected character '/' (comments start with //)"
	}
	return fmt.Sprintf("unexpected character %q", r)
}

func describeToken(t lexer.Token) string {
	if t.EOF() {
		return "end of file"
	}
	return "'" + t.Value + "'"
}

func toPos(file string, p lexer.Position) ir.Pos {
	return ir.Pos{File: file, Line: p.Line, Col: p.Column}
}

// expectedText extracts the grammar fragment from participle's message
// `unexpected token "x" (expected FRAGMENT)` and describes the tokens that can
// start it.
func expectedText(msg string) string {
	i := strings.Index(msg, "(expected ")
	if i < 0 || !strings.HasSuffix(msg, ")") {
		return ""
	}
	frag := msg[i+len("(expected ") : len(msg)-1]
	p := &ebnfScanner{s: frag}
	first, _ := p.alt()
	var uniq []string
	seen := map[string]bool{}
	for _, f := range first {
		if !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	switch len(uniq) {
	case 0:
		return ""
	case 1:
		return uniq[0]
	}
	return strings.Join(uniq[:len(uniq)-1], ", ") + " or " + uniq[len(uniq)-1]
}

// terminalNames describes participle's spelling of token types and of the
// grammar's structs for users.
var terminalNames = map[string]string{
	"<arrow>":      "'->'",
	"<value>":      "a value (%name)",
	"<global>":     "a function name (@name)",
	"<ident>":      "a name",
	"<number>":     "a number",
	"<string>":     "a string",
	"<eof>":        "end of file",
	"FuncAST":      "'func'",
	"ValueTok":     "a value (%name)",
	"GlobalTok":    "a function name (@name)",
	"IdentTok":     "a name",
	"NumberTok":    "a number",
	"ParamAST":     "a parameter",
	"TypeAST":      "a type",
	"DimAST":       "a dimension",
	"LayoutAST":    "a layout",
	"TileAST":      "a tile",
	"StmtAST":      "an instruction",
	"CallAST":      "a callee (@name)",
	"AttrsAST":     "'{'",
	"AttrAST":      "an attribute",
	"AttrValueAST": "an attribute value",
	"ConstAST":     "a literal",
}

// ebnfScanner computes the FIRST set of a fragment of participle's EBNF
// (sequences, "|", groups with ? * + !, lookaheads, literals, <token types>,
// struct names). Each method returns the descriptions of the tokens that may
// start what it read, and whether it may match nothing.
type ebnfScanner struct {
	s string
	i int
}

func (p *ebnfScanner) peek() byte {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *ebnfScanner) alt() (first []string, nullable bool) {
	for {
		f, n := p.seq()
		first = append(first, f...)
		nullable = nullable || n
		if p.peek() != '|' {
			return first, nullable
		}
		p.i++
	}
}

func (p *ebnfScanner) seq() (first []string, nullable bool) {
	nullable = true
	for {
		c := p.peek()
		if c == 0 || c == '|' || c == ')' {
			return first, nullable
		}
		f, n := p.term()
		if nullable {
			first = append(first, f...)
			nullable = n
		}
	}
}

func (p *ebnfScanner) term() (first []string, nullable bool) {
	first, nullable = p.atom()
	if p.i < len(p.s) {
		switch p.s[p.i] {
		case '?', '*':
			p.i++
			nullable = true
		case '+', '!':
			p.i++
		}
	}
	return first, nullable
}

func (p *ebnfScanner) atom() (first []string, nullable bool) {
	start := p.i
	switch c := p.s[p.i]; {
	case c == '"':
		p.i++
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		lit := strings.Trim(p.s[start:min(p.i, len(p.s))], `"`)
		return []string{"'" + lit + "'"}, false
	case c == '(':
		p.i++
		look := strings.HasPrefix(p.s[p.i:], "?=") || strings.HasPrefix(p.s[p.i:], "?!")
		if look {
			p.i += 2
		}
		first, nullable = p.alt()
		if p.peek() == ')' {
			p.i++
		}
		if look {
			return nil, true
		}
		return first, nullable
	case c == '~':
		p.i++
		p.atom()
		return []string{"any token"}, false
	default:
		for p.i < len(p.s) && !strings.ContainsRune(" |()?*+!", rune(p.s[p.i])) {
			p.i++
		}
		if p.i == start {
			p.i++ // never loop on a character this scanner does not know
		}
		name := p.s[start:p.i]
		if d, ok := terminalNames[name]; ok {
			return []string{d}, false
		}
		return []string{name}, false
	}
}
