// Package xlacheck drives the XLA oracle: it hands StableHLO text to real XLA (through
// xlacheck.py in the pinned .venv) and returns what XLA:CPU computes, so tests can judge
// the lowering by an authority outside tpucc.
//
// One Run is one Python process for any number of cases, so jax's start-up is paid once.
// A missing harness is an error, never a reason to skip: tests that call Find must fail
// when it fails.
package xlacheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tpucc/tpucc/internal/npy"
)

// Harness is a located oracle. Paths are absolute.
type Harness struct {
	Root   string // the module root, which holds go.mod and .venv
	Python string // Root/.venv/bin/python
	Script string // Root/tools/xlacheck/xlacheck.py

	// KeepAll keeps every case's files on disk (see Result.Dir). By default only failed
	// cases' files are kept, so that their Repro command works after Run returns.
	KeepAll bool
}

// Case is one module to run: StableHLO text whose func.func @main takes Inputs in order.
type Case struct {
	ID     string
	Module string
	Inputs []*npy.Array
}

// Result is what XLA made of a Case. When OK is false, Stage says where it failed: "parse",
// "verify", "compile", "run", or "crash" (the harness process died during or before this
// case), and Error says why, in XLA's words. Outputs are @main's results in return order.
type Result struct {
	ID      string
	OK      bool
	Stage   string
	Error   string
	Outputs []*npy.Array

	// Dir holds the case's module.hlo, inputs and outputs when they were kept, and Repro
	// is the shell command that runs the case again; both are empty otherwise.
	Dir   string
	Repro string
}

const (
	venvPython = ".venv/bin/python"
	scriptPath = "tools/xlacheck/xlacheck.py"
	reqPath    = "tools/xlacheck/requirements.txt"
	stampPath  = ".venv/.stamp"
)

// Find locates the harness from the current directory: the nearest go.mod above it is
// the root, and the venv and script must be there and the venv no older than its
// requirements.
func Find() (*Harness, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %w", err)
	}
	return findFrom(wd)
}

func findFrom(dir string) (*Harness, error) {
	root := dir
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return nil, fmt.Errorf("xlacheck: no go.mod in %s or above it", dir)
		}
		root = parent
	}
	h := &Harness{
		Root:   root,
		Python: filepath.Join(root, venvPython),
		Script: filepath.Join(root, scriptPath),
	}
	if _, err := os.Stat(h.Python); err != nil {
		return nil, fmt.Errorf("xlacheck: the oracle's Python is missing (%s): run `make venv` in %s", h.Python, root)
	}
	if _, err := os.Stat(h.Script); err != nil {
		return nil, fmt.Errorf("xlacheck: %s is missing", h.Script)
	}
	stamp, err := os.Stat(filepath.Join(root, stampPath))
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %s was not finished by `make venv` (no %s): run `make venv` in %s", filepath.Join(root, ".venv"), stampPath, root)
	}
	if req, err := os.Stat(filepath.Join(root, reqPath)); err == nil && req.ModTime().After(stamp.ModTime()) {
		return nil, fmt.Errorf("xlacheck: %s is newer than the venv: run `make venv` in %s", reqPath, root)
	}
	return h, nil
}

type manifestCase struct {
	ID     string   `json:"id"`
	Module string   `json:"module"`
	Inputs []string `json:"inputs"`
	Outdir string   `json:"outdir"`
}

type status struct {
	OK      bool   `json:"ok"`
	Stage   string `json:"stage"`
	Error   string `json:"error"`
	Outputs int    `json:"outputs"`
}

// Run runs every case in one harness process and returns one Result per case, in order.
// A case that fails is a Result with OK false, not an error; the error is for the harness
// itself failing (it could not start, or it exited non-zero), and then the Results hold
// whatever the cases it got through reported.
func (h *Harness) Run(cases []Case) ([]Result, error) {
	if len(cases) == 0 {
		return nil, nil
	}
	work, err := os.MkdirTemp("", "xlacheck-")
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %w", err)
	}
	manifest := struct {
		Cases []manifestCase `json:"cases"`
	}{}
	for i, c := range cases {
		dir := caseDir(work, i)
		if err := writeCase(dir, c); err != nil {
			os.RemoveAll(work)
			return nil, fmt.Errorf("xlacheck: case %q: %w", c.ID, err)
		}
		mc := manifestCase{ID: c.ID, Module: rel(work, dir, "module.hlo"), Outdir: rel(work, dir, "out"), Inputs: []string{}}
		for j := range c.Inputs {
			mc.Inputs = append(mc.Inputs, rel(work, dir, inputName(j)))
		}
		manifest.Cases = append(manifest.Cases, mc)
	}
	mpath := filepath.Join(work, "manifest.json")
	mjson, _ := json.MarshalIndent(manifest, "", " ")
	if err := os.WriteFile(mpath, mjson, 0o644); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("xlacheck: %w", err)
	}

	cmd := exec.Command(h.Python, h.Script, "run", mpath)
	cmd.Dir = h.Root
	var stderr strings.Builder
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	var runErr error
	if err := cmd.Run(); err != nil {
		runErr = fmt.Errorf("xlacheck: %s run %s: %v\n%s", h.Python, mpath, err, tail(stderr.String(), 4000))
	}

	results := make([]Result, len(cases))
	keepWork := h.KeepAll || runErr != nil
	for i, c := range cases {
		dir := caseDir(work, i)
		r := readResult(c, dir)
		if h.KeepAll || !r.OK || runErr != nil {
			keepWork = true
			r.Dir = dir
			inputs := make([]string, len(c.Inputs))
			for j := range inputs {
				inputs[j] = filepath.Join(dir, inputName(j))
			}
			r.Repro = h.ReproCommand(filepath.Join(dir, "module.hlo"), inputs, filepath.Join(dir, "out"))
		} else {
			os.RemoveAll(dir)
		}
		results[i] = r
	}
	if !keepWork {
		os.RemoveAll(work)
	}
	return results, runErr
}

func caseDir(work string, i int) string { return filepath.Join(work, fmt.Sprintf("case%04d", i)) }

func inputName(j int) string { return fmt.Sprintf("input%d.npy", j) }

func rel(work, dir, name string) string {
	r, _ := filepath.Rel(work, filepath.Join(dir, name))
	return r
}

func writeCase(dir string, c Case) error {
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "module.hlo"), []byte(c.Module), 0o644); err != nil {
		return err
	}
	for j, a := range c.Inputs {
		if err := npy.WriteFile(filepath.Join(dir, inputName(j)), a); err != nil {
			return fmt.Errorf("input %d: %w", j, err)
		}
	}
	return nil
}

func readResult(c Case, dir string) Result {
	r := Result{ID: c.ID}
	b, err := os.ReadFile(filepath.Join(dir, "out", "status.json"))
	if err != nil {
		r.Stage, r.Error = "crash", "no status.json: the harness never reached this case"
		return r
	}
	var st status
	if err := json.Unmarshal(b, &st); err != nil {
		r.Stage, r.Error = "crash", fmt.Sprintf("unreadable status.json: %v", err)
		return r
	}
	if !st.OK {
		r.Stage, r.Error = st.Stage, st.Error
		return r
	}
	for k := 0; k < st.Outputs; k++ {
		a, err := npy.ReadFile(filepath.Join(dir, "out", fmt.Sprintf("result%d.npy", k)))
		if err != nil {
			r.Stage, r.Error, r.Outputs = "run", err.Error(), nil
			return r
		}
		r.Outputs = append(r.Outputs, a)
	}
	r.OK = true
	return r
}

// RunOne runs a single case; see Run.
func (h *Harness) RunOne(c Case) (Result, error) {
	rs, err := h.Run([]Case{c})
	if len(rs) == 0 {
		return Result{ID: c.ID, Stage: "crash", Error: "no result"}, errors.Join(err, errors.New("xlacheck: no result"))
	}
	return rs[0], err
}

// ReproCommand is the shell command that runs one case by hand from any directory:
// cd to the root, then xlacheck.py run-one on the module and inputs, writing to outdir.
func (h *Harness) ReproCommand(module string, inputs []string, outdir string) string {
	parts := []string{"cd", shellQuote(h.Root), "&&", venvPython, scriptPath, "run-one", shellQuote(module)}
	for _, in := range inputs {
		parts = append(parts, "--input", shellQuote(in))
	}
	parts = append(parts, "--outdir", shellQuote(outdir))
	return strings.Join(parts, " ")
}

// shellQuote leaves plain paths alone and single-quotes anything else.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
