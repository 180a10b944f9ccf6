"""Tiny random checkpoints and what transformers computes with them.

Usage: oracle.py OUTDIR [NAME ...]

For each model (all of them when no NAME is given) it builds a small model of
one family with transformers, gives every parameter random values (norm
weights and scales around 1, so that a norm applied without its scale is
caught), saves it with save_pretrained into OUTDIR/NAME (config.json and
safetensors), and writes OUTDIR/NAME/oracle.json:

  prompts  the token ids of the prompts (of different lengths)
  logits   per prompt, the logits of every position, [len, vocab], computed
           by the model in float32 on the prompt alone (no padding)
  greedy   per prompt, 32 tokens of model.generate without sampling (its own
           KV cache), no end-of-sequence token stopping it
  margin   the smallest gap between the best and second-best logit over
           those greedy steps (a tie would make the comparison meaningless)

For llama it also saves a SentencePiece-style tokenizer (Llama 2's form, trained
on a few sentences to the model's 64 ids) and writes OUTDIR/llama/text.json: a
text prompt, the ids transformers' tokenizer gives it, the 32 greedy tokens of
model.generate from them, and their decoding (skipping special tokens).

For qwen3 it also writes OUTDIR/qwen3_eos: the same checkpoint with a
generation_config.json whose eos_token_id is a list of ids that greedy
decoding emits early (chosen from the greedy tokens above, so that every
prompt meets one) and whose pad_token_id is another id, and its oracle.json:
"eos" (those ids), "pad", and "tokens": the new tokens of model.generate over
the prompts as one left-padded batch, where a finished row is padded and
generation stops when every row has finished.

A bf16 model is saved in bf16; its oracle runs the same bf16 weights in
float32 (model.float(), with the rotary frequencies recomputed in float32),
which is what tpucc computes.
"""

import json
import os
import sys

import torch
from transformers import (Gemma2Config, Gemma2ForCausalLM, Gemma3Config, Gemma3ForCausalLM,
                          Gemma3ForConditionalGeneration, Gemma3TextConfig, Gemma4Config, Gemma4ForCausalLM,
                          Gemma4ForConditionalGeneration, Gemma4TextConfig, GraniteConfig,
                          GraniteForCausalLM, LlamaConfig, LlamaForCausalLM, MistralConfig,
                          MistralForCausalLM, MixtralConfig, MixtralForCausalLM, Olmo2Config,
                          Olmo2ForCausalLM, Phi3Config, Phi3ForCausalLM, Qwen2Config, Qwen2ForCausalLM,
                          Qwen2MoeConfig, Qwen2MoeForCausalLM, Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig,
                          Qwen3MoeForCausalLM)

PROMPTS = [[3, 17, 42, 5, 9, 11, 30, 2, 7, 61, 13], [8, 1, 50], [12, 4, 4, 33, 20, 19, 1, 0, 6, 44, 27, 38, 15, 2, 9, 60, 31]]
NEW_TOKENS = 32


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in list(model.named_parameters()) + list(model.named_buffers()):
            if not p.is_floating_point() or "inv_freq" in name or "embed_scale" in name:
                continue
            if p.dim() == 1 or "layer_scalar" in name:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))


def qwen3():
    return Qwen3ForCausalLM(Qwen3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, use_sliding_window=True, sliding_window=8, max_window_layers=1,
        tie_word_embeddings=True, rope_parameters={"rope_type": "linear", "rope_theta": 5000.0, "factor": 2.0}))


def qwen3_moe():
    return Qwen3MoeForCausalLM(Qwen3MoeConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24,
        mlp_only_layers=[1], decoder_sparse_step=1, norm_topk_prob=True, tie_word_embeddings=False))


def gemma4():
    return Gemma4ForCausalLM(gemma4_config())


def gemma4_wrapped():
    # The multimodal wrapper, with no vision or audio encoder: its text
    # weights are saved under model.language_model.
    return Gemma4ForConditionalGeneration(Gemma4Config(text_config=gemma4_config().to_dict()))


def gemma4_config():
    return Gemma4TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=6, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, global_head_dim=32, num_global_key_value_heads=1,
        attention_k_eq_v=True, sliding_window=8,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention",
                     "sliding_attention", "full_attention"],
        num_kv_shared_layers=2, use_double_wide_mlp=True, hidden_size_per_layer_input=8,
        vocab_size_per_layer_input=64, enable_moe_block=True, num_experts=8, top_k_experts=2,
        moe_intermediate_size=24, final_logit_softcapping=30.0)


def llama():
    # Llama 3.1's rope with original_max_position_embeddings 64: of the 8
    # frequencies of a 16-wide head, the first is kept, the next two are
    # interpolated and the rest divided by the factor. Every bias is on.
    return LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, attention_bias=True, mlp_bias=True, max_position_embeddings=256,
        rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 64}))


def mistral():
    # A window of 6 tokens on every layer: the prompts and the generated
    # tokens run past it.
    return MistralForCausalLM(MistralConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=1, head_dim=8, sliding_window=6, rope_parameters={"rope_type": "default", "rope_theta": 1000.0}))


def qwen2():
    # Biases on q, k and v; the layers after the first slide over 8 tokens.
    return Qwen2ForCausalLM(Qwen2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, use_sliding_window=True, sliding_window=8, max_window_layers=1, tie_word_embeddings=True))


def mixtral():
    # 8 experts top-2 in every layer, a window of 6 tokens.
    return MixtralForCausalLM(MixtralConfig(
        vocab_size=64, hidden_size=32, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, num_local_experts=8, num_experts_per_tok=2, sliding_window=6))


def gemma2():
    # Every other layer slides over 6 tokens; scores and logits softcapped
    # low enough that the caps bend them.
    return Gemma2ForCausalLM(Gemma2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=6,
        attn_logit_softcapping=3.0, final_logit_softcapping=5.0))


def granite():
    # Llama with Granite's four multipliers, each far from 1.
    return GraniteForCausalLM(GraniteConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, embedding_multiplier=2.0, attention_multiplier=0.3, residual_multiplier=0.6,
        logits_scaling=3.0))


def olmo2():
    # Norms after attention and MLP; q and k normed over whole projections.
    return Olmo2ForCausalLM(Olmo2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, pad_token_id=0, eos_token_id=2))


def qwen2_moe():
    # 8 experts top-2 without renormalising, a shared expert beside them
    # behind its sigmoid gate, and a dense layer.
    return Qwen2MoeForCausalLM(Qwen2MoeConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24,
        shared_expert_intermediate_size=40, mlp_only_layers=[1], norm_topk_prob=False))


def phi3():
    # q, k and v in one matrix, gate and up in another; a window of 5.
    return Phi3ForCausalLM(Phi3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, sliding_window=5, pad_token_id=0, bos_token_id=1, eos_token_id=2))


def gemma3():
    return Gemma3ForCausalLM(gemma3_config())


def gemma3_wrapped():
    # The multimodal wrapper with a tiny vision tower (left unloaded); its
    # image tokens are outside the text vocab.
    from transformers import SiglipVisionConfig
    vision = SiglipVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                                image_size=28, patch_size=14)
    return Gemma3ForConditionalGeneration(Gemma3Config(
        text_config=gemma3_config().to_dict(), vision_config=vision.to_dict(), mm_tokens_per_image=4,
        image_token_index=300, boi_token_index=301, eoi_token_index=302))


def gemma3_config():
    # Sliding layers of 6 tokens around a full one with linear rope over
    # 10^6, query_pre_attn_scalar apart from head_dim; norms scale by 1 + w.
    return Gemma3TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=6,
        layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0}})


MODELS = {
    "qwen3": (qwen3, torch.float32),
    "qwen3_moe": (qwen3_moe, torch.float32),
    "gemma4": (gemma4, torch.float32),
    "qwen3_moe_bf16": (qwen3_moe, torch.bfloat16),
    "gemma4_wrapped": (gemma4_wrapped, torch.float32),
    "llama": (llama, torch.float32),
    "mistral": (mistral, torch.float32),
    "qwen2": (qwen2, torch.float32),
    "mixtral": (mixtral, torch.float32),
    "gemma3": (gemma3, torch.float32),
    "gemma3_wrapped": (gemma3_wrapped, torch.float32),
    "phi3": (phi3, torch.float32),
    "gemma2": (gemma2, torch.float32),
    "granite": (granite, torch.float32),
    "olmo2": (olmo2, torch.float32),
    "qwen2_moe": (qwen2_moe, torch.float32),
}


# Seeds whose greedy choices are not near ties (the others use their index in
# MODELS, whichever models are asked for).
SEEDS = {"gemma4_wrapped": 12, "llama": 9, "qwen2": 6, "mixtral": 15, "phi3": 10, "granite": 19, "qwen2_moe": 18}


def oracle(model):
    model = model.float().eval()
    # transformers keeps a bf16 model's rotary frequencies in bf16; tpucc
    # computes them in f32, as transformers does for an f32 model.
    text = getattr(model.model, "language_model", model.model)
    text.rotary_emb = type(text.rotary_emb)(text.config)
    # Generate exactly NEW_TOKENS: no end-of-sequence token stops it.
    model.generation_config.eos_token_id = None
    logits, greedy, margin = [], [], float("inf")
    with torch.no_grad():
        for p in PROMPTS:
            ids = torch.tensor([p])
            logits.append(model(ids).logits[0].tolist())
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS,
                                 do_sample=False, pad_token_id=0, output_logits=True, return_dict_in_generate=True)
            greedy.append(out.sequences[0, len(p):].tolist())
            for step in out.logits:
                top = torch.topk(step[0], 2).values
                margin = min(margin, float(top[0] - top[1]))
    return {"prompts": PROMPTS, "logits": logits, "greedy": greedy, "margin": margin}


TEXT_PROMPT = "the quick brown fox jumps over the lazy dog"


def sp_tokenizer(vocab_size):
    """A SentencePiece-style BPE as transformers converts Llama 2's: ▁ for
    spaces, <s> first; characters it has not seen become <unk>."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=28,
                                  show_progress=False)
    sentences = [TEXT_PROMPT, "a lazy fox is quick", "the dog jumps over a brown fox", "over and over the quick dog"]
    tok.train_from_iterator(sentences * 8, trainer)
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return tok


def text_oracle(model, path):
    from transformers import PreTrainedTokenizerFast
    tok = PreTrainedTokenizerFast(tokenizer_object=sp_tokenizer(model.config.vocab_size),
                                  bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    tok.save_pretrained(path)
    ids = tok(TEXT_PROMPT, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False,
                             pad_token_id=0, output_logits=True, return_dict_in_generate=True)
    new = out.sequences[0, ids.shape[1]:].tolist()
    margin = min(float(torch.topk(step[0], 2).values[0] - torch.topk(step[0], 2).values[1]) for step in out.logits)
    with open(os.path.join(path, "text.json"), "w") as f:
        json.dump({"text": TEXT_PROMPT, "ids": ids[0].tolist(), "tokens": new, "margin": margin,
                   "decoded": tok.decode(new, skip_special_tokens=True)}, f)


def first_eos(row, eos):
    return next((i for i, t in enumerate(row) if t in eos), len(row))


def eos_oracle(model, greedy, path):
    """Saves model into path with end-of-sequence ids that the prompts meet
    at different steps, and records transformers' batched generate."""
    eos = [greedy[0][3]]
    for b, row in enumerate(greedy):
        if first_eos(row, eos) > 12:
            eos.append(row[5 + b])
    pad = next(t for t in range(model.config.vocab_size - 1, -1, -1) if t not in eos)
    longest = max(len(p) for p in PROMPTS)
    ids = torch.tensor([[pad] * (longest - len(p)) + p for p in PROMPTS])
    mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in PROMPTS])
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
    model.save_pretrained(path)
    tokens = out[:, longest:].tolist()
    with open(os.path.join(path, "oracle.json"), "w") as f:
        json.dump({"prompts": PROMPTS, "eos": eos, "pad": pad, "tokens": tokens}, f)


def main():
    outdir = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        make, dtype = MODELS[name]
        seed = SEEDS.get(name, list(MODELS).index(name))
        torch.manual_seed(seed)
        model = make()
        randomize(model, 1000 + seed)
        model = model.to(dtype)
        path = os.path.join(outdir, name)
        model.save_pretrained(path)
        with open(os.path.join(path, "oracle.json"), "w") as f:
            o = oracle(model)
            json.dump(o, f)
        if name == "qwen3":
            eos_oracle(model, o["greedy"], os.path.join(outdir, "qwen3_eos"))
        if name == "llama":
            text_oracle(model, path)


if __name__ == "__main__":
    main()
