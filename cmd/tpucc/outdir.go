package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tpucc/tpucc/internal/regfile"
)

// manifestName is the file in an --output-dir that lists the files the
// last run wrote there, one name a line after a comment line. A run
// removes what the previous run's manifest lists and it did not write
// again (result1.npy of a run with two results, arg0.npy of a run with
// --save-inputs), so the directory holds exactly one run's outputs; files
// tpucc did not list are never touched.
const manifestName = "tpucc-outputs.txt"

// maxManifest bounds how much of a manifest is read: a real one lists a
// few names.
const maxManifest = 1 << 20

// outputName is what a manifest may name for removal: run's own outputs,
// never a path.
var outputName = regexp.MustCompile(`^(result|arg)[0-9]+\.npy$`)

// manifest is the manifest text for files.
func manifest(files []string) []byte {
	var b bytes.Buffer
	b.WriteString("# written by tpucc run: the files of the last run into this directory\n")
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	return b.Bytes()
}

// previousOutputs is what dir's manifest names that a run may remove: the
// names outputName accepts. A missing, unreadable or odd manifest (not a
// regular file, too long) names nothing.
func previousOutputs(dir string) []string {
	data, err := regfile.Read(filepath.Join(dir, manifestName), maxManifest, regfile.NoFollow)
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if name := strings.TrimSpace(line); outputName.MatchString(name) {
			names = append(names, name)
		}
	}
	return names
}

// removeStale removes each of old that is not among kept and is a regular
// file (a directory or a link by that name is not tpucc's).
func removeStale(dir string, old, kept []string) {
	keep := map[string]bool{}
	for _, k := range kept {
		keep[k] = true
	}
	for _, name := range old {
		path := filepath.Join(dir, name)
		if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && !keep[name] {
			os.Remove(path)
		}
	}
}
