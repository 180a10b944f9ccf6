package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
)

// readmeNotHere are README commands this test cannot run on a development
// machine, by prefix, with the reason; each must still be in the README.
var readmeNotHere = map[string]string{
	"bin/tpucc generate --model build/demo-model/qwen3": "the model is made by make demo-model (transformers, .venv-hf)",
	"bin/tpucc run block.pjrt":                          "it runs on a TPU VM",
	"bin/tpucc train --model build/demo-model/qwen3":    "the model is made by make demo-model (transformers, .venv-hf)",
}

// readmeCommands returns README's command lines for bin/tpucc, in order, as
// a shell would read them: continuation lines joined, comments dropped.
func readmeCommands(t *testing.T, readme string) []string {
	var cmds []string
	inCode := false
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if !inCode || !strings.HasPrefix(line, "bin/tpucc ") {
			continue
		}
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if c, _, ok := strings.Cut(line, " #"); ok {
			line = c
		}
		if strings.ContainsAny(line, "'\"$`|;&<>*") {
			t.Fatalf("README command needs a shell, which this test does not have: %s", line)
		}
		cmds = append(cmds, strings.Join(strings.Fields(line), " "))
	}
	return cmds
}

// TestREADMECommands runs every bin/tpucc command of README.md as written,
// in order, in a directory that holds what a fresh clone has (go.mod,
// examples/, and the .venv-tpu that make venv-tpu creates): each must succeed, so a
// reader who types them gets no error.
func TestREADMECommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(readme))
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands in README.md", len(cmds))
	}
	for prefix := range readmeNotHere {
		if !strings.Contains(string(readme), prefix) {
			t.Errorf("readmeNotHere lists %q, which README.md no longer has", prefix)
		}
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	// go.mod marks the directory as the project, whose .venv-tpu the
	// plugin search looks in (pjrt.ProjectRoot).
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".venv-tpu")); err == nil {
		if err := os.Symlink(filepath.Join(root, ".venv-tpu"), filepath.Join(dir, ".venv-tpu")); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, cmd := range cmds {
		if why := notHere(cmd); why != "" {
			t.Logf("not run here (%s): %s", why, cmd)
			continue
		}
		r := tpucc(t, "", strings.Fields(cmd)[1:]...)
		if r.code != 0 || strings.Contains(r.stderr, "internal error") {
			t.Errorf("%s: exit status %d\n%s", cmd, r.code, r.stderr)
		}
	}
}

func notHere(cmd string) string {
	for prefix, why := range readmeNotHere {
		if strings.HasPrefix(cmd, prefix) && !(strings.Contains(prefix, ".pjrt") && backend.HasTPU()) {
			return why
		}
	}
	return ""
}

// The extraction reads lines as a shell would.
func TestReadmeCommandExtraction(t *testing.T) {
	md := "text bin/tpucc no\n```sh\nbin/tpucc run a.tir --seed 1   # comment\nbin/tpucc build a.tir \\\n    -o b.hlo\ngo build ./x\n```\nbin/tpucc outside\n"
	got := strings.Join(readmeCommands(t, md), "\n")
	if want := "bin/tpucc run a.tir --seed 1\nbin/tpucc build a.tir -o b.hlo"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
