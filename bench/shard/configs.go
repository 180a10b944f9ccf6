package main

// The full-size configurations, as their config.json on the Hub gives
// their text models (Gemma 4's text_config as Gemma4ForCausalLM reads it).

// qwen330B is Qwen3-30B-A3B: 48 MoE layers of 128 experts, 8 active.
const qwen330B = `{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "vocab_size": 151936,
"hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48,
"num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
"num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [],
"rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960,
"tie_word_embeddings": false, "torch_dtype": "bfloat16", "attention_bias": false, "hidden_act": "silu",
"sliding_window": null, "use_sliding_window": false, "max_window_layers": 48,
"router_aux_loss_coef": 0.001, "output_router_logits": false, "bos_token_id": 151643, "eos_token_id": 151645}`

// gemma426B is Gemma 4 26B-A4B: 30 layers (5 sliding, 1 full, repeated),
// each a dense MLP beside 128 experts of which 8 are active.
const gemma426B = `{"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text", "hidden_size": 2816,
"num_hidden_layers": 30, "intermediate_size": 2112, "num_attention_heads": 16, "num_key_value_heads": 8,
"num_global_key_value_heads": 2, "head_dim": 256, "global_head_dim": 512, "vocab_size": 262144,
"rms_norm_eps": 1e-6, "max_position_embeddings": 262144, "sliding_window": 1024,
"final_logit_softcapping": 30.0, "use_double_wide_mlp": false, "num_kv_shared_layers": 0,
"hidden_size_per_layer_input": 0, "attention_k_eq_v": true, "enable_moe_block": true, "num_experts": 128,
"top_k_experts": 8, "moe_intermediate_size": 704, "tie_word_embeddings": true,
"hidden_activation": "gelu_pytorch_tanh", "attention_bias": false,
"layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention",
"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
"rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
"sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}}`
