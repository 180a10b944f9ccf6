"""bench/models' llama.cpp checkpoint: the dense model as GGUF files, for bench/models/llama/peer.py.

Usage: checkpoint.py CONFIG.json LLAMA_CPP_DIR OUT_DIR DTYPE...

Run with .venv-hf's interpreter (the converter needs torch and transformers). It writes
the same random model the torch peer builds (peer.py's build, seed 0) as a Hugging Face
directory (config.json, model.safetensors in f32, and a tokenizer), then converts it with
llama.cpp's own converter, LLAMA_CPP_DIR/convert_hf_to_gguf.py (the llama-cpp-python sdist's
vendored llama.cpp, with its vendored gguf-py), to OUT_DIR/model-DTYPE.gguf for each DTYPE
(f32, bf16, f16). The Hugging Face directory is removed afterwards.

The converter wants a tokenizer. A small byte-level BPE (1024 tokens) is trained here, with
Qwen2's pre-tokenizer, on the repository's README.md and docs/*.md; the config's vocabulary
is larger, and the converter fills the rest with unused [PADn] tokens (the bench feeds token
ids, never text, so what the tokens spell does not matter). The converter names a BPE
tokenizer's pre-tokenizer by hashing its encoding of a fixed text against a table of
published models; a freshly trained tokenizer is in no table, so this script tells it the
name of the pre-tokenizer it was trained with ("qwen2") instead of failing the lookup
(and, see no_sentencepiece, takes the BPE path without the sentencepiece package).
"""

import os
import shutil
import sys
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peer import DTYPES, build  # noqa: E402  (the torch peer's model, seed and all)

# Qwen2's (and Qwen3's) pre-tokenizer split: llama.cpp's "qwen2" pre-tokenizer type.
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
EOS = "<|endoftext|>"


def train_tokenizer(repo, out_dir):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=[EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    files = [str(repo / "README.md")] + sorted(str(p) for p in (repo / "docs").glob("*.md"))
    tok.train(files, trainer)
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS).save_pretrained(out_dir)


def no_sentencepiece(model):
    """Qwen's converter tries a sentencepiece vocabulary first and takes the BPE one on
    FileNotFoundError (no tokenizer.model), but imports the sentencepiece package before it
    looks for the file; .venv-hf has no sentencepiece, and the directory no tokenizer.model."""
    raise FileNotFoundError(model.dir_model / "tokenizer.model")


def convert(llama_dir, hf_dir, dtype, out):
    sys.path.insert(0, str(llama_dir / "gguf-py"))
    sys.path.insert(0, str(llama_dir))
    import conversion.base
    import convert_hf_to_gguf

    conversion.base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen2"
    conversion.base.TextModel._set_vocab_sentencepiece = no_sentencepiece
    sys.argv = ["convert_hf_to_gguf.py", str(hf_dir), "--outtype", dtype, "--outfile", str(out)]
    convert_hf_to_gguf.main()


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: checkpoint.py CONFIG.json LLAMA_CPP_DIR OUT_DIR DTYPE...")
    config, llama_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    dtypes = sys.argv[4:]
    for d in dtypes:
        if d not in ("f32", "bf16", "f16"):
            sys.exit(f"checkpoint.py: dtype {d}: want f32, bf16 or f16")
    if not (llama_dir / "convert_hf_to_gguf.py").is_file():
        sys.exit(f"checkpoint.py: {llama_dir}: no convert_hf_to_gguf.py (make venv-llama unpacks the sdist)")
    hf_dir = out_dir / "hf"
    shutil.rmtree(hf_dir, ignore_errors=True)
    hf_dir.mkdir(parents=True)
    build(config, DTYPES["f32"]).save_pretrained(hf_dir)
    train_tokenizer(Path(__file__).resolve().parents[3], hf_dir)
    for d in dtypes:
        tmp = out_dir / f"model-{d}.gguf.tmp"
        convert(llama_dir, hf_dir, d, tmp)
        os.replace(tmp, out_dir / f"model-{d}.gguf")
    shutil.rmtree(hf_dir)


if __name__ == "__main__":
    main()
