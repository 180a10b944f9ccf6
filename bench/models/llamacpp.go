package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// llamaGen is the decode steps llama.cpp times, as llama-bench -n 64.
const llamaGen = 64

// llamaLine is one line of the peer's output (bench/models/llama/peer.py):
// its system line, its pages line (its smaps_rollup after its warm-up), or
// one run's tokens/s.
type llamaLine struct {
	system string
	test   string // "prefill" or "decode"; "" for the system and pages lines
	rate   float64
	pages  *memPages // the pages line's, nil where the peer could not read them
	isPage bool      // the pages line
}

// parseLlama reads one line of the peer's output.
func parseLlama(line []byte) (llamaLine, error) {
	var r struct {
		System     *string
		Pages      *string
		Test       string
		Tokens     int
		TokensPerS float64 `json:"tokens_per_s"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return llamaLine{}, fmt.Errorf("llama.cpp peer: %q: %v", line, err)
	}
	switch {
	case r.System != nil:
		return llamaLine{system: *r.System}, nil
	case r.Pages != nil && *r.Pages == "":
		return llamaLine{isPage: true}, nil
	case r.Pages != nil:
		p, err := parsePages([]byte(*r.Pages))
		if err != nil {
			return llamaLine{}, fmt.Errorf("llama.cpp peer: %v", err)
		}
		return llamaLine{pages: &p, isPage: true}, nil
	case (r.Test == "prefill" || r.Test == "decode") && r.TokensPerS > 0:
		return llamaLine{test: r.Test, rate: r.TokensPerS}, nil
	}
	return llamaLine{}, fmt.Errorf("llama.cpp peer: %q: want a system or pages line or a prefill or decode figure", line)
}

// tpuccRate is tokens/s from runTpucc's seconds for workload name: a prefill
// of prompt tokens, or one decode step at batch 1.
func tpuccRate(name string, s float64, prompt int) float64 {
	if s <= 0 {
		return 0
	}
	if name == "dense_prefill" {
		return float64(prompt) / s
	}
	return 1 / s
}

// ratio is a/b, or 0 (n/a) where either is missing.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// turnResult is one test's pairs of runs: each side's tokens/s and, pair by
// pair, tpucc's over llama.cpp's.
type turnResult struct{ tpucc, llama, ratios []float64 }

// takeTurns runs n pairs of each test, tpucc's run and llama.cpp's one after
// the other, the order swapped from pair to pair (ABBA), so that a pair sees
// the host as it is at one moment: on a shared VM memory bandwidth moves 2-3x
// over minutes, more than the difference measured. llama.cpp leads the first
// pair: a tpucc run right after the peer's warm-up ran at about half its
// rate in every run (tpucc's own warm-up before it did not help), and with
// the peer first no run did (docs/PERFORMANCE.md, 2026-12-07 12:17).
func takeTurns(n int, tests []string, tp, ll func(test string) (float64, error)) (map[string]*turnResult, error) {
	out := map[string]*turnResult{}
	for r := range n {
		for _, test := range tests {
			sides := []func(string) (float64, error){tp, ll}
			if r%2 == 0 {
				sides[0], sides[1] = ll, tp
			}
			var rates [2]float64
			for i, side := range sides {
				v, err := side(test)
				if err != nil {
					return nil, err
				}
				rates[i] = v
			}
			if r%2 == 0 {
				rates[0], rates[1] = rates[1], rates[0]
			}
			t := out[test]
			if t == nil {
				t = &turnResult{}
				out[test] = t
			}
			t.tpucc, t.llama = append(t.tpucc, rates[0]), append(t.llama, rates[1])
			t.ratios = append(t.ratios, ratio(rates[0], rates[1]))
		}
	}
	return out, nil
}

// median of xs (0 for none), xs left unsorted.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// llamaCompare times the dense model m on llama.cpp, in turns with tpucc's runs
// of the same tests (side), and prints its table; the results are the medians of
// the pairs' ratios, tpucc's tokens/s over llama.cpp's (0: n/a). A peer that
// cannot run says why on its own line.
func llamaCompare(m benchModel, tp map[string]float64, side *tpuccSide) (decode, prefill float64) {
	names := map[string]string{"prefill": "dense_prefill", "decode": "dense_decode_b1"}
	var tests []string
	for _, test := range []string{"prefill", "decode"} {
		if tp[names[test]] > 0 {
			tests = append(tests, test)
		}
	}
	if len(tests) == 0 {
		return 0, 0
	}
	prompt := m.workloads[0].tokens // the model's prefill workload
	t0 := time.Now()
	peer, err := startLlama(m, prompt)
	var res map[string]*turnResult
	for _, test := range tests {
		// An untimed run of each test first, after peer.py's warm-up (its
		// pages line), so that neither side's timed runs include a first
		// run (the slow run after the peer's warm-up is takeTurns' to
		// avoid).
		if err == nil {
			_, err = side.once(names[test])
		}
	}
	var own *memPages
	if p, perr := ownPages(); perr == nil {
		own = &p
	}
	if err == nil {
		res, err = takeTurns(*llamaTurns, tests, func(test string) (float64, error) {
			s, err := side.once(names[test])
			return tpuccRate(names[test], s, prompt), err
		}, peer.once)
		if cerr := peer.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Printf("bench/models: llama.cpp peer: %v; vs_llamacpp_decode and vs_llamacpp_prefill are n/a\n\n", err)
		return 0, 0
	}
	fmt.Fprintf(os.Stderr, "bench/models: llama.cpp peer and its turns took %.0f s\n", time.Since(t0).Seconds())
	printTurns(peer.system, prompt, res)
	fmt.Printf("resident memory after the warm-up: llama.cpp %v; tpucc %v\n\n", peer.pages, own)
	get := func(test string) float64 {
		if t := res[test]; t != nil {
			return median(t.ratios)
		}
		return 0
	}
	return get("decode"), get("prefill")
}

// printTurns prints the llama.cpp table: each side's median tokens/s over the
// turns, and the median of the pairs' ratios (with their range on stderr).
func printTurns(system string, prompt int, res map[string]*turnResult) {
	fmt.Printf("llama.cpp: %s\n", system)
	fmt.Printf("%-24s %16s %12s %16s\n", fmt.Sprintf("llama.cpp, %s GGUF", *dtype), "llama.cpp tok/s", "tpucc tok/s", "tpucc/llama.cpp")
	for _, test := range []string{"prefill", "decode"} {
		label := map[string]string{"prefill": fmt.Sprintf("prefill %d", prompt), "decode": "decode b1"}[test]
		t := res[test]
		if t == nil {
			t = &turnResult{}
		}
		fmt.Printf("%-24s %16s %12s %16s\n", label, fmtRate(median(t.llama)), fmtRate(median(t.tpucc)), fmtSpeed(median(t.ratios)))
		if len(t.ratios) > 0 {
			fmt.Fprintf(os.Stderr, "bench/models: llama.cpp %s: %d pairs in turns, tpucc/llama.cpp from %.3f to %.3f\n",
				test, len(t.ratios), slices.Min(t.ratios), slices.Max(t.ratios))
			fmt.Fprintf(os.Stderr, "bench/models: llama.cpp %s: pair by pair, tok/s tpucc/llama.cpp:%s\n", test, pairList(t))
		}
	}
	fmt.Println("(each figure the median of -turns pairs of runs, tpucc's and llama.cpp's one after the other)")
}

// pairList is each pair's tokens/s, tpucc's over llama.cpp's, in the order
// run: a pair far from the others says which side was held up.
func pairList(t *turnResult) string {
	var b strings.Builder
	for i := range t.ratios {
		fmt.Fprintf(&b, " %.1f/%.1f", t.tpucc[i], t.llama[i])
	}
	return b.String()
}

func fmtRate(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// llamaPeer is bench/models/llama/peer.py in turns mode: one timed run of a
// test per request.
type llamaPeer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	system string
	pages  *memPages // after the peer's warm-up; nil where it could not read them
}

// startLlama starts the peer with .venv-llama's interpreter on m's GGUF
// checkpoint in -dtype and reads its system line and, once the peer has
// warmed up, its pages line.
func startLlama(m benchModel, prompt int) (*llamaPeer, error) {
	root := repoRoot()
	venv := filepath.Join(root, ".venv-llama")
	if _, err := os.Stat(filepath.Join(venv, ".stamp")); err != nil {
		return nil, errors.New("no .venv-llama here (`make venv-llama` builds llama-cpp-python for this host)")
	}
	gguf, err := llamaCheckpoint(m, root)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), filepath.Join(root, "bench", "models", "llama", "peer.py"),
		gguf, strconv.Itoa(*threads), strconv.Itoa(prompt), strconv.Itoa(llamaGen), "turns")
	cmd.Stderr = os.Stderr
	p := &llamaPeer{cmd: cmd}
	if p.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.out = bufio.NewScanner(stdout)
	line, err := p.next()
	if err == nil && line.test != "" {
		err = fmt.Errorf("llama.cpp peer: a %s figure before its system line", line.test)
	}
	if err != nil {
		p.close()
		return nil, err
	}
	p.system = line.system
	// The peer warms up next, then says which pages its memory is in.
	line, err = p.next()
	if err == nil && !line.isPage {
		err = fmt.Errorf("llama.cpp peer: %+v after its system line, want its pages line", line)
	}
	if err != nil {
		p.close()
		return nil, err
	}
	p.pages = line.pages
	return p, nil
}

// next reads the peer's next line.
func (p *llamaPeer) next() (llamaLine, error) {
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return llamaLine{}, err
		}
		return llamaLine{}, errors.New("bench/models/llama/peer.py stopped before its figure (its stderr is above)")
	}
	return parseLlama(p.out.Bytes())
}

// once times one run of test ("prefill" or "decode") on the peer: tokens/s.
func (p *llamaPeer) once(test string) (float64, error) {
	if _, err := fmt.Fprintln(p.in, test); err != nil {
		return 0, err
	}
	line, err := p.next()
	if err == nil && line.test != test {
		err = fmt.Errorf("llama.cpp peer: asked for %s, got %+v", test, line)
	}
	return line.rate, err
}

// close ends the peer (its stdin closed, it exits) and waits for it.
func (p *llamaPeer) close() error {
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("bench/models/llama/peer.py failed: %v", err)
	}
	return nil
}

// llamaCheckpoint is the path of m's GGUF checkpoint in -dtype, written (by
// bench/models/llama/checkpoint.py, with .venv-hf's torch and the sdist's
// converter) the first time and kept under build/bench-models/llama, keyed by the
// config, the llama-cpp-python pin and the script.
func llamaCheckpoint(m benchModel, root string) (string, error) {
	cfg, _ := json.Marshal(m.config)
	h := sha256.New()
	h.Write(cfg)
	for _, f := range []string{"requirements.txt", "checkpoint.py"} {
		b, err := os.ReadFile(filepath.Join(root, "bench", "models", "llama", f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	dir := filepath.Join(root, "build", "bench-models", "llama", m.name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	gguf := filepath.Join(dir, "model-"+*dtype+".gguf")
	if _, err := os.Stat(gguf); err == nil {
		return gguf, nil
	}
	py := filepath.Join(root, ".venv-hf", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", errors.New("no .venv-hf here: the GGUF checkpoint is converted with its torch (`make venv-hf`)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		return "", err
	}
	logPath := filepath.Join(dir, "convert-"+*dtype+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer log.Close()
	t0 := time.Now()
	fmt.Fprintf(os.Stderr, "bench/models: writing %s (the converter's log: %s)\n", gguf, logPath)
	cmd := exec.Command(py, filepath.Join(root, "bench", "models", "llama", "checkpoint.py"), filepath.Join(dir, "config.json"),
		filepath.Join(root, ".venv-llama", "src", "vendor", "llama.cpp"), dir, *dtype)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("bench/models/llama/checkpoint.py failed (%v); see %s", err, logPath)
	}
	fmt.Fprintf(os.Stderr, "bench/models: %s written in %.0f s\n", gguf, time.Since(t0).Seconds())
	return gguf, nil
}
