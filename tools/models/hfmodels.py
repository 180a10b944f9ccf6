"""Tiny random Hugging Face checkpoints for models/hf's tests.

Usage: hfmodels.py OUTDIR

Builds a small model of each family with transformers, saves it with
save_pretrained (config.json + model.safetensors) into OUTDIR/NAME, and writes
OUTDIR/NAME/expect.json: what transformers' own modules compute per layer
(head dim, key/value heads, sliding window, MoE or dense MLP and its width,
attention scaling, the rotary inverse frequencies) and per model (tied head,
embedding scale, logit softcapping, expert counts), for the Go side to match
with its reading of config.json.
"""

import json
import os
import sys

import torch
from transformers import (AutoModelForCausalLM, Gemma2Config, Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig,
                          Gemma4ForCausalLM, Gemma4TextConfig, GraniteConfig, GraniteForCausalLM,
                          LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM, MixtralConfig,
                          MixtralForCausalLM, Olmo2Config, Olmo2ForCausalLM, Phi3Config, Phi3ForCausalLM,
                          Qwen2Config, Qwen2ForCausalLM, Qwen2MoeConfig, Qwen2MoeForCausalLM, Qwen3Config,
                          Qwen3ForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM)


def has_bias(module, name):
    return getattr(getattr(module, name, None), "bias", None) is not None


def projections(layer):
    """Which of the layer's projections have biases, and whether it has q/k norms."""
    attn = layer.self_attn
    return {
        "qk_norm": hasattr(attn, "q_norm"),
        # OLMo 2 norms the whole q projection, the others each head.
        "qk_norm_full": hasattr(attn, "q_norm") and attn.q_norm.weight.shape[0] != attn.head_dim,
        "qkv_bias": has_bias(attn, "q_proj"),
        "o_bias": has_bias(attn, "o_proj"),
        "mlp_bias": has_bias(layer.mlp, "gate_proj"),
    }


def kv_width(attn):
    """The keys' width: k_proj's, or Phi-3's share of its fused qkv_proj."""
    if hasattr(attn, "k_proj"):
        return attn.k_proj.out_features
    return (attn.qkv_proj.out_features - attn.config.num_attention_heads * attn.head_dim) // 2


def mlp_width(mlp):
    """The MLP's width: gate_proj's, or half of Phi-3's fused gate_up_proj."""
    if hasattr(mlp, "gate_proj"):
        return mlp.gate_proj.out_features
    return mlp.gate_up_proj.out_features // 2


def qwen_layer(model, i):
    """A layer of Qwen3, Qwen3-MoE, Qwen2, Llama, Mistral, Mixtral or Phi-3."""
    layer = model.model.layers[i]
    attn = layer.self_attn
    moe = "SparseMoeBlock" in type(layer.mlp).__name__
    inv = model.model.rotary_emb.inv_freq
    # Mistral's attention reads its window from the config; a model with
    # layer_types masks by them (Qwen2-MoE's full layers have no
    # sliding_window attribute, and their mask is causal).
    window = getattr(attn, "sliding_window", getattr(model.config, "sliding_window", None))
    types = getattr(model.config, "layer_types", None)
    if types is not None:
        window = model.config.sliding_window if types[i] == "sliding_attention" else None
    return projections(layer) | {
        "head_dim": attn.head_dim,
        "kv_heads": kv_width(attn) // attn.head_dim,
        "sliding_window": window or 0,
        "moe": moe,
        "intermediate": 0 if moe else mlp_width(layer.mlp),
        "scaling": attn.scaling,
        "kv_shared": False,
        "k_eq_v": False,
        "inv_freq": inv.tolist(),
        "rope_scale": float(model.model.rotary_emb.attention_scaling),
    }


def layer_inv_freq(rotary, layer_type):
    """Gemma 3 and 4 keep one rope per layer type, Gemma 2 one for all."""
    if hasattr(rotary, f"{layer_type}_inv_freq"):
        return getattr(rotary, f"{layer_type}_inv_freq")
    return rotary.inv_freq


def gemma_layer(model, i):
    layer = model.model.layers[i]
    attn = layer.self_attn
    t = model.config.layer_types[i]
    return projections(layer) | {
        "head_dim": attn.head_dim,
        "kv_heads": model.config.num_attention_heads // attn.num_key_value_groups,
        "sliding_window": attn.sliding_window or 0,
        "moe": bool(getattr(layer, "enable_moe_block", False)),
        "intermediate": layer.mlp.gate_proj.out_features,
        "scaling": attn.scaling,
        "kv_shared": bool(getattr(attn, "is_kv_shared_layer", False)),
        "k_eq_v": bool(getattr(attn, "use_alternative_attention", False)),
        "inv_freq": layer_inv_freq(model.model.rotary_emb, t).tolist(),
    }


def strip_defaults(path, config):
    """Leaves out of path's config.json every field equal to the default of
    the model's configuration class (but max_position_embeddings, which
    tpucc requires) and layer_types (which the class derives from the other
    fields), as a hand-written Hub config may, and returns the model
    transformers loads from it: the class's defaults are its."""
    cfg_path = os.path.join(path, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    default = type(config)().to_dict()
    keep = ("model_type", "architectures", "max_position_embeddings")
    cfg = {k: v for k, v in cfg.items() if k in keep or k != "layer_types" and (k not in default or default[k] != v)}
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)


def save(outdir, name, model, layer_fn, dtype, shard=None, defaults=False):
    torch.manual_seed(0)
    model = model.to(dtype)
    path = os.path.join(outdir, name)
    if shard:
        model.save_pretrained(path, max_shard_size=shard)
    else:
        model.save_pretrained(path)
    if defaults:
        model = strip_defaults(path, model.config)
    cfg = model.config
    embed = model.model.embed_tokens
    norm = model.model.norm
    expect = {
        "dtype": str(dtype).removeprefix("torch."),
        "rms_norm_eps": getattr(norm, "variance_epsilon", getattr(norm, "eps", None)),
        "tied": model.lm_head.weight.data_ptr() == embed.weight.data_ptr(),
        "embed_scale": float(getattr(embed, "scalar_embed_scale", getattr(cfg, "embedding_multiplier", 1.0))),
        "residual_scale": float(getattr(cfg, "residual_multiplier", 1.0)),
        "logit_scale": float(getattr(cfg, "logits_scaling", 1.0)),
        "softcap": float(getattr(cfg, "final_logit_softcapping", None) or 0.0),
        "attn_softcap": float(getattr(cfg, "attn_logit_softcapping", None) or 0.0),
        "experts": getattr(cfg, "num_experts", None) or getattr(cfg, "num_local_experts", None) or 0,
        "top_k": getattr(cfg, "num_experts_per_tok", None) or getattr(cfg, "top_k_experts", None) or 0,
        "norm_topk": bool(getattr(cfg, "norm_topk_prob", True)),
        "layers": [layer_fn(model, i) for i in range(cfg.num_hidden_layers)],
    }
    with open(os.path.join(path, "expect.json"), "w") as f:
        json.dump(expect, f)


def main():
    outdir = sys.argv[1]
    torch.manual_seed(0)
    save(outdir, "qwen3", Qwen3ForCausalLM(Qwen3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, use_sliding_window=True, sliding_window=8, max_window_layers=1,
        tie_word_embeddings=True, rope_parameters={"rope_type": "linear", "rope_theta": 5000.0, "factor": 2.0})),
        qwen_layer, torch.float32)
    save(outdir, "qwen3_moe", Qwen3MoeForCausalLM(Qwen3MoeConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24,
        mlp_only_layers=[1], decoder_sparse_step=1, norm_topk_prob=True)),
        qwen_layer, torch.bfloat16, shard="40KB")
    save(outdir, "gemma4", Gemma4ForCausalLM(Gemma4TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=6, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, global_head_dim=32, num_global_key_value_heads=1,
        attention_k_eq_v=True, sliding_window=8,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention",
                     "sliding_attention", "full_attention"],
        num_kv_shared_layers=2, use_double_wide_mlp=True, hidden_size_per_layer_input=8,
        vocab_size_per_layer_input=64, enable_moe_block=True, num_experts=8, top_k_experts=2,
        moe_intermediate_size=24, final_logit_softcapping=30.0)),
        gemma_layer, torch.float32)
    save(outdir, "llama", LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, attention_bias=True, mlp_bias=True, max_position_embeddings=256,
        rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 64})),
        qwen_layer, torch.float32)
    save(outdir, "mistral", MistralForCausalLM(MistralConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=1, head_dim=8, sliding_window=6)),
        qwen_layer, torch.bfloat16)
    save(outdir, "qwen2", Qwen2ForCausalLM(Qwen2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, use_sliding_window=True, sliding_window=8, max_window_layers=2,
        tie_word_embeddings=True)),
        qwen_layer, torch.float32)
    save(outdir, "gemma3", Gemma3ForCausalLM(Gemma3TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=6, sliding_window_pattern=3,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}})),
        gemma_layer, torch.bfloat16)
    save(outdir, "gemma2", Gemma2ForCausalLM(Gemma2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=6)),
        gemma_layer, torch.float32)
    save(outdir, "granite", GraniteForCausalLM(GraniteConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, embedding_multiplier=12.0, attention_multiplier=0.05, residual_multiplier=0.22,
        logits_scaling=16.0)),
        qwen_layer, torch.float32)
    save(outdir, "olmo2", Olmo2ForCausalLM(Olmo2Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, pad_token_id=0)),
        qwen_layer, torch.float32)
    save(outdir, "qwen2_moe", Qwen2MoeForCausalLM(Qwen2MoeConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24,
        shared_expert_intermediate_size=40, mlp_only_layers=[1])),
        qwen_layer, torch.float32)
    save(outdir, "phi3", Phi3ForCausalLM(Phi3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, sliding_window=5, pad_token_id=0)),
        qwen_layer, torch.bfloat16)
    save(outdir, "mixtral", MixtralForCausalLM(MixtralConfig(
        vocab_size=64, hidden_size=32, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, num_local_experts=4, num_experts_per_tok=2)),
        qwen_layer, torch.bfloat16)

    # Configs that leave out what equals their class's default: Qwen3's
    # head_dim is 128 then, and the norms of Phi-3, Mixtral and OLMo 2 take
    # 1e-5; Qwen2-MoE without layer_types slides its even layers below
    # max_window_layers.
    save(outdir, "qwen3_defaults", Qwen3ForCausalLM(Qwen3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2)), qwen_layer, torch.float32, defaults=True)
    for name, make, cls in [("phi3_defaults", Phi3ForCausalLM, Phi3Config),
                            ("mixtral_defaults", MixtralForCausalLM, MixtralConfig),
                            ("olmo2_defaults", Olmo2ForCausalLM, Olmo2Config)]:
        save(outdir, name, make(cls(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, bos_token_id=1,
                                    eos_token_id=2)),
             qwen_layer, torch.float32, defaults=True)
    save(outdir, "qwen2_moe_defaults", Qwen2MoeForCausalLM(Qwen2MoeConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24,
        shared_expert_intermediate_size=40, use_sliding_window=True, sliding_window=5, max_window_layers=3)),
        qwen_layer, torch.float32, defaults=True)
    # YaRN over a context of 64 (Qwen's long-context rope) with its betas
    # set: of the 8 frequencies of a 16-wide head the first is kept, two
    # are blended and the rest divided; cos and sin scaled by 0.1·ln(4) + 1.
    save(outdir, "qwen3_yarn", Qwen3ForCausalLM(Qwen3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, rope_parameters={
            "rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 64,
            "beta_fast": 16.0, "beta_slow": 0.5})), qwen_layer, torch.float32)
    # Phi-3's LongRoPE within its original context of 64 over the first
    # 3/4 of each 16-wide head (Phi-4-mini's partial_rotary_factor): each of
    # the 6 frequencies divided by its short factor, cos and sin scaled by
    # sqrt(1 + ln(256/64) / ln 64).
    save(outdir, "phi3_longrope", Phi3ForCausalLM(Phi3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, pad_token_id=0, max_position_embeddings=256, original_max_position_embeddings=64,
        rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.75,
                         "short_factor": [1.0, 1.5, 2.0, 4.0, 5.0, 8.0],
                         "long_factor": [2.0, 3.0, 5.0, 9.0, 10.0, 11.0]})), qwen_layer, torch.float32)


if __name__ == "__main__":
    main()
