package tokenizer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// venvPythons are the interpreters with the pinned tokenizers package, in
// the order tried: `make venv-models` (small) or `make venv-hf` (the
// transformers oracle, which pins the same tokenizers; TestSamePin checks).
var venvPythons = []string{"../../.venv-models/bin/python", "../../.venv-hf/bin/python"}

// reference runs tools/models/tokcheck.py, which trains tokenizers with the
// reference library and records what it encodes and decodes. Without the
// environment the test is skipped, except under CI, where it fails.
func reference(t *testing.T) string {
	t.Helper()
	python := ""
	for _, p := range venvPythons {
		if _, err := os.Stat(p); err == nil {
			python = p
			break
		}
	}
	if python == "" {
		msg := "the tokenizers reference is not installed (neither .venv-models nor .venv-hf): run `make venv-models` at the repository root"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI this test never skips")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	out, err := exec.Command(python, "../../tools/models/tokcheck.py", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("tokcheck.py: %v\n%s", err, out)
	}
	return dir
}

type refCase struct {
	Text           string `json:"text"`
	IDs            []int  `json:"ids"`
	Decoded        string `json:"decoded"`
	DecodedSpecial string `json:"decoded_special"`
}

// TestAgainstReference: every text encodes to the reference's ids and
// decodes to the reference's text, or (with the NFC normalizer) is refused
// because it holds a rune NFC might change.
func TestAgainstReference(t *testing.T) {
	dir := reference(t)
	var expected map[string]struct {
		Cases  []refCase `json:"cases"`
		Broken []refCase `json:"broken"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &expected); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"qwen", "gpt2", "llama3", "llama2", "metaspace", "metaspace_unk", "metaspace_split", "gemma", "starcoder", "digit_runs"} {
		tok, err := Load(filepath.Join(dir, kind, "tokenizer.json"))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		refused := 0
		for _, c := range expected[kind].Cases {
			ids, err := tok.Encode(c.Text)
			if err != nil {
				if !tok.nfc || nfcInert(c.Text) {
					t.Errorf("%s: Encode(%q): %v", kind, c.Text, err)
				}
				refused++
				continue
			}
			if !slices.Equal(ids, c.IDs) {
				t.Errorf("%s: Encode(%q)\n got %v\nwant %v", kind, c.Text, ids, c.IDs)
			}
			for _, skip := range []bool{true, false} {
				want := map[bool]string{true: c.Decoded, false: c.DecodedSpecial}[skip]
				if got, err := tok.Decode(c.IDs, skip); err != nil || got != want {
					t.Errorf("%s: Decode(%v, %v) = %q, %v; want %q", kind, c.IDs, skip, got, err, want)
				}
			}
		}
		if want := map[string]int{"qwen": 3}[kind]; refused != want {
			t.Errorf("%s: refused %d texts for NFC, want %d (combining marks, jamo, a CJK compatibility ideograph)", kind, refused, want)
		}
		for _, c := range expected[kind].Broken {
			if got, err := tok.Decode(c.IDs, true); err != nil || got != c.Decoded {
				t.Errorf("%s: Decode(%v) = %q, %v; want %q", kind, c.IDs, got, err, c.Decoded)
			}
		}
	}
}

// TestNFCTable: no rune that Python's unicodedata says NFC may change in
// context is taken as inert.
func TestNFCTable(t *testing.T) {
	dir := reference(t)
	var nfc struct {
		Unicode    string `json:"unicode"`
		CodePoints []rune `json:"code_points"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "nfc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &nfc); err != nil {
		t.Fatal(err)
	}
	if len(nfc.CodePoints) < 2000 {
		t.Fatalf("only %d code points from Python's Unicode %s", len(nfc.CodePoints), nfc.Unicode)
	}
	for _, r := range nfc.CodePoints {
		if runeInert(r) {
			t.Errorf("U+%04X is taken as inert, but NFC may change it (Unicode %s)", r, nfc.Unicode)
		}
	}
}

// TestSamePin: the two environments the reference may come from pin the same
// tokenizers, so the comparison means the same in either.
func TestSamePin(t *testing.T) {
	pin := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "tokenizers==") {
				return line
			}
		}
		t.Fatalf("%s pins no tokenizers", path)
		return ""
	}
	a, b := pin("../../tools/models/requirements.txt"), pin("../../tools/hf/requirements.txt")
	if a != b {
		t.Errorf("tools/models pins %s, tools/hf pins %s", a, b)
	}
}
