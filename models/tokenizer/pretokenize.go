package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// step is one pre-tokenizer: it splits each piece of text into smaller ones.
type step struct {
	split    matcher // nil: no split
	mapBytes bool    // ByteLevel: map each piece's bytes to the byte alphabet
}

// matcher returns the length in bytes of the match of its pattern at the
// start of s (0: no match). The patterns are regexes with a lookahead,
// which Go's regexp lacks, so each known pattern is written out by hand.
type matcher func(s string) int

// The split patterns tpucc knows, as tokenizer.json spells them.
const (
	// qwenPattern is Qwen2's and Qwen3's Split regex.
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// llama3Pattern is Llama 3's: Qwen's, with numbers in runs of up to three digits.
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// gpt2Pattern is what a ByteLevel pre-tokenizer with use_regex splits by.
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

var matchers = map[string]matcher{
	qwenPattern:   func(s string) int { return matchQwen(s, 1) },
	llama3Pattern: func(s string) int { return matchQwen(s, 3) },
	gpt2Pattern:   matchGPT2,
}

// readPreTokenizer turns the pre_tokenizer object into steps.
func (t *Tokenizer) readPreTokenizer(p *preTokenizer) error {
	switch {
	case p == nil && t.meta != nil:
		return nil // the SentencePiece normalizer did the work
	case t.meta != nil && t.meta.normalizer && p.Type == "Split" && p.Pattern != nil && p.Pattern.String != nil &&
		*p.Pattern.String == " " && p.Behavior == "MergedWithPrevious" && !p.Invert:
		return nil // Gemma's: the normalizer left no space to split at
	case p == nil:
		return fmt.Errorf("pre_tokenizer: missing (tpucc needs ByteLevel or Metaspace)")
	case p.Type == "Metaspace":
		return t.readMetaspace(p)
	case t.meta != nil:
		return fmt.Errorf("pre_tokenizer: %q beside the Replace normalizer is not supported", p.Type)
	}
	list := []preTokenizer{*p}
	if p.Type == "Sequence" {
		list = p.Pretokenizers
	}
	for i, q := range list {
		last := i == len(list)-1
		switch q.Type {
		case "ByteLevel":
			if !last {
				return fmt.Errorf("pre_tokenizer: ByteLevel must come last")
			}
			if q.AddPrefixSpace {
				return fmt.Errorf("pre_tokenizer: ByteLevel add_prefix_space is not supported")
			}
			s := step{mapBytes: true}
			if q.UseRegex {
				s.split = matchGPT2
			}
			t.steps = append(t.steps, s)
		case "Digits":
			// StarCoder's form: digits apart from the rest.
			t.steps = append(t.steps, step{split: matchDigits(q.IndividualDigits)})
		case "Split":
			if q.Pattern == nil || q.Pattern.Regex == nil {
				return fmt.Errorf("pre_tokenizer: Split: only a Regex pattern is supported")
			}
			m, ok := matchers[*q.Pattern.Regex]
			if !ok {
				return fmt.Errorf("pre_tokenizer: Split: pattern %q is not supported (tpucc knows Qwen's, Llama 3's and GPT-2's)", *q.Pattern.Regex)
			}
			if q.Behavior != "Isolated" || q.Invert {
				return fmt.Errorf("pre_tokenizer: Split: behavior %q with invert %v is not supported (tpucc has Isolated)", q.Behavior, q.Invert)
			}
			t.steps = append(t.steps, step{split: m})
		default:
			return fmt.Errorf("pre_tokenizer: %q is not supported (tpucc has ByteLevel, Split, Digits and Sequence, or Metaspace)", q.Type)
		}
	}
	if len(t.steps) == 0 || !t.steps[len(t.steps)-1].mapBytes {
		return fmt.Errorf("pre_tokenizer: a byte-level BPE needs ByteLevel last")
	}
	return nil
}

// split cuts s into the matches of m and the text between them, in order
// (the Isolated behaviour).
func split(s string, m matcher) []string {
	var out []string
	gap := 0
	for i := 0; i < len(s); {
		n := m(s[i:])
		if n == 0 {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		if gap < i {
			out = append(out, s[gap:i])
		}
		out = append(out, s[i:i+n])
		i += n
		gap = i
	}
	if gap < len(s) {
		out = append(out, s[gap:])
	}
	return out
}

// matchDigits is the Digits pre-tokenizer: each numeric character alone
// (individual), or runs of them.
func matchDigits(individual bool) matcher {
	return func(s string) int {
		if r, w := first(s); !isN(r) {
			return 0
		} else if individual {
			return w
		}
		return run(s, isN)
	}
}

func isL(r rune) bool     { return unicode.IsLetter(r) }
func isN(r rune) bool     { return unicode.IsNumber(r) }
func isSpace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isOther is [^\s\p{L}\p{N}].
func isOther(r rune) bool { return !isSpace(r) && !isL(r) && !isN(r) }

// run is the byte length of the longest prefix of s whose runes satisfy f.
func run(s string, f func(rune) bool) int {
	for i, r := range s {
		if !f(r) {
			return i
		}
	}
	return len(s)
}

// first returns s's first rune and its width (0 for an empty s).
func first(s string) (rune, int) {
	if s == "" {
		return 0, 0
	}
	return utf8.DecodeRuneInString(s)
}

// contraction matches 's 't 're 've 'm 'll 'd, case-insensitively with
// Unicode simple folding when fold is set (so 'S and the long s 'ſ match).
func contraction(s string, fold bool) int {
	if s == "" || s[0] != '\'' {
		return 0
	}
	for _, suffix := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		if n := matchFold(s[1:], suffix, fold); n > 0 {
			return 1 + n
		}
	}
	return 0
}

// matchFold matches the ASCII word at the start of s, rune by rune.
func matchFold(s, word string, fold bool) int {
	at := 0
	for _, want := range word {
		r, w := first(s[at:])
		if w == 0 || !(r == want || fold && sameFold(r, want)) {
			return 0
		}
		at += w
	}
	return at
}

func sameFold(r, want rune) bool {
	for f := unicode.SimpleFold(want); f != want; f = unicode.SimpleFold(f) {
		if r == f {
			return true
		}
	}
	return false
}

// spaces matches \s+(?!\S)|\s+: a whitespace run, less its last rune when a
// non-space follows and the run has more than one rune.
func spaces(s string) int {
	n := run(s, isSpace)
	if n == 0 || n == len(s) {
		return n
	}
	_, w := utf8.DecodeLastRuneInString(s[:n])
	if n-w > 0 {
		return n - w
	}
	return n
}

// matchQwen is qwenPattern, or llama3Pattern with digits 3; the
// alternatives are tried in order.
func matchQwen(s string, digits int) int {
	if n := contraction(s, true); n > 0 {
		return n
	}
	r, w := first(s)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(r) {
		return run(s, isL)
	}
	if r != '\r' && r != '\n' && !isN(r) {
		if n := run(s[w:], isL); n > 0 {
			return w + n
		}
	}
	// \p{N}, or \p{N}{1,3}
	if isN(r) {
		n := 0
		for range digits {
			r, w := first(s[n:])
			if w == 0 || !isN(r) {
				break
			}
			n += w
		}
		return n
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	at := 0
	if r == ' ' {
		at = 1
	}
	if n := run(s[at:], isOther); n > 0 {
		at += n
		return at + run(s[at:], func(r rune) bool { return r == '\r' || r == '\n' })
	}
	// \s*[\r\n]+: up to the last line break of the whitespace run.
	ws := run(s, isSpace)
	for i := ws - 1; i >= 0; i-- {
		if s[i] == '\r' || s[i] == '\n' {
			return i + 1
		}
	}
	return spaces(s)
}

// matchGPT2 is gpt2Pattern.
func matchGPT2(s string) int {
	if n := contraction(s, false); n > 0 {
		return n
	}
	at := 0
	if r, _ := first(s); r == ' ' {
		at = 1
	}
	for _, class := range []func(rune) bool{isL, isN, isOther} {
		if n := run(s[at:], class); n > 0 {
			return at + n
		}
	}
	return spaces(s)
}
