package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tiny builds a tokenizer.json: the 256 byte runes, then the merges given
// as "a b" in rank order, with Qwen's pre-tokenizer unless edit changes it.
func tiny(merges []string, edit func(map[string]any)) []byte {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteRune[b])] = b
	}
	for _, m := range merges {
		vocab[strings.Replace(m, " ", "", 1)] = len(vocab)
	}
	f := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens": []any{
			map[string]any{"id": 500, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
		},
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model":          bpeJSON(vocab, merges, nil, false),
	}
	return edited(f, edit)
}

// bpeJSON is a BPE model object; unk is the unk_token (nil: none).
func bpeJSON(vocab map[string]int, merges []string, unk any, fallback bool) map[string]any {
	return map[string]any{"type": "BPE", "dropout": nil, "unk_token": unk, "continuing_subword_prefix": nil,
		"end_of_word_suffix": nil, "fuse_unk": fallback, "byte_fallback": fallback, "ignore_merges": false,
		"vocab": vocab, "merges": merges}
}

// edited applies edit (when not nil) to f and returns f as JSON.
func edited(f map[string]any, edit func(map[string]any)) []byte {
	if edit != nil {
		edit(f)
	}
	data, _ := json.Marshal(f)
	return data
}

func TestEncodeTiny(t *testing.T) {
	tok, err := Parse(tiny([]string{"h e", "l l", "he ll", "Ġ w", "o r"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode("hello world<|end|>")
	if err != nil {
		t.Fatal(err)
	}
	// "hello" → hell + o; " world" → Ġw + or + l + d; then the special token.
	want := []int{258, 'o', 259, 260, 'l', 'd', 500}
	if !slices.Equal(ids, want) {
		t.Errorf("got %v, want %v", ids, want)
	}
	for skip, want := range map[bool]string{true: "hello world", false: "hello world<|end|>"} {
		if got, err := tok.Decode(ids, skip); err != nil || got != want {
			t.Errorf("Decode(skip=%v) = %q, %v; want %q", skip, got, err, want)
		}
	}
	if _, err := tok.Decode([]int{600}, false); err == nil || err.Error() != "tokenizer: no token has id 600" {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := tok.Encode("e\u0301"); err == nil || err.Error() != "tokenizer: the NFC normalizer: U+0301 at byte 1 may change under NFC, and tpucc normalizes only text NFC leaves as it is" {
		t.Errorf("combining mark: %v", err)
	}
}

// The Qwen split, piece by piece, on the cases its alternatives decide.
func TestQwenSplit(t *testing.T) {
	cases := map[string]string{
		"It's 'S 'ſ":      `"It" "'s" " '" "S" " '" "ſ"`,
		"a  b":            `"a" " " " b"`,
		"x\r\n\r\n  y":    `"x" "\r\n\r\n" " " " y"`,
		"1234 56":         `"1" "2" "3" "4" " " "5" "6"`,
		"foo.bar()\n\nok": `"foo" ".bar" "()\n\n" "ok"`,
		"end   ":          `"end" "   "`,
		" \u00a0x":        `" " "\u00a0x"`,
		"中文 and 😀!":       `"中文" " and" " 😀!"`,
	}
	for in, want := range cases {
		var got []string
		for _, p := range split(in, matchers[qwenPattern]) {
			got = append(got, fmt.Sprintf("%q", p))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("split(%q) = %s, want %s", in, g, want)
		}
	}
}

// Options that would change the ids are refused by name.
func TestParseErrors(t *testing.T) {
	set := func(path []string, v any) func(map[string]any) {
		return func(f map[string]any) {
			m := f
			for _, k := range path[:len(path)-1] {
				m = m[k].(map[string]any)
			}
			m[path[len(path)-1]] = v
		}
	}
	cases := []struct {
		edit func(map[string]any)
		want string
	}{
		{set([]string{"normalizer"}, map[string]any{"type": "NFKC"}), `normalizer "NFKC" is not supported (tpucc has NFC, and SentencePiece's Replace(" ", ▁) with or without Prepend(▁))`},
		{set([]string{"padding"}, map[string]any{"length": 8}), `padding: {"length":8} is not supported (encode returns every id, unpadded)`},
		{set([]string{"post_processor"}, map[string]any{"type": "TemplateProcessing"}), `post_processor: TemplateProcessing: the single template has no sequence A`},
		{set([]string{"post_processor"}, map[string]any{"type": "RobertaProcessing"}), `post_processor "RobertaProcessing" is not supported (tpucc has ByteLevel, TemplateProcessing and a Sequence of them)`},
		{set([]string{"model", "byte_fallback"}, true), `model: byte_fallback is not supported for byte-level BPE`},
		{set([]string{"model", "dropout"}, 0.1), `model: dropout 0.1 is not supported (it makes encoding random)`},
		{set([]string{"model", "type"}, "WordPiece"), `model "WordPiece" is not supported (tpucc has BPE)`},
		{set([]string{"model", "merges"}, []string{"q z"}), `model: merges[0]: "q" + "z": a part or the result is not in the vocab`},
		{set([]string{"model", "vocab"}, map[string]int{"a": 1, "b": 1}), `model: vocab: id 1 is both "a" and "b"`},
		{set([]string{"pre_tokenizer"}, map[string]any{"type": "Whitespace"}), `pre_tokenizer: "Whitespace" is not supported (tpucc has ByteLevel, Split, Digits and Sequence, or Metaspace)`},
		{set([]string{"pre_tokenizer"}, map[string]any{"type": "ByteLevel", "add_prefix_space": true}), `pre_tokenizer: ByteLevel add_prefix_space is not supported`},
		{set([]string{"pre_tokenizer"}, map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\w+`}, "behavior": "Isolated"}),
			`pre_tokenizer: Split: pattern "\\w+" is not supported (tpucc knows Qwen's, Llama 3's and GPT-2's)`},
		{set([]string{"added_tokens"}, []any{map[string]any{"id": 3, "content": "<x>", "lstrip": true}}), `added_tokens: "<x>": single_word, lstrip and rstrip are not supported`},
		{set([]string{"model", "extra"}, 1), `unknown field "extra"`},
		{set([]string{"model", "vocab"}, map[string]int{"a": 16777216}), `model: vocab: token "a" has id 16777216, outside [0, 1028] (twice the file's 2 tokens, and 1024)`},
		{set([]string{"model", "vocab"}, map[string]int{"a": 1029}), `model: vocab: token "a" has id 1029, outside [0, 1028] (twice the file's 2 tokens, and 1024)`},
	}
	for _, c := range cases {
		_, err := Parse(tiny(nil, c.edit))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// FuzzEncode: text that encodes decodes back to itself; nothing panics.
func FuzzEncode(f *testing.F) {
	tok, err := Parse(tiny([]string{"h e", "l l", "he ll", "Ġ w", "o r", "Ġ Ġ", "ĠĠ ĠĠ"}, nil))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"hello world", "It's  \r\n 1234!", "中文 😀", "<|end|>x", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tok.Encode(s)
		if err != nil {
			if utf8.ValidString(s) && nfcInert(s) {
				t.Fatalf("Encode(%q): %v", s, err)
			}
			return
		}
		got, err := tok.Decode(ids, false)
		if err != nil || got != s {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", s, got, err)
		}
	})
}

// FuzzParse: any bytes load or give an error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(tiny([]string{"h e"}, nil))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a a"]}}`))
	f.Add(tinySP([]string{"▁ a"}, nil))
	f.Add(tiny([]string{"h e"}, func(m map[string]any) {
		m["post_processor"] = map[string]any{"type": "TemplateProcessing", "single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<|end|>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"special_tokens": map[string]any{"<|end|>": map[string]any{"id": "<|end|>", "ids": []int{500}, "tokens": []string{"<|end|>"}}}}
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tok, err := Parse(data); err == nil {
			tok.Encode("hello 'S\r\n  world 123")
		}
	})
}

// A TemplateProcessing post-processor (in a Sequence after ByteLevel, as
// Llama 3's) puts its special tokens around the text's ids; Decode leaves
// them out when asked to skip special tokens.
func TestTemplate(t *testing.T) {
	ref := func(id string) map[string]any { return map[string]any{"id": id, "type_id": 0} }
	template := func(single []any, special map[string]any) func(map[string]any) {
		return func(f map[string]any) {
			f["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{
				map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
				map[string]any{"type": "TemplateProcessing", "single": single, "pair": []any{}, "special_tokens": special},
			}}
		}
	}
	end := map[string]any{"<|end|>": map[string]any{"id": "<|end|>", "ids": []int{500}, "tokens": []string{"<|end|>"}}}
	tok, err := Parse(tiny([]string{"h e"}, template([]any{
		map[string]any{"SpecialToken": ref("<|end|>")}, map[string]any{"Sequence": ref("A")}, map[string]any{"SpecialToken": ref("<|end|>")}}, end)))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode("he")
	if want := []int{500, 256, 500}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("Encode(he) = %v, %v; want %v", ids, err, want)
	}
	if got, err := tok.Decode(ids, true); err != nil || got != "he" {
		t.Errorf("Decode(%v, skip) = %q, %v", ids, got, err)
	}
	seq := map[string]any{"Sequence": ref("A")}
	bad := map[string]any{"<|end|>": map[string]any{"id": "<|end|>", "ids": []int{9999}, "tokens": []string{"<|end|>"}}}
	for _, c := range []struct {
		single  []any
		special map[string]any
		want    string
	}{
		{[]any{seq, seq}, end, `post_processor: TemplateProcessing: single[1]: the single template holds the sequence A once (it has "A")`},
		{[]any{map[string]any{"Sequence": ref("B")}}, end, `post_processor: TemplateProcessing: single[0]: the single template holds the sequence A once (it has "B")`},
		{[]any{map[string]any{"SpecialToken": ref("<s>")}, seq}, end, `post_processor: TemplateProcessing: single[0]: special token "<s>" is not in special_tokens`},
		{[]any{map[string]any{"SpecialToken": ref("<|end|>")}, seq}, bad, `post_processor: TemplateProcessing: single[0]: special token "<|end|>" has id 9999, which is no token`},
		{[]any{map[string]any{}, seq}, end, `post_processor: TemplateProcessing: single[0]: not one SpecialToken or Sequence`},
		{[]any{map[string]any{"SpecialToken": ref("<|end|>")}}, end, `post_processor: TemplateProcessing: the single template has no sequence A`},
	} {
		if _, err := Parse(tiny(nil, template(c.single, c.special))); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// TestAddedAtMatchesScan: the binary search over added tokens finds what
// scanning them finds: the longest content s starts with, of the kind asked
// for, the first listed among equal contents.
func TestAddedAtMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab<>"[rng.IntN(4)]
		}
		return string(b)
	}
	for trial := range 200 {
		tok := &Tokenizer{}
		var listed []added
		for i := range 1 + rng.IntN(30) {
			a := added{id: i, content: word(1 + rng.IntN(4)), normalized: rng.IntN(3) == 0}
			listed = append(listed, a)
			tok.added = append(tok.added, a)
		}
		slices.SortStableFunc(tok.added, func(a, b added) int {
			if a.normalized != b.normalized {
				return cmpBool(a.normalized, b.normalized)
			}
			return strings.Compare(a.content, b.content)
		})
		for range 50 {
			s, norm := word(rng.IntN(7)), rng.IntN(2) == 0
			want := -1
			for _, a := range listed {
				if a.normalized == norm && strings.HasPrefix(s, a.content) && (want < 0 || len(a.content) > len(listed[want].content)) {
					want = a.id
				}
			}
			got := -1
			if a := tok.addedAt(s, norm); a != nil {
				got = a.id
			}
			if got != want {
				t.Fatalf("trial %d: addedAt(%q, %v) = %d, want %d; tokens %+v", trial, s, norm, got, want, listed)
			}
		}
	}
}
