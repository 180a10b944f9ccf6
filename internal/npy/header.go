package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// headerDict is what a .npy header says.
type headerDict struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseHeader reads the header: a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', as numpy's safe_eval would. It knows strings (either quote),
// True/False, integers, and tuples or lists of those; anything else (a structured descr,
// say) is reported rather than guessed at.
func parseHeader(s string) (headerDict, error) {
	p := &hparser{s: s}
	var h headerDict
	seen := map[string]bool{}
	p.space()
	if !p.eat('{') {
		return h, errors.New("does not start with '{'")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("key: %w", err)
		}
		p.space()
		if !p.eat(':') {
			return h, fmt.Errorf("expected ':' after key '%s'", key)
		}
		p.space()
		v, err := p.value(0)
		if err != nil {
			return h, fmt.Errorf("value of '%s': %w", key, err)
		}
		if seen[key] {
			return h, fmt.Errorf("key '%s' appears twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			s, ok := v.(string)
			if !ok {
				return h, fmt.Errorf("unsupported dtype %s (structured arrays are not carried)", clip(p.source(v)))
			}
			h.descr = s
		case "fortran_order":
			b, ok := v.(bool)
			if !ok {
				return h, errors.New("'fortran_order' is not True or False")
			}
			h.fortran = b
		case "shape":
			t, ok := v.(tuple)
			if !ok {
				return h, errors.New("'shape' is not a tuple")
			}
			if len(t.items) > maxRank {
				return h, fmt.Errorf("'shape' has %d dimensions, more than %d", len(t.items), maxRank)
			}
			h.shape = make([]int64, len(t.items))
			for i, d := range t.items {
				n, ok := d.(int64)
				if !ok || n < 0 {
					return h, errors.New("'shape' is not a tuple of non-negative integers")
				}
				h.shape[i] = n
			}
		default:
			return h, fmt.Errorf("unexpected key '%s'", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return h, fmt.Errorf("expected ',' or '}' at offset %d", p.i)
		}
		break
	}
	if rest := strings.TrimSpace(p.s[p.i:]); rest != "" {
		return h, fmt.Errorf("unexpected text after the dict: %q", clip(rest))
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("missing key '%s'", k)
		}
	}
	return h, nil
}

// tuple is a parsed tuple or list; start and end locate its text, for messages.
type tuple struct {
	items      []any
	start, end int
}

type hparser struct {
	s string
	i int
}

// source is the header text of a parsed value, for messages.
func (p *hparser) source(v any) string {
	if t, ok := v.(tuple); ok {
		return p.s[t.start:t.end]
	}
	return fmt.Sprint(v)
}

func (p *hparser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *hparser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string. numpy's descrs and keys never need escapes, so a backslash
// is refused rather than interpreted.
func (p *hparser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("expected a string at offset %d", p.i)
	}
	q := p.s[p.i]
	start := p.i + 1
	for j := start; j < len(p.s); j++ {
		switch p.s[j] {
		case q:
			p.i = j + 1
			return p.s[start:j], nil
		case '\\', '\n':
			return "", fmt.Errorf("unsupported character in string at offset %d", j)
		}
	}
	return "", errors.New("unterminated string")
}

// Budgets of a header: a real one holds a flat tuple of at most numpy's
// NPY_MAXDIMS (64 since numpy 2) dimensions. The 1 MiB header limit bounds
// the rest, and parsing stays linear in the header's length.
const (
	maxDepth = 8
	maxRank  = 64
)

func (p *hparser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels at offset %d", maxDepth, p.i)
	}
	if p.i >= len(p.s) {
		return nil, errors.New("missing value")
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(' || c == '[':
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		t := tuple{start: p.i}
		p.i++
		for {
			p.space()
			if p.eat(closer) {
				break
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			t.items = append(t.items, v)
			p.space()
			if p.eat(',') {
				continue
			}
			if !p.eat(closer) {
				return nil, fmt.Errorf("expected ',' or '%c' at offset %d", closer, p.i)
			}
			break
		}
		t.end = p.i
		return t, nil
	case c >= '0' && c <= '9' || c == '-' || c == '+':
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad integer %q", clip(p.s[p.i:j]))
		}
		if j < len(p.s) && p.s[j] == 'L' { // a Python 2 long, in files from old numpy
			j++
		}
		p.i = j
		return n, nil
	}
	for _, w := range []struct {
		word string
		v    bool
	}{{"True", true}, {"False", false}} {
		if strings.HasPrefix(p.s[p.i:], w.word) {
			p.i += len(w.word)
			return w.v, nil
		}
	}
	return nil, fmt.Errorf("unexpected %q at offset %d", clip(p.s[p.i:]), p.i)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
