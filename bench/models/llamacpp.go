package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// llamaGen is the decode steps llama.cpp times, as llama-bench -n 64.
const llamaGen = 64

// llamaResult is the llama.cpp peer's output (bench/models/llama/peer.py): tokens/s.
type llamaResult struct {
	system          string
	prefill, decode float64
}

// add records one line of the peer's output.
func (l *llamaResult) add(line []byte) error {
	var r struct {
		System     *string
		Test       string
		Tokens     int
		TokensPerS float64 `json:"tokens_per_s"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return fmt.Errorf("llama.cpp peer: %q: %v", line, err)
	}
	switch {
	case r.System != nil:
		l.system = *r.System
	case r.Test == "prefill" && r.TokensPerS > 0:
		l.prefill = r.TokensPerS
	case r.Test == "decode" && r.TokensPerS > 0:
		l.decode = r.TokensPerS
	default:
		return fmt.Errorf("llama.cpp peer: %q: want a system line or a prefill or decode figure", line)
	}
	return nil
}

// tpuccRates are tpucc's tokens/s beside llama.cpp's: a prefill of prompt tokens
// (dense_prefill's time) and one decode step at batch 1 (dense_decode_b1's); 0
// where the workload did not run.
func tpuccRates(tp map[string]float64, prompt int) (prefill, decode float64) {
	if s := tp["dense_prefill"]; s > 0 {
		prefill = float64(prompt) / s
	}
	if s := tp["dense_decode_b1"]; s > 0 {
		decode = 1 / s
	}
	return prefill, decode
}

// ratio is a/b, or 0 (n/a) where either is missing.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// llamaCompare times the dense model m on llama.cpp and prints its table; the
// results are tpucc's tokens/s over llama.cpp's (0: n/a). A peer that cannot run
// says why on its own line.
func llamaCompare(m benchModel, tp map[string]float64) (decode, prefill float64) {
	if tp["dense_prefill"] == 0 && tp["dense_decode_b1"] == 0 {
		return 0, 0
	}
	prompt := m.workloads[0].tokens // the model's prefill workload
	t0 := time.Now()
	res, err := runLlama(m, prompt)
	if err != nil {
		fmt.Printf("bench/models: llama.cpp peer: %v; vs_llamacpp_decode and vs_llamacpp_prefill are n/a\n\n", err)
		return 0, 0
	}
	fmt.Fprintf(os.Stderr, "bench/models: llama.cpp peer took %.0f s\n", time.Since(t0).Seconds())
	tpPre, tpDec := tpuccRates(tp, prompt)
	fmt.Printf("llama.cpp: %s\n", res.system)
	fmt.Printf("%-24s %16s %12s %16s\n", fmt.Sprintf("llama.cpp, %s GGUF", *dtype), "llama.cpp tok/s", "tpucc tok/s", "tpucc/llama.cpp")
	fmt.Printf("%-24s %16s %12s %16s\n", fmt.Sprintf("prefill %d", prompt), fmtRate(res.prefill), fmtRate(tpPre), fmtSpeed(ratio(tpPre, res.prefill)))
	fmt.Printf("%-24s %16s %12s %16s\n", "decode b1", fmtRate(res.decode), fmtRate(tpDec), fmtSpeed(ratio(tpDec, res.decode)))
	fmt.Println()
	return ratio(tpDec, res.decode), ratio(tpPre, res.prefill)
}

func fmtRate(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// runLlama runs bench/models/llama/peer.py with .venv-llama's interpreter on m's
// GGUF checkpoint in -dtype.
func runLlama(m benchModel, prompt int) (llamaResult, error) {
	root := repoRoot()
	venv := filepath.Join(root, ".venv-llama")
	if _, err := os.Stat(filepath.Join(venv, ".stamp")); err != nil {
		return llamaResult{}, errors.New("no .venv-llama here (`make venv-llama` builds llama-cpp-python for this host)")
	}
	gguf, err := llamaCheckpoint(m, root)
	if err != nil {
		return llamaResult{}, err
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), filepath.Join(root, "bench", "models", "llama", "peer.py"),
		gguf, strconv.Itoa(*threads), strconv.Itoa(prompt), strconv.Itoa(llamaGen), strconv.Itoa(*repeat))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return llamaResult{}, err
	}
	if err := cmd.Start(); err != nil {
		return llamaResult{}, err
	}
	var res llamaResult
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if err := res.add(sc.Bytes()); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return llamaResult{}, err
		}
	}
	if err := cmd.Wait(); err != nil {
		return llamaResult{}, fmt.Errorf("bench/models/llama/peer.py failed: %v", err)
	}
	if res.prefill == 0 || res.decode == 0 {
		return llamaResult{}, errors.New("bench/models/llama/peer.py gave no prefill or no decode figure")
	}
	return res, nil
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
