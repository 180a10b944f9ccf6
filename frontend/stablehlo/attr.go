package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

type attrKind uint8

const (
	attrNum   attrKind = iota // an integer or float; text keeps its spelling
	attrBool                  // true or false
	attrStr                   // a string or a @symbol
	attrWord                  // a bare identifier or #dialect<enum WORD>: LT, DEFAULT
	attrList                  // [a, b] or array<i64: 1, 2>
	attrDict                  // {k = v} or #stablehlo.gather<k = v>
	attrDense                 // dense<...> : tensor<...>
	attrOther                 // anything else, kept as text
)

// attr is one attribute value as written.
type attr struct {
	pos   ir.Pos
	kind  attrKind
	text  string // number spelling, string, word or other text; the dialect name of a dict
	list  []*attr
	dict  map[string]*attr
	dense *dense
}

// attrValue reads one attribute value. typed allows a trailing ": type"
// (1 : i64), which pretty op syntax leaves to the op's own type.
func (s *scanner) attrValue(typed bool) *attr {
	s.enter()
	defer s.leave()
	s.skip()
	a := &attr{pos: s.pos()}
	switch {
	case s.eof():
		s.failf(a.pos, "expected an attribute value, found the end of the file")
	case s.accept("["):
		a.kind = attrList
		for !s.accept("]") {
			if len(a.list) > 0 {
				s.expect(",")
			}
			a.list = append(a.list, s.attrValue(true))
		}
	case s.peek("{"):
		a.kind, a.dict = attrDict, s.attrDict()
	case s.peek("\""):
		a.kind, a.text = attrStr, s.str()
	case s.peek("@"):
		a.kind, a.text = attrStr, s.sigil('@', "a symbol")
	case s.accept("array<"):
		s.arrayAttr(a)
	case s.accept("dense<"):
		a.kind, a.dense = attrDense, s.denseBody()
		s.expect(":")
		s.index = true
		a.dense.typ = s.tensorType()
		s.index = false
		return a
	case s.peek("#"):
		s.hashAttr(a)
	case s.peek("<"):
		a.kind, a.text = attrOther, s.balanced() // dot_general's algorithm = <...>
	case s.peek("tensor<"):
		a.kind, a.text = attrOther, "type"
		s.tensorType()
	default:
		s.scalarAttr(a)
	}
	if typed && (a.kind == attrNum || a.kind == attrBool) && s.accept(":") {
		s.typeName()
	}
	return a
}

func (s *scanner) scalarAttr(a *attr) {
	if num := s.number(); num != "" {
		a.kind, a.text = attrNum, num
		return
	}
	w := s.word()
	switch w {
	case "":
		s.failf(a.pos, "expected an attribute value, found %s", s.found())
	case "true", "false":
		a.kind, a.text = attrBool, w
	default:
		a.kind, a.text = attrWord, w
		if s.peek("<") {
			a.kind, a.text = attrOther, w+s.balanced()
		}
	}
}

// number reads -1, 2.5e-3, 0x7FC00000, inf or nan; "" when none comes next.
func (s *scanner) number() string {
	s.skip()
	start := s.off
	end := start
	if end < len(s.src) && (s.src[end] == '-' || s.src[end] == '+') {
		end++
	}
	if end >= len(s.src) || s.src[end] < '0' || s.src[end] > '9' {
		for _, w := range []string{"inf", "nan"} {
			if strings.HasPrefix(s.src[end:], w) && (end+3 >= len(s.src) || !isIdent(s.src[end+3])) {
				s.advance(end + 3 - start)
				return s.src[start:s.off]
			}
		}
		return ""
	}
	for end < len(s.src) {
		c := s.src[end]
		if isIdent(c) || (c == '-' || c == '+') && (s.src[end-1] == 'e' || s.src[end-1] == 'E') && !strings.HasPrefix(s.src[start:end], "0x") {
			end++
			continue
		}
		break
	}
	s.advance(end - start)
	return s.src[start:s.off]
}

// attrDict reads {k = v, unit_key, ...}.
func (s *scanner) attrDict() map[string]*attr {
	s.expect("{")
	d := map[string]*attr{}
	for !s.accept("}") {
		if len(d) > 0 {
			s.expect(",")
		}
		s.skip()
		pos := s.pos()
		var key string
		if s.peek("\"") {
			key = s.str()
		} else {
			key = s.needWord("an attribute name")
		}
		if !s.accept("=") {
			d[key] = &attr{pos: pos, kind: attrWord, text: "unit"}
			continue
		}
		d[key] = s.attrValue(true)
	}
	return d
}

// arrayAttr reads the rest of array<i64: 1, 2> (array<i64> is empty).
func (s *scanner) arrayAttr(a *attr) {
	a.kind = attrList
	s.typeName()
	if s.accept(">") {
		return
	}
	s.expect(":")
	for {
		a.list = append(a.list, s.attrValue(false))
		if s.accept(">") {
			return
		}
		s.expect(",")
	}
}

// hashAttr reads #dialect<enum WORD>, #dialect.name<k = v, ...> or an alias #name.
func (s *scanner) hashAttr(a *attr) {
	name := s.sigil('#', "an attribute")
	if !s.peek("<") {
		a.kind, a.text = attrOther, "#"+name
		return
	}
	if !strings.Contains(name, ".") {
		// #stablehlo<comparison_direction LT>: the last word is the value.
		body := s.balanced()
		fields := strings.Fields(strings.Trim(body, "<>"))
		a.kind, a.text = attrOther, "#"+name+body
		if len(fields) == 2 {
			a.kind, a.text = attrWord, fields[1]
		}
		return
	}
	if name != "stablehlo.gather" && name != "stablehlo.scatter" && name != "stablehlo.dot" && name != "stablehlo.channel_handle" {
		a.kind, a.text = attrOther, "#"+name+s.balanced()
		return
	}
	s.expect("<")
	a.kind, a.text, a.dict = attrDict, name, map[string]*attr{}
	for !s.accept(">") {
		if len(a.dict) > 0 {
			s.expect(",")
		}
		key := s.needWord("a field name")
		s.expect("=")
		a.dict[key] = s.attrValue(true)
	}
}

// ints reads an attribute that is a list of integers.
func (a *attr) ints(s *scanner, what string) []int64 {
	if a.kind != attrList {
		s.failf(a.pos, "%s: expected a list of integers", what)
	}
	out := make([]int64, len(a.list))
	for i, e := range a.list {
		out[i] = e.int(s, what)
	}
	return out
}

func (a *attr) int(s *scanner, what string) int64 {
	if a.kind == attrNum {
		if v, err := strconv.ParseInt(a.text, 0, 64); err == nil {
			return v
		}
	}
	s.failf(a.pos, "%s: expected an integer, found %s", what, a.describe())
	return 0
}

func (a *attr) describe() string {
	switch a.kind {
	case attrList:
		return "a list"
	case attrDict:
		return "a dictionary"
	case attrDense:
		return "a dense literal"
	}
	return strconv.Quote(a.text)
}
