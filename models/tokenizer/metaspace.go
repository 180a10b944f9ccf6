package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// metaspace is SentencePiece-style BPE, as Llama 2's, Mistral's and
// Gemma's tokenizer.json have it: the BPE runs over the text's characters
// (not its bytes) with spaces written as a replacement character (▁), and
// a character outside the vocab becomes its UTF-8 bytes' tokens <0xXX>
// (byte_fallback) or the unknown token.
type metaspace struct {
	repl string // the replacement character, "▁"
	// normalizer: the normalizer replaces spaces by ▁ (Replace(" ", ▁),
	// Gemma's), and with prependAll also puts a ▁ before every piece of
	// text between added tokens (Prepend(▁), Llama 2's). Otherwise the
	// Metaspace pre-tokenizer replaces spaces and prepends ▁ by prepend.
	normalizer, prependAll bool
	prepend                string // "always", "first" (only the piece at the text's start) or "never"
	split                  bool   // Metaspace split: a piece is cut before each ▁
	// byteFallback: a character outside the vocab is its bytes' tokens
	// (all 256 are in the vocab). Otherwise it is unk, consecutive ones
	// fused into one when fuseUnk; unk < 0 is none.
	byteFallback bool
	unk          int
	fuseUnk      bool
	decoders     []decodeStep
}

// decodeStep is one decoder of a Sequence, applied to the list of tokens.
type decodeStep func(tokens []string) []string

// normalizer is tokenizer.json's normalizer as far as tpucc reads it.
type normalizer struct {
	Type        string       `json:"type"`
	Normalizers []normalizer `json:"normalizers"`
	Prepend     string       `json:"prepend"`
	Pattern     *pattern     `json:"pattern"`
	Content     string       `json:"content"`
}

type pattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// decoder is tokenizer.json's decoder as far as tpucc reads it.
type decoder struct {
	byteLevel
	Decoders      []decoder `json:"decoders"`
	Pattern       *pattern  `json:"pattern"`
	Content       string    `json:"content"`
	Start         int       `json:"start"`
	Stop          int       `json:"stop"`
	Replacement   string    `json:"replacement"`
	PrependScheme string    `json:"prepend_scheme"`
	Split         bool      `json:"split"`
}

// readNormalizer reads NFC, or SentencePiece's Replace(" " → ▁) (Gemma's),
// alone or in a Sequence with Prepend(▁) (Llama 2's; either order: the
// result is the same).
func (t *Tokenizer) readNormalizer(n *normalizer) error {
	switch {
	case n == nil:
		return nil
	case n.Type == "NFC":
		t.nfc = true
		return nil
	case spaceReplace(n):
		t.meta = &metaspace{repl: n.Content, normalizer: true, prepend: "never", unk: -1}
		return nil
	case n.Type == "Sequence" && len(n.Normalizers) == 2:
		p, r := n.Normalizers[0], n.Normalizers[1]
		if p.Type == "Replace" {
			p, r = r, p
		}
		if p.Type == "Prepend" && spaceReplace(&r) && r.Content == p.Prepend {
			t.meta = &metaspace{repl: p.Prepend, normalizer: true, prependAll: true, prepend: "always", unk: -1}
			return nil
		}
	}
	return fmt.Errorf("normalizer %q is not supported (tpucc has NFC, and SentencePiece's Replace(\" \", ▁) with or without Prepend(▁))", n.Type)
}

// spaceReplace says n is Replace(" " → one character).
func spaceReplace(n *normalizer) bool {
	return n.Type == "Replace" && n.Pattern != nil && n.Pattern.String != nil && *n.Pattern.String == " " &&
		utf8.RuneCountInString(n.Content) == 1
}

// normalize is what the SentencePiece normalizer makes of a piece of text.
func (m *metaspace) normalize(s string) string {
	s = strings.ReplaceAll(s, " ", m.repl)
	if m.prependAll && s != "" {
		s = m.repl + s
	}
	return s
}

// readMetaspace reads a Metaspace pre-tokenizer (tokenizers 0.14 on; older
// files say add_prefix_space instead of prepend_scheme).
func (t *Tokenizer) readMetaspace(p *preTokenizer) error {
	if t.meta != nil {
		return fmt.Errorf("pre_tokenizer: Metaspace beside the Replace normalizer is not supported")
	}
	if utf8.RuneCountInString(p.Replacement) != 1 {
		return fmt.Errorf("pre_tokenizer: Metaspace: replacement %q is not one character", p.Replacement)
	}
	scheme := p.PrependScheme
	if scheme == "" {
		scheme = map[bool]string{true: "always", false: "never"}[p.AddPrefixSpace]
	}
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return fmt.Errorf("pre_tokenizer: Metaspace: prepend_scheme %q is not always, first or never", scheme)
	}
	t.meta = &metaspace{repl: p.Replacement, prepend: scheme, split: p.Split, unk: -1}
	return nil
}

// readMetaModel checks the BPE options of SentencePiece-style models.
func (t *Tokenizer) readMetaModel(m *bpeModel) error {
	t.meta.byteFallback, t.meta.fuseUnk = m.ByteFallback, m.FuseUnk
	if m.UnkToken != nil {
		id, ok := t.vocab[*m.UnkToken]
		if !ok {
			return fmt.Errorf("model: unk_token %q is not in the vocab", *m.UnkToken)
		}
		t.meta.unk = id
	}
	if m.ByteFallback {
		for b := range 256 {
			if _, ok := t.vocab[byteToken(byte(b))]; !ok {
				return fmt.Errorf("model: byte_fallback needs the 256 byte tokens, and %s is not in the vocab", byteToken(byte(b)))
			}
		}
	}
	return nil
}

// byteToken is the name of byte b's token, as the reference library
// spells it: <0x0A>.
func byteToken(b byte) string { return fmt.Sprintf("<0x%02X>", b) }

// metaPieces turns one piece of text (between added tokens; first: it
// starts the text) into the words the BPE encodes: spaces replaced, ▁
// prepended by the scheme, cut at each ▁ when split (the Metaspace
// pre-tokenizer; a SentencePiece normalizer did its work before). Empty
// text has none.
func (m *metaspace) metaPieces(s string, first bool) []string {
	if s == "" {
		return nil
	}
	if m.normalizer {
		return []string{s} // normalized already (splitAdded)
	}
	s = strings.ReplaceAll(s, " ", m.repl)
	if (m.prepend == "always" || m.prepend == "first" && first) && !strings.HasPrefix(s, m.repl) {
		s = m.repl + s
	}
	if !m.split {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		// MergedWithNext: each ▁ starts the piece after it.
		i := strings.Index(s[1:], m.repl)
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// metaSymbols are a word's initial symbols: one per character in the
// vocab, else its bytes' tokens, else unk (consecutive ones fused when
// fuseUnk). A byte that is not UTF-8 is looked up as itself.
func (t *Tokenizer) metaSymbols(s string) ([]symbol, error) {
	m := t.meta
	syms := make([]symbol, 0, len(s))
	add := func(id, at int) {
		syms = append(syms, symbol{id: id, prev: len(syms) - 1, next: len(syms) + 1, at: at})
	}
	lastUnk := false
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		ch := s[i : i+w]
		switch id, ok := t.vocab[ch]; {
		case ok:
			add(id, i)
			lastUnk = false
		case m.byteFallback:
			for j := range w {
				add(t.vocab[byteToken(ch[j])], i+j)
			}
			lastUnk = false
		case m.unk >= 0:
			if !lastUnk || !m.fuseUnk {
				add(m.unk, i)
			}
			lastUnk = true
		default:
			return nil, fmt.Errorf("tokenizer: %q is not in the vocab, and the model has no byte_fallback or unk_token", ch)
		}
		i += w
	}
	return syms, nil
}

// readMetaDecoder reads the decoder of a SentencePiece-style tokenizer: a
// Sequence of Replace, ByteFallback, Fuse and Strip (Llama 2's, Mistral's),
// or Metaspace.
func (t *Tokenizer) readMetaDecoder(d *decoder) error {
	if d == nil {
		return fmt.Errorf("decoder: missing")
	}
	list := []decoder{*d}
	if d.Type == "Sequence" {
		list = d.Decoders
	}
	for i, q := range list {
		step, err := metaDecodeStep(&q)
		if err != nil {
			return fmt.Errorf("decoder: %d: %v", i, err)
		}
		t.meta.decoders = append(t.meta.decoders, step)
	}
	return nil
}

// metaDecodeStep is one decoder as the reference library applies it.
func metaDecodeStep(q *decoder) (decodeStep, error) {
	switch q.Type {
	case "Replace":
		if q.Pattern == nil || q.Pattern.String == nil || *q.Pattern.String == "" {
			return nil, fmt.Errorf("Replace: only a non-empty String pattern is supported")
		}
		from, to := *q.Pattern.String, q.Content
		return each(func(_ int, s string) string { return strings.ReplaceAll(s, from, to) }), nil
	case "ByteFallback":
		return byteFallback, nil
	case "Fuse":
		return func(ts []string) []string { return []string{strings.Join(ts, "")} }, nil
	case "Strip":
		if utf8.RuneCountInString(q.Content) != 1 || q.Start < 0 || q.Stop < 0 {
			return nil, fmt.Errorf("Strip: content %q, start %d, stop %d: want one character and counts", q.Content, q.Start, q.Stop)
		}
		c, start, stop := q.Content, q.Start, q.Stop
		return each(func(_ int, s string) string {
			for n := 0; n < start && strings.HasPrefix(s, c); n++ {
				s = s[len(c):]
			}
			for n := 0; n < stop && strings.HasSuffix(s, c); n++ {
				s = s[:len(s)-len(c)]
			}
			return s
		}), nil
	case "Metaspace":
		if utf8.RuneCountInString(q.Replacement) != 1 {
			return nil, fmt.Errorf("Metaspace: replacement %q is not one character", q.Replacement)
		}
		repl, never := q.Replacement, q.PrependScheme == "never" || q.PrependScheme == "" && !q.AddPrefixSpace
		// As the reference library: in the first token every replacement
		// character is dropped (not only a leading one), unless never.
		return each(func(i int, s string) string {
			if i == 0 && !never {
				return strings.ReplaceAll(s, repl, "")
			}
			return strings.ReplaceAll(s, repl, " ")
		}), nil
	}
	return nil, fmt.Errorf("%q is not supported (tpucc has Replace, ByteFallback, Fuse, Strip and Metaspace here)", q.Type)
}

// each applies f to every token.
func each(f func(i int, s string) string) decodeStep {
	return func(ts []string) []string {
		out := make([]string, len(ts))
		for i, s := range ts {
			out[i] = f(i, s)
		}
		return out
	}
}

// byteFallback turns each run of byte tokens <0xXX> into its text, or, when
// the bytes are not UTF-8, one U+FFFD per byte, as the reference library.
func byteFallback(ts []string) []string {
	var out []string
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, s := range ts {
		if len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' {
			if b, err := strconv.ParseUint(s[3:5], 16, 8); err == nil {
				run = append(run, byte(b))
				continue
			}
		}
		flush()
		out = append(out, s)
	}
	flush()
	return out
}
