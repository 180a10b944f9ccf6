package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// memPages is how much of a process's memory is resident and how much of
// that in 2 MiB pages, in KiB, as Linux's /proc/PID/smaps_rollup counts
// them. A decode step reads every weight once, and which pages it reads
// them from is the one thing besides the kernels that differs between the
// sides: llama.cpp maps its GGUF, whose page cache is in 2 MiB folios when
// the file was read from disk and in 4 KiB pages when it was just written,
// while tpucc's weights are anonymous memory (4 KiB pages where
// transparent_hugepage is "madvise"). On this project's VM neither kind
// moved the f32 decode figure beyond its spread (docs/PERFORMANCE.md,
// 2026-12-07 19:35: 1.09 and 1.15 with the GGUF in 2 MiB pages, 1.11
// and 0.93 in 4 KiB ones, alternated), but a host may differ: the table
// says which pages each side read.
type memPages struct {
	rss, huge int64 // KiB resident; KiB of it in 2 MiB pages (anonymous, file or shmem)
}

// hugeKeys are the smaps_rollup counts of resident memory mapped in 2 MiB
// pages.
var hugeKeys = []string{"AnonHugePages", "FilePmdMapped", "ShmemPmdMapped"}

// parsePages reads smaps_rollup's text ("Key:   N kB" lines). A text
// without an Rss line is an error (not the file it should be).
func parsePages(text []byte) (memPages, error) {
	var p memPages
	seen := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return memPages{}, fmt.Errorf("smaps_rollup: %s: %v", key, err)
		}
		switch {
		case key == "Rss":
			p.rss, seen = n, true
		case slices.Contains(hugeKeys, key):
			p.huge += n
		}
	}
	if !seen {
		return memPages{}, fmt.Errorf("smaps_rollup: no Rss line")
	}
	return p, nil
}

// ownPages is this process's memPages, or an error where there is no
// /proc/self/smaps_rollup (not Linux, or a kernel before 4.14).
func ownPages() (memPages, error) {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return memPages{}, err
	}
	return parsePages(b)
}

// String is "H of R MB in 2 MiB pages", or "n/a" for an unknown count.
func (p *memPages) String() string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%d of %d MB in 2 MiB pages", p.huge>>10, p.rss>>10)
}
