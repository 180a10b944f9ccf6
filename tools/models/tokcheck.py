"""Reference tokenizers for models/tokenizer's tests.

Usage: tokcheck.py OUTDIR

Trains small byte-level BPE tokenizers with the `tokenizers` package (the
library Hugging Face models use), writes each as OUTDIR/NAME/tokenizer.json,
and writes OUTDIR/expected.json: for every tokenizer and test text, the ids
`encode` gives and the text `decode` gives back (with and without special
tokens), and for id sequences that split UTF-8 characters, their decodings.
Also writes the code points NFC does not leave alone (OUTDIR/nfc.json) so the
Go side can check its table of runes it normalizes without tables.
"""

import json
import os
import random
import sys
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

QWEN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

WORDS = ("the of and to in is it's I'M we'll they've you'd don't CAN'T hello world tokenizer "
         "models checkpoint 2026 3.14159 x_1 foo.bar() <tag> {json: [1, 2]} naïve café résumé "
         "Ελληνικά русский 中文分词 日本語テキスト 한국어 😀 🚀 ñandú Straße ʼs 'ſ").split()
SEPS = [" ", "  ", "\n", "\r\n", "\t", " \n ", "   \n\n", "\u00a0", "\u3000", ", ", ". ", "!? ", ""]


def corpus(rng, n):
    out = []
    for _ in range(n):
        k = rng.randint(3, 30)
        out.append("".join(rng.choice(WORDS) + rng.choice(SEPS) for _ in range(k)))
    return out


def texts(rng):
    fixed = [
        "", " ", "  ", "\n", "hello world", "Hello  World!!\n\nIt's 2026, isn't it? I'M HERE; we'LL see.",
        "tabs\tand\r\nwindows lines\r\n\r\n", "trailing spaces   ", "   leading", "a  \n  b",
        "numbers 1234567 and 3.14", "emoji 😀🚀 mixed中文and English", "\u00a0nbsp\u3000ideographic",
        "'s 's 'S 'ſ 'll 'LL 'Ll", "<|endoftext|>hello<|im_start|>user\nhi<|im_end|>", "foo bar foo barfoo bar",
        "x<|endoftext|><|endoftext|>y", "unseen: ⅧⅨ ½ ¾ ᚠᛇᚻ ℵ", "combining e\u0301 and A\u030a", "ﬁ ligature and Ω ohm",
        "\u1100\u1161 jamo", "CJK compat \uf900", "<s>hello</s>world", "</s> spaced after", "foo barbaz qux",
        "<unk>x <s>", "tail<s>",
    ]
    return fixed + corpus(rng, 40)


def train(kind, rng):
    tok = Tokenizer(models.BPE())
    if kind == "qwen":
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    elif kind == "llama3":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    elif kind == "starcoder":
        # StarCoder's form: every digit alone, then GPT-2's split.
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ])
    elif kind == "digit_runs":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    size = {"qwen": 600, "gpt2": 400, "llama3": 600, "starcoder": 500, "digit_runs": 500}[kind]
    trainer = trainers.BpeTrainer(vocab_size=size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(rng, 400), trainer)
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    tok.add_tokens(["foo bar"])
    if kind == "llama3":
        # As Llama 3's tokenizer.json: encode puts <|begin_of_text|> first.
        tok.add_special_tokens(["<|begin_of_text|>"])
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                          special_tokens=[("<|begin_of_text|>", bos)]),
        ])
    return tok


def train_sp(kind, rng):
    """SentencePiece-style BPE over characters, spaces as ▁: Llama 2's form
    (normalizer Prepend + Replace, byte fallback, <s> first), the Metaspace
    pre-tokenizer's (prepend first), and one without byte tokens whose
    unknown characters become <unk> (prepend always, split, Metaspace
    decoder), with the Metaspace split, and Gemma's (Replace alone, no ▁
    prepended, a Split that finds no space left)."""
    tok = Tokenizer(models.BPE())
    if kind == "llama2":
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    elif kind == "gemma":
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    elif kind == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    elif kind == "metaspace_split":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    special = ["<unk>", "<s>", "</s>"]
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=special, limit_alphabet=60, show_progress=False)
    tok.train_from_iterator(corpus(rng, 400), trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    fallback = kind != "metaspace_unk"
    if fallback:
        n = len(vocab)
        for b in range(256):
            vocab["<0x%02X>" % b] = n + b
    out = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=fallback))
    out.normalizer, out.pre_tokenizer = tok.normalizer, tok.pre_tokenizer
    # Llama 2's form with normalized special tokens, as older files have
    # them: they are matched in the text after ▁ replaced its spaces.
    out.add_special_tokens([AddedToken(s, special=True, normalized=kind == "llama2") for s in special])
    out.add_tokens(["foo bar"])
    if kind == "gemma":
        out.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
        out.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    elif fallback:
        out.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
        out.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B:1", special_tokens=[("<s>", 1)])
    else:
        out.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return out


def nfc_changes():
    """Assigned code points that NFC may change in context (see models/tokenizer/nfc.go)."""
    second = set()
    for c in range(0x110000):
        d = unicodedata.decomposition(chr(c))
        if d and not d.startswith("<") and len(d.split()) == 2:
            second.add(int(d.split()[1], 16))
    second.update(range(0x1161, 0x1176))  # Hangul vowel jamo compose with a leading one
    second.update(range(0x11A8, 0x11C3))  # and trailing jamo with an LV syllable
    out = []
    for c in range(0x110000):
        ch = chr(c)
        if unicodedata.category(ch) in ("Cn", "Cs"):
            continue
        if unicodedata.combining(ch) or unicodedata.normalize("NFC", ch) != ch or c in second:
            out.append(c)
    return {"unicode": unicodedata.unidata_version, "code_points": out}


def main():
    outdir = sys.argv[1]
    rng = random.Random(9)
    expected = {}
    for kind in ("qwen", "gpt2", "llama3", "llama2", "metaspace", "metaspace_unk", "metaspace_split", "gemma",
                 "starcoder", "digit_runs"):
        sp = kind in ("llama2", "metaspace", "metaspace_unk", "metaspace_split", "gemma")
        tok = train_sp(kind, rng) if sp else train(kind, rng)
        os.makedirs(os.path.join(outdir, kind), exist_ok=True)
        tok.save(os.path.join(outdir, kind, "tokenizer.json"))
        cases = []
        for text in texts(rng):
            ids = tok.encode(text).ids
            cases.append({"text": text, "ids": ids,
                          "decoded": tok.decode(ids, skip_special_tokens=True),
                          "decoded_special": tok.decode(ids, skip_special_tokens=False)})
        # Single-byte tokens in random order split UTF-8 characters.
        byte_ids = [tok.token_to_id(ch) for ch in pre_tokenizers.ByteLevel.alphabet()]
        if kind.startswith("metaspace") or kind in ("llama2", "gemma"):
            byte_ids = [tok.token_to_id("<0x%02X>" % b) for b in range(256)]
            if None in byte_ids:  # no byte tokens: any tokens
                byte_ids = list(range(tok.get_vocab_size()))
        broken = []
        for _ in range(30):
            ids = [rng.choice(byte_ids) for _ in range(rng.randint(1, 12))]
            broken.append({"ids": ids, "decoded": tok.decode(ids)})
        expected[kind] = {"cases": cases, "broken": broken}
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False)
    with open(os.path.join(outdir, "nfc.json"), "w") as f:
        json.dump(nfc_changes(), f)


if __name__ == "__main__":
    main()
