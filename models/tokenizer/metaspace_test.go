package tokenizer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tinySP builds a SentencePiece-style tokenizer.json (Llama 2's form: the
// Prepend and Replace normalizer, byte fallback, <s> first) over the
// characters of "▁abc" and the merges given, unless edit changes it.
func tinySP(merges []string, edit func(map[string]any)) []byte {
	vocab := map[string]int{"<unk>": 0, "<s>": 1, "▁": 2, "a": 3, "b": 4, "c": 5}
	for b := range 256 {
		vocab[byteToken(byte(b))] = 6 + b
	}
	for _, m := range merges {
		a, b, _ := mergePair(json.RawMessage(`"` + m + `"`))
		vocab[a+b] = len(vocab)
	}
	special := func(id int, s string) map[string]any {
		return map[string]any{"id": id, "content": s, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
	}
	f := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens": []any{special(0, "<unk>"), special(1, "<s>")},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": nil,
		"post_processor": map[string]any{"type": "TemplateProcessing", "single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair": []any{}, "special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{1}, "tokens": []string{"<s>"}}}},
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
		}},
		"model": bpeJSON(vocab, merges, "<unk>", true),
	}
	return edited(f, edit)
}

func TestEncodeSentencePiece(t *testing.T) {
	tok, err := Parse(tinySP([]string{"▁ a", "▁a b"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode("ab cé")
	// <s>, ▁ab, ▁, c, then é's two bytes (C3 A9) by byte fallback.
	if want := []int{1, 263, 2, 5, 6 + 0xC3, 6 + 0xA9}; err != nil || !slices.Equal(ids, want) {
		t.Fatalf("Encode = %v, %v; want %v", ids, err, want)
	}
	for skip, want := range map[bool]string{true: "ab cé", false: "<s> ab cé"} {
		if got, err := tok.Decode(ids, skip); err != nil || got != want {
			t.Errorf("Decode(%v, %v) = %q, %v; want %q", ids, skip, got, err, want)
		}
	}
	// Bytes that are not UTF-8 decode to one U+FFFD each.
	if got, _ := tok.Decode([]int{3, 6 + 0xC3, 6 + 0xC3, 4}, true); got != "a\uFFFD\uFFFDb" {
		t.Errorf("Decode of broken bytes = %q", got)
	}
}

// The Metaspace pre-tokenizer's split cuts before each ▁; first prepends
// ▁ only to the text's first piece.
func TestMetaPieces(t *testing.T) {
	m := &metaspace{repl: "▁", prepend: "first", split: true}
	if got, want := m.metaPieces("a b  c", true), []string{"▁a", "▁b", "▁", "▁c"}; !slices.Equal(got, want) {
		t.Errorf("first piece: %q, want %q", got, want)
	}
	if got, want := m.metaPieces("ab c", false), []string{"ab", "▁c"}; !slices.Equal(got, want) {
		t.Errorf("later piece: %q, want %q", got, want)
	}
	if got := m.metaPieces("", true); got != nil {
		t.Errorf("empty text: %q", got)
	}
}

// Options of SentencePiece-style files that tpucc does not compute are
// refused by name; so is a character no token can stand for.
func TestSentencePieceErrors(t *testing.T) {
	set := func(key string, v any) func(map[string]any) { return func(f map[string]any) { f[key] = v } }
	model := func(key string, v any) func(map[string]any) {
		return func(f map[string]any) { f["model"].(map[string]any)[key] = v }
	}
	metaspace := map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
	cases := []struct {
		edit func(map[string]any)
		want string
	}{
		{set("normalizer", map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"}, map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "_"}}}),
			`normalizer "Sequence" is not supported (tpucc has NFC, and SentencePiece's Replace(" ", ▁) with or without Prepend(▁))`},
		{set("pre_tokenizer", metaspace), `pre_tokenizer: Metaspace beside the Replace normalizer is not supported`},
		{set("pre_tokenizer", map[string]any{"type": "Split", "pattern": map[string]any{"String": "a"}, "behavior": "MergedWithPrevious", "invert": false}),
			`pre_tokenizer: "Split" beside the Replace normalizer is not supported`},
		{func(f map[string]any) {
			f["normalizer"], f["pre_tokenizer"] = nil, map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes", "split": false}
		}, `pre_tokenizer: Metaspace: prepend_scheme "sometimes" is not always, first or never`},
		{func(f map[string]any) {
			f["normalizer"], f["pre_tokenizer"] = nil, map[string]any{"type": "Metaspace", "replacement": "__", "prepend_scheme": "first", "split": false}
		}, `pre_tokenizer: Metaspace: replacement "__" is not one character`},
		{model("unk_token", "<missing>"), `model: unk_token "<missing>" is not in the vocab`},
		{model("vocab", map[string]int{"<unk>": 0, "<s>": 1, "<0x00>": 2}), `model: byte_fallback needs the 256 byte tokens, and <0x01> is not in the vocab`},
		{set("decoder", map[string]any{"type": "WordPiece"}), `decoder: 0: "WordPiece" is not supported (tpucc has Replace, ByteFallback, Fuse, Strip and Metaspace here)`},
		{set("decoder", map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": "▁+"}, "content": " "}), `decoder: 0: Replace: only a non-empty String pattern is supported`},
		{set("decoder", map[string]any{"type": "Strip", "content": "ab", "start": 1, "stop": 0}), `decoder: 0: Strip: content "ab", start 1, stop 0: want one character and counts`},
		{set("decoder", nil), `decoder: missing`},
	}
	for _, c := range cases {
		if _, err := Parse(tinySP(nil, c.edit)); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
	tok, err := Parse(tinySP(nil, model("byte_fallback", false)))
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := tok.Encode("aéé b"); err != nil || !slices.Equal(ids, []int{1, 2, 3, 0, 2, 4}) {
		t.Errorf("unknown characters fused into one <unk>: %v, %v", ids, err)
	}
	tok, err = Parse(tinySP(nil, func(f map[string]any) {
		model("byte_fallback", false)(f)
		model("unk_token", nil)(f)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Encode("é"); err == nil || err.Error() != `tokenizer: "é" is not in the vocab, and the model has no byte_fallback or unk_token` {
		t.Errorf("got %v", err)
	}
}

// FuzzEncodeSentencePiece: valid UTF-8 without the special tokens' text
// decodes back to itself (byte fallback stands for every character); any
// bytes encode without a panic.
func FuzzEncodeSentencePiece(f *testing.F) {
	tok, err := Parse(tinySP([]string{"▁ a", "▁a b", "b c", "▁ ▁"}, nil))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"abc", " a  b ", "中文 😀", "<s>x", "\xff\xfe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tok.Encode(s)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		if !utf8.ValidString(s) || strings.Contains(s, "<s>") || strings.Contains(s, "<unk>") {
			return
		}
		if got, err := tok.Decode(ids, true); err != nil || got != s {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", s, got, err)
		}
	})
}

// A normalized added token under the Prepend normalizer is matched, and
// decoded, by its normalized content (<s> as ▁<s>) and is not skipped as
// special: what the reference library does with older Llama 2 files.
func TestNormalizedAddedSentencePiece(t *testing.T) {
	tok, err := Parse(tinySP([]string{"▁ a"}, func(f map[string]any) {
		f["added_tokens"] = []any{map[string]any{"id": 1, "content": "<s>", "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": true, "special": true}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]int{
		"a <s>": {1, 262, 1},                         // ▁a, then ▁<s>
		"a<s>":  {1, 262, 6 + '<', 6 + 's', 6 + '>'}, // no ▁ before <s>: bytes
	} {
		if ids, err := tok.Encode(text); err != nil || !slices.Equal(ids, want) {
			t.Errorf("Encode(%q) = %v, %v; want %v", text, ids, err, want)
		}
	}
	if got, err := tok.Decode([]int{1, 262, 1}, true); err != nil || got != "<s> a <s>" {
		t.Errorf("Decode = %q, %v", got, err)
	}
}
