package tokenizer

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// byteRune maps each byte to the printable rune that stands for it in a
// byte-level vocabulary: printable Latin-1 bytes stand for themselves, the
// others for the runes from U+0100 on, in byte order (GPT-2's alphabet).
var byteRune, runeByte = alphabet()

func alphabet() ([256]rune, map[rune]byte) {
	var br [256]rune
	rb := make(map[rune]byte, 256)
	next := rune(256)
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			br[b] = rune(b)
		} else {
			br[b] = next
			next++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}

// Encode returns the ids of text. Added tokens in the text (special ones
// included) become their ids, as the reference library's encode does.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	if t.nfc {
		if at, r, ok := firstNotInert(text); !ok {
			return nil, fmt.Errorf("tokenizer: the NFC normalizer: U+%04X at byte %d may change under NFC, and tpucc normalizes only text NFC leaves as it is", r, at)
		}
	}
	ids := slices.Clone(t.prefix)
	for k, p := range t.splitAdded(text) {
		if p.id >= 0 {
			ids = append(ids, p.id)
			continue
		}
		var err error
		if ids, err = t.encodePiece(ids, p.text, k == 0); err != nil {
			return nil, err
		}
	}
	return append(ids, t.suffix...), nil
}

// encodePiece appends the ids of text between added tokens (first: it
// starts the text), pre-tokenized into words.
func (t *Tokenizer) encodePiece(ids []int, text string, first bool) ([]int, error) {
	pieces := []string{text}
	if t.meta != nil {
		pieces = t.meta.metaPieces(text, first)
	}
	for _, s := range t.steps {
		if s.split != nil {
			var next []string
			for _, q := range pieces {
				next = append(next, split(q, s.split)...)
			}
			pieces = next
		}
	}
	for _, q := range pieces {
		word, err := t.word(q)
		if err != nil {
			return nil, err
		}
		ids = append(ids, word...)
	}
	return ids, nil
}

// piece is text to encode, or an added token's id (text empty).
type piece struct {
	text string
	id   int
}

// splitAdded cuts the text at its added tokens: first those matched on the
// raw text (normalized false), then the others, in what is left after the
// normalizer: NFC leaves the text as it is (tpucc refuses other text), and
// SentencePiece's Prepend normalizer puts ▁ before each piece and for its
// spaces, and the pieces it gives are not normalized again.
func (t *Tokenizer) splitAdded(text string) []piece {
	var out []piece
	for _, p := range t.matchAdded(text, false) {
		if p.id >= 0 {
			out = append(out, p)
			continue
		}
		s := p.text
		if t.meta != nil && t.meta.normalizer {
			s = t.meta.normalize(s)
		}
		out = append(out, t.matchAdded(s, true)...)
	}
	return out
}

// matchAdded finds added tokens left to right, the longest at each place.
func (t *Tokenizer) matchAdded(s string, normalized bool) []piece {
	var out []piece
	gap := 0
	for i := 0; i < len(s); {
		a := t.addedAt(s[i:], normalized)
		if a == nil {
			i++
			continue
		}
		if gap < i {
			out = append(out, piece{text: s[gap:i], id: -1})
		}
		out = append(out, piece{id: a.id})
		i += len(a.content)
		gap = i
	}
	if gap < len(s) {
		out = append(out, piece{text: s[gap:], id: -1})
	}
	return out
}

// addedAt is the longest added token (of the normalized kind or not) that
// s starts with, the first listed among equals; nil if none. t.added is
// sorted by kind, then content, so this is a binary search rather than a
// scan: a tokenizer.json of 200000 added tokens took 3 s to encode a
// kilobyte of text by scanning them at every byte.
func (t *Tokenizer) addedAt(s string, normalized bool) *added {
	lo, _ := slices.BinarySearchFunc(t.added, normalized, func(a added, n bool) int { return cmpBool(a.normalized, n) })
	list := t.added[lo:]
	list = list[:sort.Search(len(list), func(i int) bool { return list[i].normalized != normalized })]
	x := s
	for {
		// The largest content ≤ x: if it is a prefix of x, no longer one
		// is (it would sort between them); if not, every content that is
		// a prefix of x is one of x[:lcp], and the search goes on there.
		j := sort.Search(len(list), func(i int) bool { return list[i].content > x }) - 1
		if j < 0 {
			return nil
		}
		c := list[j].content
		if strings.HasPrefix(x, c) {
			for j > 0 && list[j-1].content == c {
				j--
			}
			return &list[j]
		}
		x = x[:commonPrefix(c, x)]
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// word encodes one pre-tokenized piece: its bytes mapped to the alphabet
// (byte-level) or its characters (metaspace), then merged pair by pair,
// lowest merge rank first and leftmost among equals.
func (t *Tokenizer) word(s string) ([]int, error) {
	t.mu.Lock()
	ids, ok := t.cache[s]
	t.mu.Unlock()
	if ok {
		return ids, nil
	}
	key := s
	if t.meta == nil {
		var mapped strings.Builder
		for i := 0; i < len(s); i++ {
			mapped.WriteRune(byteRune[s[i]])
		}
		key = mapped.String()
	}
	if id, ok := t.vocab[key]; ok && t.ignoreMerges {
		return []int{id}, nil
	}
	var syms []symbol
	var err error
	if t.meta != nil {
		syms, err = t.metaSymbols(s)
	} else {
		syms, err = t.byteSymbols(key)
	}
	if err != nil {
		return nil, err
	}
	ids = t.merge(syms)
	t.mu.Lock()
	if len(t.cache) < 1<<16 {
		t.cache[s] = ids
	}
	t.mu.Unlock()
	return ids, nil
}

// byteSymbols are a byte-level word's initial symbols, one per byte rune.
func (t *Tokenizer) byteSymbols(m string) ([]symbol, error) {
	syms := make([]symbol, 0, len(m))
	for i, r := range m {
		id, ok := t.vocab[string(r)]
		if !ok {
			return nil, fmt.Errorf("tokenizer: byte 0x%02x (%q) is not in the vocab", runeByte[r], r)
		}
		syms = append(syms, symbol{id: id, prev: len(syms) - 1, next: len(syms) + 1, at: i})
	}
	return syms, nil
}

// symbol is one token of a word being merged, in a linked list.
type symbol struct {
	id, prev, next, at int
	gone               bool
}

// candidate is a pair (left symbol index) that a merge may join.
type candidate struct{ rank, left, rightID, leftID int }

type queue []candidate

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(candidate)) }
func (q *queue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// merge applies merges until none applies; a popped candidate whose
// symbols changed since it was queued is stale and skipped.
func (t *Tokenizer) merge(syms []symbol) []int {
	q := &queue{}
	push := func(left int) {
		right := syms[left].next
		if left < 0 || right >= len(syms) {
			return
		}
		if m, ok := t.merges[[2]int{syms[left].id, syms[right].id}]; ok {
			heap.Push(q, candidate{rank: m.rank, left: left, leftID: syms[left].id, rightID: syms[right].id})
		}
	}
	for i := range len(syms) - 1 {
		push(i)
	}
	for q.Len() > 0 {
		c := heap.Pop(q).(candidate)
		l := &syms[c.left]
		if l.gone || l.id != c.leftID || l.next >= len(syms) || syms[l.next].id != c.rightID {
			continue
		}
		r := &syms[l.next]
		l.id = t.merges[[2]int{c.leftID, c.rightID}].id
		r.gone = true
		l.next = r.next
		if l.next < len(syms) {
			syms[l.next].prev = c.left
		}
		if l.prev >= 0 {
			push(l.prev)
		}
		push(c.left)
	}
	var ids []int
	for i := 0; i < len(syms); i = syms[i].next {
		ids = append(ids, syms[i].id)
	}
	return ids
}

// Decode returns the text of ids, leaving out special tokens when
// skipSpecial is set. Bytes that are not valid UTF-8 become U+FFFD, one per
// maximal invalid subsequence, as the reference library's decoder does.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) (string, error) {
	var buf []byte
	var toks []string // metaspace: the tokens the decoders run over
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" {
			return "", fmt.Errorf("tokenizer: no token has id %d", id)
		}
		if skipSpecial && t.special[id] {
			continue
		}
		if t.meta != nil {
			toks = append(toks, t.tokens[id])
			continue
		}
		buf = appendTokenBytes(buf, t.tokens[id])
	}
	if t.meta != nil {
		for _, d := range t.meta.decoders {
			toks = d(toks)
		}
		return strings.Join(toks, ""), nil
	}
	return lossy(buf), nil
}

// appendTokenBytes maps a token's runes back to bytes; a token with a rune
// outside the alphabet (an added token such as "a b") is taken as it is.
func appendTokenBytes(buf []byte, tok string) []byte {
	start := len(buf)
	for _, r := range tok {
		b, ok := runeByte[r]
		if !ok {
			return append(buf[:start], tok...)
		}
		buf = append(buf, b)
	}
	return buf
}

// lossy replaces each maximal invalid UTF-8 subsequence with U+FFFD.
func lossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for i := 0; i < len(b); {
		r, w := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || w > 1 {
			out.WriteRune(r)
			i += w
			continue
		}
		out.WriteRune(utf8.RuneError)
		i += invalidPrefix(b[i:])
	}
	return out.String()
}

// invalidPrefix is the length of the maximal prefix of b that starts a
// well-formed sequence without completing it (at least 1).
func invalidPrefix(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
