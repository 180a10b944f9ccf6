package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

var versionCommand = &command{
	name:    "version",
	summary: "print tpucc's module version, source revision and Go version",
	about: `Prints one line: the module version (or (devel) for a build from a checkout), the
source revision it was built from, with +dirty when the checkout had uncommitted changes, the
commit time, and the Go version and platform that built it, e.g.

  tpucc (devel) rev 1a2b3c4d5e6f+dirty 2026-12-06T01:02:03Z go1.26.8 linux/amd64

A part the build did not record (go run, go test, a build without -buildvcs) is left out.
`,
	run: cmdVersion,
}

func cmdVersion(e *env, _ *parsed) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("tpucc version: this binary carries no build information")
	}
	_, err := fmt.Fprintln(e.stdout, versionLine(bi))
	return err
}

// versionLine formats bi as the version command prints it.
func versionLine(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	parts := []string{"tpucc", version}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if settings["vcs.modified"] == "true" {
			rev += "+dirty"
		}
		parts = append(parts, "rev", rev)
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	parts = append(parts, bi.GoVersion)
	if settings["GOOS"] != "" && settings["GOARCH"] != "" {
		parts = append(parts, settings["GOOS"]+"/"+settings["GOARCH"])
	}
	return strings.Join(parts, " ")
}
