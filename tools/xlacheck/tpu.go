package xlacheck

// TPU compile-only: libtpu's compile-only client (in .venv-tpu) compiles StableHLO for
// TPU slices that are not there, down to a TPU executable. Nothing runs, so this says
// whether XLA:TPU accepts a module, not what it computes; docs/TPU_COMPILE_ONLY.md has
// the details and the figures.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	tpuVenvPython = ".venv-tpu/bin/python"
	tpuScriptPath = "tools/xlacheck/tpu_compile.py"
	tpuReqPath    = "tools/xlacheck/requirements-tpu.txt"
	tpuStampPath  = ".venv-tpu/.stamp"
)

// DefaultTPUTopologies are the slices CompileTPU compiles for when given none: the two
// current inference generations, each as the smallest slice the compile-only client
// builds with its default host bounds.
var DefaultTPUTopologies = []string{"v5e:2x2", "v6e:2x2"}

// TPUModule is one StableHLO module to compile. ID names it in results and in XLA's
// diagnostics (which read ID:LINE:COL: error: ...).
type TPUModule struct {
	ID   string
	Text string
}

// TPUResult is what XLA:TPU made of one module on one topology. Error, when OK is false,
// starts with the stage that failed ("parse: ", "verify: ", "compile: ", or "crash: "
// when the compiler process died before it reported this pair) and goes on in XLA's
// words. DeviceKind is libtpu's name for the chip ("TPU v5 lite"); it is empty only for
// a crash. CodeBytes is the size of the generated TPU code, 0 when OK is false.
type TPUResult struct {
	ID         string
	Topology   string
	DeviceKind string
	OK         bool
	Error      string
	CodeBytes  int64
}

// FindTPU locates the TPU compile-only harness from the current directory, as Find
// does, but in .venv-tpu (built by `make venv-tpu`). That venv has the oracle's pins
// plus libtpu, so the returned Harness runs XLA:CPU cases (Run) as well as CompileTPU.
func FindTPU() (*Harness, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %w", err)
	}
	return findTPUFrom(wd)
}

func findTPUFrom(dir string) (*Harness, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return nil, err
	}
	h := &Harness{
		Root:   root,
		Python: filepath.Join(root, tpuVenvPython),
		Script: filepath.Join(root, scriptPath),
	}
	if _, err := os.Stat(h.Python); err != nil {
		return nil, fmt.Errorf("xlacheck: the TPU compile-only Python is missing (%s): run `make venv-tpu` in %s", h.Python, root)
	}
	for _, p := range []string{h.Script, filepath.Join(root, tpuScriptPath)} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("xlacheck: %s is missing", p)
		}
	}
	stamp, err := os.Stat(filepath.Join(root, tpuStampPath))
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %s was not finished by `make venv-tpu` (no %s): run `make venv-tpu` in %s", filepath.Join(root, ".venv-tpu"), tpuStampPath, root)
	}
	for _, req := range []string{reqPath, tpuReqPath} {
		if fi, err := os.Stat(filepath.Join(root, req)); err == nil && fi.ModTime().After(stamp.ModTime()) {
			return nil, fmt.Errorf("xlacheck: %s is newer than the TPU venv: run `make venv-tpu` in %s", req, root)
		}
	}
	return h, nil
}

// moduleRoot is the nearest directory at or above dir that holds go.mod.
func moduleRoot(dir string) (string, error) {
	root := dir
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("xlacheck: no go.mod in %s or above it", dir)
		}
		root = parent
	}
}

type tpuLine struct {
	ID         string `json:"id"`
	Topology   string `json:"topology"`
	DeviceKind string `json:"device_kind"`
	OK         bool   `json:"ok"`
	Error      string `json:"error"`
	CodeBytes  int64  `json:"generated_code_bytes"`
}

// CompileTPU compiles every module for every topology (DefaultTPUTopologies when
// topologies is empty) in one tpu_compile.py process, which creates each topology once
// and parses each module once. It returns one result per pair, module-major:
// results[i*len(topologies)+j] is modules[i] on topologies[j]. A module XLA:TPU rejects
// is a result with OK false, not an error; the error is for the compiler process itself
// failing, and then the pairs it never reported are "crash: " results.
func (h *Harness) CompileTPU(modules []TPUModule, topologies []string) ([]TPUResult, error) {
	if len(modules) == 0 {
		return nil, nil
	}
	if len(topologies) == 0 {
		topologies = DefaultTPUTopologies
	}
	type manifestModule struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	manifest := struct {
		Modules []manifestModule `json:"modules"`
	}{}
	for _, m := range modules {
		manifest.Modules = append(manifest.Modules, manifestModule{m.ID, m.Text})
	}
	stdin, err := json.Marshal(manifest)
	if err != nil {
		return nil, fmt.Errorf("xlacheck: %w", err)
	}
	args := []string{filepath.Join(h.Root, tpuScriptPath), "--manifest", "-"}
	for _, t := range topologies {
		args = append(args, "--topology", t)
	}
	cmd := exec.Command(h.Python, args...)
	cmd.Dir = h.Root
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	runErr := cmd.Run()

	results := make([]TPUResult, 0, len(modules)*len(topologies))
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20) // one line carries one XLA error, which can be long
	var protoErr error
	for sc.Scan() && protoErr == nil {
		var l tpuLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			protoErr = fmt.Errorf("xlacheck: tpu_compile.py printed %q: %v", tail(sc.Text(), 200), err)
			break
		}
		k := len(results)
		if k == cap(results) {
			protoErr = fmt.Errorf("xlacheck: tpu_compile.py printed more results than the %d asked for", cap(results))
			break
		}
		wantID, wantTopo := modules[k/len(topologies)].ID, topologies[k%len(topologies)]
		if l.ID != wantID || l.Topology != wantTopo {
			protoErr = fmt.Errorf("xlacheck: tpu_compile.py result %d is %s on %s, want %s on %s", k, l.ID, l.Topology, wantID, wantTopo)
			break
		}
		results = append(results, TPUResult{ID: l.ID, Topology: l.Topology, DeviceKind: l.DeviceKind, OK: l.OK, Error: l.Error, CodeBytes: l.CodeBytes})
	}
	if protoErr == nil {
		protoErr = sc.Err()
	}

	var failure string
	switch {
	case runErr != nil:
		failure = fmt.Sprintf("%s %s: %v", h.Python, strings.Join(args, " "), runErr)
	case protoErr != nil:
		failure = protoErr.Error()
	case len(results) < cap(results):
		failure = fmt.Sprintf("tpu_compile.py exited 0 after %d of %d results", len(results), cap(results))
	}
	if failure == "" {
		return results, nil
	}
	for k := len(results); k < cap(results); k++ {
		results = append(results, TPUResult{
			ID:       modules[k/len(topologies)].ID,
			Topology: topologies[k%len(topologies)],
			Error:    "crash: tpu_compile.py stopped before it reported this module",
		})
	}
	return results, fmt.Errorf("xlacheck: %s\n%s", strings.TrimPrefix(failure, "xlacheck: "), tail(stderr.String(), 4000))
}
