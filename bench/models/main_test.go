package main

import (
	"math"
	"strings"
	"testing"
)

func TestSummaryLine(t *testing.T) {
	speed := map[string]float64{"dense_decode": 2.444, "moe_decode": 2.59, "dense_prefill": 1.705, "moe_prefill": 2.41,
		"vs_llamacpp_decode": 0.375, "vs_llamacpp_prefill": 1.0}
	want := "bench-models: dense_decode_speedup=2.44 moe_decode_speedup=2.59 dense_prefill_speedup=1.71 moe_prefill_speedup=2.41 vs_llamacpp_decode=0.38 vs_llamacpp_prefill=1.00"
	if got := summary(speed); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	// Nothing measured (every peer left out): every key is still there, as n/a.
	want = "bench-models: dense_decode_speedup=n/a moe_decode_speedup=n/a dense_prefill_speedup=n/a moe_prefill_speedup=n/a vs_llamacpp_decode=n/a vs_llamacpp_prefill=n/a"
	if got := summary(map[string]float64{}); got != want {
		t.Errorf("summary of nothing:\n got %s\nwant %s", got, want)
	}
}

func TestPeerRecords(t *testing.T) {
	var p peerTimes
	for _, r := range []peerRecord{
		{Mode: "eager", Name: "dense_decode_b1", Seconds: 0.288},
		{Mode: "torch.compile", Name: "dense_decode_b1", Seconds: 0.119},
		{Mode: "torch.compile static", Name: "dense_decode_b1", Seconds: 0.1187},
	} {
		if p.add(r) {
			t.Fatalf("%+v closed the workload", r)
		}
	}
	if !p.add(peerRecord{Mode: "done", Name: "dense_decode_b1"}) {
		t.Fatal(`"done" did not close the workload`)
	}
	if p.eager != 0.288 || p.compiled != 0.119 || p.static != 0.1187 || p.best() != 0.1187 || p.compileErr != "" {
		t.Errorf("got %+v (best %v)", p, p.best())
	}
	var q peerTimes
	q.add(peerRecord{Mode: "eager", Name: "moe_prefill", Seconds: 0.97})
	q.add(peerRecord{Mode: "torch.compile", Name: "moe_prefill", Error: "BackendCompilerFailed: boom"})
	if q.best() != 0 || q.compileErr != "torch.compile: BackendCompilerFailed: boom" {
		t.Errorf("a failed compile: got %+v", q)
	}
}

func TestParsePeers(t *testing.T) {
	for _, c := range []struct {
		list string
		skip bool
		want string
	}{
		{"torch,llamacpp", false, "torch,llamacpp"},
		{"llamacpp", false, "llamacpp"},
		{"torch", false, "torch"},
		{"none", false, "none"},
		{"torch,llamacpp", true, "none"},
	} {
		p, err := parsePeers(c.list, c.skip)
		if err != nil || p.String() != c.want {
			t.Errorf("parsePeers(%q, %v) = %v, %v; want %s", c.list, c.skip, p, err, c.want)
		}
	}
	_, err := parsePeers("torch,ort", false)
	if want := `-peers: unknown peer "ort" (want torch, llamacpp or none)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestLlamaLines(t *testing.T) {
	var l llamaResult
	for _, line := range []string{
		`{"system": "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_BF16 = 1 |"}`,
		`{"test": "prefill", "tokens": 512, "tokens_per_s": 161.25, "runs": [160.5, 161.25, 163.0]}`,
		`{"test": "decode", "tokens": 64, "tokens_per_s": 15.75, "runs": [15.5, 15.75, 16.0]}`,
	} {
		if err := l.add([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if l.system != "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_BF16 = 1 |" || l.prefill != 161.25 || l.decode != 15.75 {
		t.Errorf("got %+v", l)
	}
	for line, want := range map[string]string{
		`{"test": "decode", "tokens": 64, "tokens_per_s": 0}`: `llama.cpp peer: "{\"test\": \"decode\", \"tokens\": 64, \"tokens_per_s\": 0}": want a system line or a prefill or decode figure`,
		`llama_model_load: error`:                             `llama.cpp peer: "llama_model_load: error": invalid character 'l' looking for beginning of value`,
	} {
		if err := l.add([]byte(line)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", line, err, want)
		}
	}
}

func TestLlamaRatios(t *testing.T) {
	// 512 tokens in 2.56 s is 200 tokens/s; a 125 ms step is 8 tokens/s.
	tp := map[string]float64{"dense_prefill": 2.56, "dense_decode_b1": 0.125}
	pre, dec := tpuccRates(tp, 512)
	if math.Abs(pre-200) > 1e-9 || math.Abs(dec-8) > 1e-9 {
		t.Fatalf("tpuccRates = %v, %v; want 200, 8", pre, dec)
	}
	if r := ratio(pre, 160); math.Abs(r-1.25) > 1e-12 {
		t.Errorf("prefill ratio %v, want 1.25", r)
	}
	if r := ratio(dec, 16); math.Abs(r-0.5) > 1e-12 {
		t.Errorf("decode ratio %v, want 0.5", r)
	}
	// Decode not selected (-only dense_prefill): its rate and ratio are n/a.
	pre, dec = tpuccRates(map[string]float64{"dense_prefill": 2.56}, 512)
	if dec != 0 || ratio(dec, 16) != 0 || !strings.HasPrefix(fmtSpeed(ratio(pre, 160)), "1.25") {
		t.Errorf("decode not run: rates %v, %v", pre, dec)
	}
}
