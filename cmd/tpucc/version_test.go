package main

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"checkout, dirty", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			{Key: "vcs.revision", Value: "feef6d6a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"},
			{Key: "vcs.time", Value: "2026-12-06T01:02:03Z"}, {Key: "vcs.modified", Value: "true"}}},
			"tpucc (devel) rev feef6d6a0b1c+dirty 2026-12-06T01:02:03Z go1.26.8 linux/amd64"},
		{"released module", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"}, {Key: "vcs.modified", Value: "false"}}},
			"tpucc v0.3.0 go1.26.8 darwin/arm64"},
		{"nothing recorded", debug.BuildInfo{GoVersion: "go1.26.8"}, "tpucc (devel) go1.26.8"},
	} {
		if got := versionLine(&tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"version"}, nil, &out, &errb); st != exitOK || errb.Len() != 0 {
		t.Fatalf("status %d, stderr %q", st, errb.String())
	}
	// The test binary records no VCS settings; the line is the module version and Go's.
	if !regexp.MustCompile(`^tpucc \S+( rev [0-9a-f]{1,12}(\+dirty)?)?( \S+Z)? go\S+( \w+/\w+)?\n$`).MatchString(out.String()) {
		t.Errorf("version printed %q", out.String())
	}
	if !strings.Contains(out.String(), " go1.") {
		t.Errorf("version %q does not name the Go version", out.String())
	}
	if st := run([]string{"version", "x"}, nil, &out, &errb); st != exitUsage {
		t.Errorf("version x: status %d, want %d", st, exitUsage)
	}
}
