"""Config variants of every family `tpucc generate` loads, as tiny random
checkpoints with what transformers computes for them.

Usage: sweep.py OUTDIR [NAME ...]      (all variants when no NAME is given)
       sweep.py --list

oracle.py keeps one tiny checkpoint per family; a checkpoint from the Hub
differs from it in ways the family's configuration class honours: tied or
untied embeddings, biases, MQA, MHA or GQA, a head_dim apart from
hidden/heads, rope scaling, windows and layer types, softcaps, multipliers,
MoE routing, odd vocabularies, fields left out (the class's defaults). Each
variant here is one family's small config with some of those changed; it is
saved with save_pretrained into OUTDIR/NAME, config.json is edited when the
variant drops fields, and the model is loaded back from the directory with
AutoModelForCausalLM (so that transformers computes what config.json says)
before oracle.py's oracle writes OUTDIR/NAME/oracle.json (logits of the
prompts, greedy tokens, their smallest margin).

models/sweep_test.go (TestConfigSweep, run when TPUCC_CFGSWEEP names
OUTDIR) compares tpucc's generate and train with them.
"""

import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import oracle, randomize  # noqa: E402

SMALL = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2)
MOE = dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24)
DEFAULTS = ["*defaults*"]  # drop every field equal to the class's default
# but these: tpucc refuses a config without max_position_embeddings (it
# bounds generate's positions), and the others name the model.
LEGACY = ["*legacy*"]  # rope_parameters written in the legacy fields
KEEP = ("model_type", "architectures", "max_position_embeddings")
SLIDE3 = ["sliding_attention", "full_attention", "sliding_attention"]

# family: (configuration class, its small config)
FAMILIES = {
    "qwen3": ("Qwen3Config", dict(SMALL, head_dim=16)),
    "qwen3_moe": ("Qwen3MoeConfig", dict(SMALL, head_dim=8, **MOE)),
    "qwen2": ("Qwen2Config", SMALL),
    "qwen2_moe": ("Qwen2MoeConfig", dict(SMALL, shared_expert_intermediate_size=40, **MOE)),
    "llama": ("LlamaConfig", SMALL),
    "mistral": ("MistralConfig", dict(SMALL, sliding_window=6)),
    "mixtral": ("MixtralConfig", dict(SMALL, intermediate_size=24, num_local_experts=8, num_experts_per_tok=2)),
    "phi3": ("Phi3Config", dict(SMALL, pad_token_id=0, bos_token_id=1, eos_token_id=2)),
    "granite": ("GraniteConfig", dict(SMALL, embedding_multiplier=2.0, attention_multiplier=0.3,
                                      residual_multiplier=0.6, logits_scaling=3.0)),
    "olmo2": ("Olmo2Config", dict(SMALL, pad_token_id=0, eos_token_id=2)),
    "gemma2": ("Gemma2Config", dict(SMALL, head_dim=16, query_pre_attn_scalar=24, sliding_window=6,
                                    attn_logit_softcapping=3.0, final_logit_softcapping=5.0)),
    "gemma3": ("Gemma3TextConfig", dict(SMALL, head_dim=16, query_pre_attn_scalar=24, sliding_window=6)),
    "gemma4": ("Gemma4TextConfig", dict(SMALL, head_dim=16, global_head_dim=32, sliding_window=6,
                                        layer_types=SLIDE3, hidden_size_per_layer_input=8,
                                        vocab_size_per_layer_input=64)),
}


def rope(kind, **kw):
    return {"rope_parameters": dict({"rope_type": kind, "rope_theta": 10000.0}, **kw)}


# name: (family, config changes, config.json fields dropped after saving)
VARIANTS = {
    # Qwen3
    "qwen3_untied_mha_bias": ("qwen3", dict(tie_word_embeddings=False, num_key_value_heads=4, attention_bias=True), []),
    "qwen3_mqa_hd12_tied": ("qwen3", dict(num_key_value_heads=1, head_dim=12, tie_word_embeddings=True), []),
    "qwen3_layer_types": ("qwen3", dict(use_sliding_window=True, sliding_window=5, layer_types=SLIDE3), []),
    "qwen3_window_layers": ("qwen3", dict(use_sliding_window=True, sliding_window=5, max_window_layers=2),
                            ["layer_types"]),
    "qwen3_window_off": ("qwen3", dict(use_sliding_window=False, sliding_window=5, max_window_layers=0),
                         ["layer_types"]),
    "qwen3_eps_vocab": ("qwen3", dict(rms_norm_eps=0.05, vocab_size=67), []),
    "qwen3_linear_theta": ("qwen3", rope("linear", rope_theta=1e6, factor=3.0), []),
    "qwen3_yarn": ("qwen3", rope("yarn", factor=4.0, original_max_position_embeddings=32), []),
    "qwen3_dynamic": ("qwen3", rope("dynamic", factor=2.0), []),
    "qwen3_no_head_dim": ("qwen3", dict(head_dim=128), ["head_dim"]),
    # Qwen3-MoE
    "qwen3_moe_top1": ("qwen3_moe", dict(num_experts=4, num_experts_per_tok=1, norm_topk_prob=False), []),
    "qwen3_moe_top3_norm": ("qwen3_moe", dict(num_experts_per_tok=3, norm_topk_prob=True, decoder_sparse_step=2,
                                              moe_intermediate_size=40), []),
    "qwen3_moe_tied_bias_mqa": ("qwen3_moe", dict(tie_word_embeddings=True, attention_bias=True, num_key_value_heads=1,
                                                  mlp_only_layers=[0, 2]), []),
    "qwen3_moe_top1_norm": ("qwen3_moe", dict(num_experts_per_tok=1, norm_topk_prob=True), []),
    # Qwen2
    "qwen2_untied_mha": ("qwen2", dict(num_key_value_heads=4, tie_word_embeddings=False), []),
    "qwen2_all_sliding": ("qwen2", dict(use_sliding_window=True, sliding_window=5, max_window_layers=0,
                                        num_key_value_heads=1), ["layer_types"]),
    "qwen2_window_unused": ("qwen2", dict(use_sliding_window=False, sliding_window=5), ["layer_types"]),
    "qwen2_yarn_betas": ("qwen2", dict(max_position_embeddings=256, **rope(
        "yarn", factor=2.5, original_max_position_embeddings=64, beta_fast=16.0, beta_slow=0.5)), []),
    "qwen2_hd12_linear": ("qwen2", dict(head_dim=12, **rope("linear", factor=2.0)), []),
    # Qwen2-MoE
    "qwen2_moe_norm_top1": ("qwen2_moe", dict(num_experts_per_tok=1, norm_topk_prob=True), []),
    "qwen2_moe_top3_step2": ("qwen2_moe", dict(num_experts_per_tok=3, decoder_sparse_step=2, qkv_bias=False,
                                               tie_word_embeddings=True), []),
    "qwen2_moe_sliding": ("qwen2_moe", dict(use_sliding_window=True, sliding_window=5, max_window_layers=2),
                          ["layer_types"]),
    "qwen2_moe_sliding_types": ("qwen2_moe", dict(use_sliding_window=True, sliding_window=5, max_window_layers=2), []),
    # Llama
    "llama_tied_mha_linear": ("llama", dict(tie_word_embeddings=True, num_key_value_heads=4, **rope("linear", factor=2.0)), []),
    "llama_mqa_hd12_bias": ("llama", dict(num_key_value_heads=1, head_dim=12, attention_bias=True), []),
    "llama_mlp_bias_only": ("llama", dict(mlp_bias=True, vocab_size=97, rms_norm_eps=0.05), []),
    "llama_llama3": ("llama", dict(max_position_embeddings=512, **rope(
        "llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=128)), []),
    "llama_yarn": ("llama", rope("yarn", factor=4.0, original_max_position_embeddings=32), []),
    "llama_dynamic": ("llama", rope("dynamic", factor=2.0), []),
    # The prompts and the 32 new tokens reach position 48 of 50.
    "llama_dynamic_edge": ("llama", dict(max_position_embeddings=50, **rope("dynamic", factor=4.0)), []),
    "llama_no_eps": ("llama", dict(rms_norm_eps=1e-6), ["rms_norm_eps"]),
    # Mistral
    "mistral_hd16_mha_tied": ("mistral", dict(head_dim=16, num_key_value_heads=4, tie_word_embeddings=True), []),
    "mistral_no_window": ("mistral", dict(sliding_window=None, **rope("default", rope_theta=1e6)), []),
    "mistral_window_20": ("mistral", dict(sliding_window=20, num_key_value_heads=1), []),
    "mistral_window_default": ("mistral", dict(), ["sliding_window"]),
    # Mixtral
    "mixtral_top1": ("mixtral", dict(num_local_experts=4, num_experts_per_tok=1, head_dim=16), []),
    "mixtral_top3_mqa_tied": ("mixtral", dict(num_experts_per_tok=3, num_key_value_heads=1, tie_word_embeddings=True,
                                              sliding_window=5), []),
    "mixtral_no_eps": ("mixtral", dict(rms_norm_eps=1e-5), ["rms_norm_eps"]),
    # Phi-3
    "phi3_mha_tied": ("phi3", dict(num_key_value_heads=4, tie_word_embeddings=True), []),
    "phi3_window_hd12": ("phi3", dict(sliding_window=5, head_dim=12, num_key_value_heads=1), []),
    "phi3_partial": ("phi3", dict(partial_rotary_factor=0.5), []),
    "phi3_longrope": ("phi3", dict(max_position_embeddings=256, original_max_position_embeddings=64, **rope(
        "longrope", short_factor=[1.0 + 0.1 * i for i in range(4)], long_factor=[2.0 + 0.5 * i for i in range(4)])), []),
    "phi3_longrope_legacy": ("phi3", dict(max_position_embeddings=256, original_max_position_embeddings=64, **rope(
        "longrope", short_factor=[1.0, 1.5, 2.0, 4.0], long_factor=[2.0, 3.0, 5.0, 9.0])), LEGACY),
    # Phi-4-mini's form: LongRoPE over the first 3/4 of each head.
    "phi3_partial_longrope": ("phi3", dict(max_position_embeddings=256, original_max_position_embeddings=64, **rope(
        "longrope", partial_rotary_factor=0.75, short_factor=[1.0, 1.5, 3.0], long_factor=[2.0, 3.0, 5.0])), []),
    "phi3_no_eps": ("phi3", dict(rms_norm_eps=1e-5), ["rms_norm_eps"]),
    # Granite
    "granite_tied_bias_mqa": ("granite", dict(tie_word_embeddings=True, attention_bias=True, mlp_bias=True,
                                              num_key_value_heads=1, embedding_multiplier=12.0,
                                              attention_multiplier=0.05, residual_multiplier=0.22,
                                              logits_scaling=8.0), []),
    "granite_hd12_linear": ("granite", dict(head_dim=12, **rope("linear", factor=2.0)), []),
    # OLMo 2
    "olmo2_bias_mha": ("olmo2", dict(attention_bias=True, num_key_value_heads=4, tie_word_embeddings=True), []),
    "olmo2_mqa_eps": ("olmo2", dict(num_key_value_heads=1, rms_norm_eps=0.05), []),
    "olmo2_no_eps": ("olmo2", dict(rms_norm_eps=1e-5), ["rms_norm_eps"]),
    # Gemma 2
    "gemma2_no_caps_untied": ("gemma2", dict(attn_logit_softcapping=None, final_logit_softcapping=None,
                                             tie_word_embeddings=False, num_key_value_heads=1), []),
    "gemma2_types_bias": ("gemma2", dict(layer_types=["full_attention", "sliding_attention", "full_attention"],
                                         sliding_window=4, attention_bias=True, head_dim=8,
                                         query_pre_attn_scalar=8), []),
    "gemma2_mha_linear": ("gemma2", dict(num_key_value_heads=4, **rope("linear", factor=2.0)), []),
    # Gemma 3
    "gemma3_softcap_untied": ("gemma3", dict(final_logit_softcapping=5.0, tie_word_embeddings=False,
                                             num_key_value_heads=4, attention_bias=True), []),
    "gemma3_pattern2": ("gemma3", dict(sliding_window_pattern=2, head_dim=8, query_pre_attn_scalar=8,
                                       num_key_value_heads=1), ["layer_types"]),
    "gemma3_eps_vocab": ("gemma3", dict(rms_norm_eps=0.05, vocab_size=67,
                                        layer_types=["sliding_attention", "full_attention", "full_attention"]), []),
    "gemma3_attn_softcap": ("gemma3", dict(attn_logit_softcapping=3.0), []),
    "gemma3_legacy_rope": ("gemma3", dict(rope_parameters={
        "sliding_attention": {"rope_type": "default", "rope_theta": 20000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}}), LEGACY),
    "llama_llama3_legacy": ("llama", dict(max_position_embeddings=512, **rope(
        "llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=128)), LEGACY),
    "qwen3_linear_legacy": ("qwen3", rope("linear", rope_theta=1e6, factor=3.0), LEGACY),
    "mixtral_legacy_theta": ("mixtral", rope("default", rope_theta=5e5), LEGACY),
    # Gemma 4
    "gemma4_dense_untied": ("gemma4", dict(tie_word_embeddings=False, final_logit_softcapping=None,
                                           hidden_size_per_layer_input=0), []),
    "gemma4_keqv_shared": ("gemma4", dict(attention_k_eq_v=True, num_global_key_value_heads=1, num_kv_shared_layers=1,
                                          final_logit_softcapping=5.0), []),
    "gemma4_moe_top1": ("gemma4", dict(enable_moe_block=True, num_experts=4, top_k_experts=1, moe_intermediate_size=24), []),
    # Odd sizes: five heads, widths that no vector divides (torch's grouped
    # experts want rows of a multiple of 16 bytes).
    "qwen3_odd_sizes": ("qwen3", dict(hidden_size=40, num_attention_heads=5, num_key_value_heads=1, head_dim=6,
                                      intermediate_size=37, vocab_size=71), []),
    "llama_odd_sizes": ("llama", dict(hidden_size=36, num_attention_heads=6, num_key_value_heads=3, head_dim=10,
                                      intermediate_size=29, vocab_size=67, tie_word_embeddings=True), []),
    "qwen2_moe_odd_sizes": ("qwen2_moe", dict(hidden_size=24, num_attention_heads=3, num_key_value_heads=3,
                                              moe_intermediate_size=12, shared_expert_intermediate_size=20,
                                              num_experts=5, num_experts_per_tok=3, vocab_size=65), []),
    "gemma2_odd_sizes": ("gemma2", dict(hidden_size=28, num_attention_heads=7, num_key_value_heads=1, head_dim=4,
                                        intermediate_size=19, vocab_size=79, query_pre_attn_scalar=4), []),
    # Fields that change only training: dropout, router noise, the MoE
    # router's auxiliary loss.
    "llama_attn_dropout": ("llama", dict(attention_dropout=0.1), []),
    "phi3_resid_pdrop": ("phi3", dict(resid_pdrop=0.1, embd_pdrop=0.1), []),
    "mixtral_jitter": ("mixtral", dict(router_jitter_noise=0.1), []),
    "qwen3_moe_router_logits": ("qwen3_moe", dict(output_router_logits=True, router_aux_loss_coef=0.1), []),
    "qwen2_moe_router_logits": ("qwen2_moe", dict(output_router_logits=True), []),
    "mixtral_router_logits": ("mixtral", dict(output_router_logits=True, router_aux_loss_coef=0.1), []),
}

# Each family once more with every field that equals its class's default
# left out of config.json.
for family in FAMILIES:
    VARIANTS[family + "_defaults"] = (family, {}, DEFAULTS)

def legacy_rope(cfg):
    """Rewrites rope_parameters as configs saved before transformers 5 and
    most Hub configs have them: rope_theta and rope_scaling at the top,
    Gemma 3's sliding layers' theta as rope_local_base_freq."""
    rp = cfg.pop("rope_parameters")
    if "full_attention" in rp:
        cfg["rope_local_base_freq"] = rp["sliding_attention"]["rope_theta"]
        rp = rp["full_attention"]
    rp = dict(rp)
    cfg["rope_theta"] = rp.pop("rope_theta")
    cfg["rope_scaling"] = rp if rp.get("rope_type", "default") != "default" else None


def make(name):
    family, changes, drop = VARIANTS[name]
    cls, small = FAMILIES[family]
    kwargs = dict(small, **changes)
    if family == "qwen3_moe" and "mlp_only_layers" not in kwargs:
        kwargs["mlp_only_layers"] = [1]
    return getattr(transformers, cls)(**kwargs), drop


def build(outdir, name):
    """Builds the variant with the first of a few seeds whose greedy choices
    are no near ties (margin 1e-3), else the last."""
    base = 100 + list(VARIANTS).index(name)
    for seed in range(base, base + 5000, 1000):
        if build_seed(outdir, name, seed) >= 1e-3:
            return


def build_seed(outdir, name, seed):
    config, drop = make(name)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    randomize(model, 1000 + seed)
    path = os.path.join(outdir, name)
    model.save_pretrained(path)
    if drop:
        cfg_path = os.path.join(path, "config.json")
        with open(cfg_path) as f:
            cfg = json.load(f)
        if drop == LEGACY:
            legacy_rope(cfg)
            drop = []
        if drop == DEFAULTS:
            # Every field the class would give anyway: a Hub config that
            # leaves them out gets the class's defaults.
            default = type(config)().to_dict()
            drop = [k for k, v in cfg.items() if k not in KEEP and default.get(k, v) == v
                    and k in default]
        for k in drop:
            cfg.pop(k, None)
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=2)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    o = oracle(model)
    with open(os.path.join(path, "oracle.json"), "w") as f:
        json.dump(o, f)
    return o["margin"]


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(VARIANTS))
        return
    outdir = sys.argv[1]
    for name in sys.argv[2:] or list(VARIANTS):
        try:
            build(outdir, name)
        except Exception as e:  # a config transformers itself refuses is reported, not fatal
            print(f"{name}: transformers: {type(e).__name__}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
