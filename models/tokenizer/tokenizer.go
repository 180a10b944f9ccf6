// Package tokenizer reads a Hugging Face tokenizer.json of BPE, the
// byte-level kind that Qwen, Llama 3 and GPT-2 use or the SentencePiece-style
// kind of Llama 2, Mistral and Gemma, and encodes text to token ids and back.
//
// What it computes is fixed by the file; every option that would change the
// ids is either implemented or refused by Load with an error naming it, so a
// tokenizer that loads encodes as the reference library does (the tests
// compare against it on tokenizers trained in the test).
package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tpucc/tpucc/models/internal/jsonstrict"
	"github.com/tpucc/tpucc/models/safetensors"
)

// Tokenizer encodes text to ids and decodes ids to text. It is safe for
// concurrent use.
type Tokenizer struct {
	nfc          bool
	steps        []step // the pre-tokenizer, in order; the last maps bytes
	vocab        map[string]int
	tokens       []string           // id → token ("" for an unused id)
	merges       map[[2]int]mergeTo // a pair of ids → its merge
	ignoreMerges bool
	added        []added // longest content first
	special      map[int]bool
	// The ids a TemplateProcessing post-processor puts before and after
	// the text's (Llama 3's <|begin_of_text|>).
	prefix, suffix []int
	meta           *metaspace // SentencePiece-style BPE; nil: byte-level

	mu    sync.Mutex
	cache map[string][]int // word → ids

	defined int // tokens the file defines (vocab and added_tokens): see idBudget
}

// idBudget is the largest token id accepted of a file defining n tokens
// (vocab and added_tokens). Real files number their ids densely, so twice
// their count and some slack is ample; the id→token table is allocated up
// to the largest id, which must then stay proportional to the file: a
// 40-byte vocab of id 16777216 made a 256 MB table.
func idBudget(n int) int { return min(1<<24, 2*n+1024) }

// mergeTo is a merge's rank (its place in the list) and resulting token.
type mergeTo struct{ rank, id int }

// added is a token matched in the text before pre-tokenization.
type added struct {
	id         int
	content    string
	normalized bool // matched after normalization, in what other added tokens left
}

// File is tokenizer.json as far as tpucc reads it.
type file struct {
	Version       string          `json:"version"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    *normalizer     `json:"normalizer"`
	PreTokenizer  *preTokenizer   `json:"pre_tokenizer"`
	PostProcessor *postProcessor  `json:"post_processor"`
	Decoder       *decoder        `json:"decoder"`
	Model         bpeModel        `json:"model"`
}

type typed struct {
	Type string `json:"type"`
}

type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// byteLevel is a ByteLevel pre-tokenizer, post-processor or decoder.
type byteLevel struct {
	Type           string `json:"type"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	TrimOffsets    bool   `json:"trim_offsets"` // offsets only: no effect on ids
	UseRegex       bool   `json:"use_regex"`
}

// postProcessor is a ByteLevel or TemplateProcessing post-processor, or a
// Sequence of them.
type postProcessor struct {
	byteLevel
	Processors    []postProcessor            `json:"processors"`
	Single        []templatePiece            `json:"single"`
	Pair          json.RawMessage            `json:"pair"` // encoding a pair of texts is not offered
	SpecialTokens map[string]templateSpecial `json:"special_tokens"`
}

// templatePiece is one item of a template: a special token or a sequence.
type templatePiece struct {
	SpecialToken *templateRef `json:"SpecialToken"`
	Sequence     *templateRef `json:"Sequence"`
}

type templateRef struct {
	ID     string `json:"id"`
	TypeID int    `json:"type_id"` // token type ids: no effect on the ids
}

type templateSpecial struct {
	ID     string   `json:"id"`
	IDs    []int    `json:"ids"`
	Tokens []string `json:"tokens"`
}

type preTokenizer struct {
	byteLevel
	Pretokenizers []preTokenizer `json:"pretokenizers"`
	Pattern       *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior         string `json:"behavior"`
	Invert           bool   `json:"invert"`
	IndividualDigits bool   `json:"individual_digits"` // Digits
	// Metaspace
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	Split         bool   `json:"split"`
}

type bpeModel struct {
	Type                    string            `json:"type"`
	Dropout                 *float64          `json:"dropout"`
	UnkToken                *string           `json:"unk_token"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	FuseUnk                 bool              `json:"fuse_unk"`
	ByteFallback            bool              `json:"byte_fallback"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Vocab                   map[string]int    `json:"vocab"`
	Merges                  []json.RawMessage `json:"merges"`
}

// maxFile bounds tokenizer.json; Qwen's is about 7 MB.
const maxFile = 256 << 20

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := safetensors.ReadBounded(path, maxFile)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// Parse reads tokenizer.json's bytes.
func Parse(data []byte) (*Tokenizer, error) {
	var f file
	if err := jsonstrict.Decode(data, &f); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		name string
		v    json.RawMessage
	}{{"truncation", f.Truncation}, {"padding", f.Padding}} {
		if len(x.v) > 0 && string(x.v) != "null" {
			return nil, fmt.Errorf("%s: %s is not supported (encode returns every id, unpadded)", x.name, x.v)
		}
	}
	t := &Tokenizer{special: map[int]bool{}, cache: map[string][]int{}, defined: len(f.Model.Vocab) + len(f.AddedTokens)}
	if err := t.readNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err := t.readPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if t.meta != nil {
		if err := t.readMetaDecoder(f.Decoder); err != nil {
			return nil, err
		}
	} else if d := f.Decoder; d == nil || d.Type != "ByteLevel" {
		return nil, fmt.Errorf("decoder: only ByteLevel is supported for byte-level BPE")
	}
	if err := t.readModel(&f.Model); err != nil {
		return nil, err
	}
	if err := t.readAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	return t, t.readPostProcessor(f.PostProcessor)
}

// readPostProcessor reads the post-processor: ByteLevel only moves offsets;
// TemplateProcessing's single template puts special tokens around the ids
// of the text, as the reference library's encode does by default
// (add_special_tokens) and transformers' tokenizer(text) with it.
func (t *Tokenizer) readPostProcessor(p *postProcessor) error {
	if p == nil {
		return nil
	}
	list := []postProcessor{*p}
	if p.Type == "Sequence" {
		list = p.Processors
	}
	templates := 0
	for _, q := range list {
		switch q.Type {
		case "ByteLevel":
		case "TemplateProcessing":
			if templates++; templates > 1 {
				return fmt.Errorf("post_processor: more than one TemplateProcessing")
			}
			if err := t.readTemplate(&q); err != nil {
				return fmt.Errorf("post_processor: TemplateProcessing: %v", err)
			}
		default:
			return fmt.Errorf("post_processor %q is not supported (tpucc has ByteLevel, TemplateProcessing and a Sequence of them)", q.Type)
		}
	}
	return nil
}

// readTemplate reads the single template into t.prefix and t.suffix: the
// special tokens' ids before and after the sequence $A.
func (t *Tokenizer) readTemplate(q *postProcessor) error {
	seen := false
	for i, item := range q.Single {
		switch {
		case item.Sequence != nil && item.SpecialToken == nil:
			if item.Sequence.ID != "A" || seen {
				return fmt.Errorf("single[%d]: the single template holds the sequence A once (it has %q)", i, item.Sequence.ID)
			}
			seen = true
		case item.SpecialToken != nil && item.Sequence == nil:
			sp, ok := q.SpecialTokens[item.SpecialToken.ID]
			if !ok {
				return fmt.Errorf("single[%d]: special token %q is not in special_tokens", i, item.SpecialToken.ID)
			}
			for _, id := range sp.IDs {
				if id < 0 || id >= len(t.tokens) || t.tokens[id] == "" {
					return fmt.Errorf("single[%d]: special token %q has id %d, which is no token", i, sp.ID, id)
				}
			}
			if seen {
				t.suffix = append(t.suffix, sp.IDs...)
			} else {
				t.prefix = append(t.prefix, sp.IDs...)
			}
		default:
			return fmt.Errorf("single[%d]: not one SpecialToken or Sequence", i)
		}
	}
	if !seen {
		return fmt.Errorf("the single template has no sequence A")
	}
	return nil
}

// readModel reads the BPE vocabulary and merges.
func (t *Tokenizer) readModel(m *bpeModel) error {
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model %q is not supported (tpucc has BPE)", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("model: dropout %v is not supported (it makes encoding random)", *m.Dropout)
	case m.UnkToken != nil && t.meta == nil:
		return fmt.Errorf("model: unk_token is not supported (byte-level BPE has no unknown bytes)")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fmt.Errorf("model: continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("model: end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	case m.ByteFallback && t.meta == nil:
		return fmt.Errorf("model: byte_fallback is not supported for byte-level BPE")
	}
	t.ignoreMerges = m.IgnoreMerges
	t.vocab = m.Vocab
	for tok, id := range m.Vocab {
		if err := t.setToken(id, tok); err != nil {
			return fmt.Errorf("model: vocab: %v", err)
		}
	}
	t.merges = make(map[[2]int]mergeTo, len(m.Merges))
	for rank, raw := range m.Merges {
		a, b, err := mergePair(raw)
		if err != nil {
			return fmt.Errorf("model: merges[%d]: %v", rank, err)
		}
		ia, okA := t.vocab[a]
		ib, okB := t.vocab[b]
		iab, okAB := t.vocab[a+b]
		if !okA || !okB || !okAB {
			return fmt.Errorf("model: merges[%d]: %q + %q: a part or the result is not in the vocab", rank, a, b)
		}
		if _, dup := t.merges[[2]int{ia, ib}]; !dup {
			t.merges[[2]int{ia, ib}] = mergeTo{rank, iab}
		}
	}
	if t.meta != nil {
		return t.readMetaModel(m)
	}
	return nil
}

// setToken records id's token, refusing an id given to two tokens.
func (t *Tokenizer) setToken(id int, tok string) error {
	if limit := idBudget(t.defined); id < 0 || id > limit {
		return fmt.Errorf("token %q has id %d, outside [0, %d] (twice the file's %d tokens, and 1024)", tok, id, limit, t.defined)
	}
	if id >= len(t.tokens) {
		t.tokens = append(t.tokens, make([]string, id+1-len(t.tokens))...)
	}
	if old := t.tokens[id]; old != "" && old != tok {
		// Sorted, so that the message does not depend on the vocab map's order.
		a, b := min(old, tok), max(old, tok)
		return fmt.Errorf("id %d is both %q and %q", id, a, b)
	}
	t.tokens[id] = tok
	return nil
}

// mergePair reads a merge written "a b" (older files) or ["a", "b"].
func mergePair(raw json.RawMessage) (string, string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for i := 0; i < len(s); i++ {
			if s[i] == ' ' {
				return s[:i], s[i+1:], nil
			}
		}
		return "", "", fmt.Errorf("%q is not two tokens separated by a space", s)
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("%s is not a pair of tokens", raw)
	}
	return pair[0], pair[1], nil
}

// readAdded reads added_tokens, refusing the matching options tpucc lacks.
func (t *Tokenizer) readAdded(list []addedToken) error {
	for _, a := range list {
		switch {
		case a.Content == "":
			return fmt.Errorf("added_tokens: id %d has empty content", a.ID)
		case a.SingleWord || a.LStrip || a.RStrip:
			return fmt.Errorf("added_tokens: %q: single_word, lstrip and rstrip are not supported", a.Content)
		case a.Normalized && t.nfc && !nfcInert(a.Content):
			return fmt.Errorf("added_tokens: %q: a normalized token that NFC would change is not supported", a.Content)
		}
		if err := t.setToken(a.ID, a.Content); err != nil {
			return fmt.Errorf("added_tokens: %v", err)
		}
		content := a.Content
		if a.Normalized && t.meta != nil && t.meta.normalizer && t.meta.normalize(content) != content {
			// The reference library matches a normalized token by its
			// normalized content (<s> is ▁<s> under Prepend), decodes it
			// as that, and no longer knows it as special when decoding.
			content = t.meta.normalize(content)
			t.tokens[a.ID] = content
		} else if a.Special {
			t.special[a.ID] = true
		}
		t.added = append(t.added, added{id: a.ID, content: content, normalized: a.Normalized})
	}
	// Sorted by content, for addedAt's search; stable, so that of equal
	// contents the first listed is found.
	slices.SortStableFunc(t.added, func(a, b added) int {
		if a.normalized != b.normalized {
			return cmpBool(a.normalized, b.normalized)
		}
		return strings.Compare(a.content, b.content)
	})
	return nil
}
