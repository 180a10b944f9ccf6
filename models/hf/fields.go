package hf

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// fields reads config.json's keys one by one and remembers which it read, so
// that a key nobody read is refused instead of ignored.
type fields struct {
	raw  map[string]json.RawMessage
	used map[string]bool
	err  error
}

func (f *fields) fail(key, format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("field %q: %s", key, fmt.Sprintf(format, args...))
	}
}

// take marks key read and returns its raw value; absent or null is nil.
func (f *fields) take(key string) json.RawMessage {
	f.used[key] = true
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

func (f *fields) has(key string) bool { return f.take(key) != nil }

// int reads a non-negative integer, def when absent.
func (f *fields) int(key string, def int) int {
	v := f.take(key)
	if v == nil {
		return def
	}
	n, err := strconv.ParseInt(string(v), 10, 32)
	if err != nil || n < 0 {
		f.fail(key, "%s is not a non-negative integer", v)
		return def
	}
	return int(n)
}

// maxLayers bounds num_hidden_layers. Published models have at most a
// few hundred layers; the config is parsed before any tensor is read, and
// a config that named 48 million layers had the parser allocate them all
// (8 s; two billion would exhaust memory: FuzzParseConfig).
const maxLayers = 1 << 12

// layerCount reads num_hidden_layers: positive, at most maxLayers (0
// after an error).
func (f *fields) layerCount() int {
	n := f.need("num_hidden_layers")
	if n > maxLayers {
		f.fail("num_hidden_layers", "%d is more layers than this loader takes (%d)", n, maxLayers)
		return 0
	}
	return n
}

// need reads a positive integer that must be present.
func (f *fields) need(key string) int {
	if f.take(key) == nil {
		f.fail(key, "missing")
		return 0
	}
	n := f.int(key, 0)
	if n == 0 {
		f.fail(key, "must be positive")
	}
	return n
}

func (f *fields) float(key string, def float64) float64 {
	v := f.take(key)
	if v == nil {
		return def
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		f.fail(key, "%s is not a number", v)
		return def
	}
	return x
}

func (f *fields) bool(key string, def bool) bool {
	v := f.take(key)
	switch string(v) {
	case "":
		return def
	case "true":
		return true
	case "false":
		return false
	}
	f.fail(key, "%s is not true or false", v)
	return def
}

func (f *fields) str(key, def string) string {
	v := f.take(key)
	if v == nil {
		return def
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.fail(key, "%s is not a string", v)
		return def
	}
	return s
}

// ints reads a list of non-negative integers.
func (f *fields) ints(key string) []int {
	v := f.take(key)
	if v == nil {
		return nil
	}
	var xs []int
	if err := json.Unmarshal(v, &xs); err != nil || slices.ContainsFunc(xs, func(x int) bool { return x < 0 }) {
		f.fail(key, "%s is not a list of non-negative integers", v)
	}
	return xs
}

// floats reads a list of numbers.
func (f *fields) floats(key string) []float64 { return listOf[float64](f, key, "numbers") }

func (f *fields) strs(key string) []string { return listOf[string](f, key, "strings") }

// listOf reads a JSON list of T, failing with "is not a list of <what>".
func listOf[T any](f *fields, key, what string) []T {
	v := f.take(key)
	if v == nil {
		return nil
	}
	var xs []T
	if err := json.Unmarshal(v, &xs); err != nil {
		f.fail(key, "%s is not a list of %s", v, what)
	}
	return xs
}

// refuse fails when key is present with a value other than the accepted
// one: tpucc computes only the accepted behaviour.
func (f *fields) refuse(key string, accepted string) {
	v := f.take(key)
	if v != nil && string(v) != accepted {
		f.fail(key, "%s is not supported (tpucc computes only %s)", v, accepted)
	}
}

// inert are keys that do not change inference: training-only settings,
// token ids the caller reads itself, bookkeeping of the saving library.
var inert = []string{
	"_name_or_path", "architectures", "transformers_version", "torch_dtype", "dtype",
	"bos_token_id", "eos_token_id", "pad_token_id", "use_cache", "initializer_range",
	"router_aux_loss_coef", // read only with output_router_logits (Config.RouterAuxCoef)
	"output_attentions", "output_hidden_states", "return_dict", "id2label", "label2id",
	"tokenizer_class", "keys_to_ignore_at_inference",
	"cache_implementation", // the KV cache's kind in generate (Gemma's "hybrid"): tpucc keeps its own
	"auto_map",             // the Python classes of trust_remote_code
}

// leftover fails on the first key nothing read, in sorted order.
func (f *fields) leftover(arch string) {
	for _, k := range slices.Sorted(maps.Keys(f.raw)) {
		if !f.used[k] && !slices.Contains(inert, k) {
			f.fail(k, "not known to tpucc for model_type %q, so it cannot be honoured", arch)
			return
		}
	}
}
