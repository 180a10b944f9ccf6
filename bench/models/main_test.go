package main

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
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
	for line, want := range map[string]llamaLine{
		`{"system": "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_BF16 = 1 |"}`:                   {system: "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_BF16 = 1 |"},
		`{"test": "prefill", "tokens": 512, "tokens_per_s": 161.25, "runs": [160.5, 161.25, 163.0]}`: {test: "prefill", rate: 161.25},
		`{"test": "decode", "tokens": 64, "tokens_per_s": 15.75}`:                                    {test: "decode", rate: 15.75},
	} {
		if got, err := parseLlama([]byte(line)); err != nil || got != want {
			t.Errorf("%s: got %+v, %v; want %+v", line, got, err, want)
		}
	}
	for line, want := range map[string]string{
		`{"test": "decode", "tokens": 64, "tokens_per_s": 0}`: `llama.cpp peer: "{\"test\": \"decode\", \"tokens\": 64, \"tokens_per_s\": 0}": want a system or pages line or a prefill or decode figure`,
		`{"test": "score", "tokens_per_s": 3}`:                `llama.cpp peer: "{\"test\": \"score\", \"tokens_per_s\": 3}": want a system or pages line or a prefill or decode figure`,
		`llama_model_load: error`:                             `llama.cpp peer: "llama_model_load: error": invalid character 'l' looking for beginning of value`,
	} {
		if _, err := parseLlama([]byte(line)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", line, err, want)
		}
	}
}

// smapsRollup is /proc/PID/smaps_rollup's text as Linux 6.18 writes it:
// 2412 MB resident, 2261 MB of it a file mapped in 2 MiB pages and 2 MB
// anonymous in 2 MiB pages.
const smapsRollup = `55ff2d637000-7ffcbe2f3000 ---p 00000000 00:00 0                          [rollup]
Rss:             2470144 kB
Pss:             2469000 kB
Anonymous:         30720 kB
AnonHugePages:      2048 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:   2315264 kB
Swap:                  0 kB
Locked:                0 kB
`

// TestPages: the resident KiB and those in 2 MiB pages (anonymous, file
// and shmem), from smaps_rollup's text as is and from the peer's pages
// line; text that is not smaps_rollup's is an error, and a peer that
// could not read it ("") gives n/a.
func TestPages(t *testing.T) {
	p, err := parsePages([]byte(smapsRollup))
	if err != nil || p != (memPages{rss: 2470144, huge: 2317312}) {
		t.Fatalf("parsePages = %+v, %v", p, err)
	}
	if got, want := p.String(), "2263 of 2412 MB in 2 MiB pages"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (*memPages)(nil).String(); got != "n/a" {
		t.Errorf("nil String() = %q, want n/a", got)
	}
	line, _ := json.Marshal(map[string]string{"pages": smapsRollup})
	if got, err := parseLlama(line); err != nil || !got.isPage || got.pages == nil || *got.pages != p {
		t.Errorf("pages line: got %+v, %v", got, err)
	}
	if got, err := parseLlama([]byte(`{"pages": ""}`)); err != nil || !got.isPage || got.pages != nil {
		t.Errorf("empty pages line: got %+v, %v; want a pages line without pages", got, err)
	}
	for text, want := range map[string]string{
		"Pss: 12 kB\n":                      "smaps_rollup: no Rss line",
		"Rss: 12 kB\nFilePmdMapped: x kB\n": `smaps_rollup: FilePmdMapped: strconv.ParseInt: parsing "x": invalid syntax`,
	} {
		if _, err := parsePages([]byte(text)); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
	line, _ = json.Marshal(map[string]string{"pages": "Pss: 12 kB\n"})
	if _, err := parseLlama(line); err == nil || err.Error() != "llama.cpp peer: smaps_rollup: no Rss line" {
		t.Errorf("a pages line without Rss: got %v", err)
	}
}

func TestLlamaRatios(t *testing.T) {
	// 512 tokens in 2.56 s is 200 tokens/s; a 125 ms step is 8 tokens/s.
	pre, dec := tpuccRate("dense_prefill", 2.56, 512), tpuccRate("dense_decode_b1", 0.125, 512)
	if math.Abs(pre-200) > 1e-9 || math.Abs(dec-8) > 1e-9 {
		t.Fatalf("tpuccRate = %v, %v; want 200, 8", pre, dec)
	}
	if r := ratio(pre, 160); math.Abs(r-1.25) > 1e-12 {
		t.Errorf("prefill ratio %v, want 1.25", r)
	}
	if r := ratio(dec, 16); math.Abs(r-0.5) > 1e-12 {
		t.Errorf("decode ratio %v, want 0.5", r)
	}
	// Decode not run: its rate and ratio are n/a.
	if dec := tpuccRate("dense_decode_b1", 0, 512); dec != 0 || ratio(dec, 16) != 0 || fmtSpeed(ratio(dec, 16)) != "n/a" {
		t.Errorf("decode not run: rate %v, shown %q", dec, fmtSpeed(ratio(dec, 16)))
	}
}

// TestTakeTurns: the sides run in pairs, the order swapped from pair to pair
// (ABBA, llama.cpp first), each pair's ratio is tpucc's rate over llama.cpp's from the same
// pair, and the result is the median of the pairs' ratios.
func TestTakeTurns(t *testing.T) {
	var order []string
	calls := map[string]int{}
	side := func(name string, rates []float64) func(string) (float64, error) {
		return func(test string) (float64, error) {
			order = append(order, name+" "+test)
			i := calls[name+test]
			calls[name+test]++
			return rates[i], nil
		}
	}
	// The host slows down pair by pair; tpucc is 1.1x llama.cpp in every pair
	// but the third (1.5x).
	tp := side("tpucc", []float64{11, 8.8, 9, 5.5})
	ll := side("llama", []float64{10, 8, 6, 5})
	res, err := takeTurns(4, []string{"decode"}, tp, ll)
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []string{"llama decode", "tpucc decode", "tpucc decode", "llama decode", "llama decode", "tpucc decode", "tpucc decode", "llama decode"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("order %v, want %v", order, wantOrder)
	}
	d := res["decode"]
	for i, want := range []float64{1.1, 1.1, 1.5, 1.1} {
		if math.Abs(d.ratios[i]-want) > 1e-12 {
			t.Errorf("pair %d: ratio %v, want %v", i, d.ratios[i], want)
		}
	}
	if m := median(d.ratios); math.Abs(m-1.1) > 1e-12 {
		t.Errorf("median ratio %v, want 1.1", m)
	}
	// A side's error stops the turns.
	boom := func(string) (float64, error) { return 0, errors.New("peer.py stopped") }
	if _, err := takeTurns(2, []string{"prefill"}, tp, boom); err == nil || err.Error() != "peer.py stopped" {
		t.Errorf("got %v, want the peer's error", err)
	}
}
