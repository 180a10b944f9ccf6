package backend

import "github.com/tpucc/tpucc/ir"

// hugePage is the size of a transparent huge page on x86-64 (and arm64
// with 4 KiB pages): AdviseHugePages advises whole ones.
const hugePage = 2 << 20

// LongLivedBytes is AlignedBytes for storage a program keeps for as long as
// it runs, a model's weights above all: its whole 2 MiB pages are advised
// for transparent huge pages (AdviseHugePages) before anything touches
// them. A decode step streams every weight once a token, and on 4 KiB
// pages each 2 MiB of it costs 512 TLB misses. With the weights advised,
// bench/models' batch-1 decode of the f16 Qwen3-0.6B shape went from 1.00
// to 1.11 of llama.cpp's tokens a second (which reads its weights from
// huge-page-backed mappings), medians of five alternated runs
// (docs/CPU_BACKEND.md, "Huge pages"). The price is paid once, when the
// pages are first touched: up to 2 s a GiB on a VM whose host backs the
// guest's memory lazily. A refusal (a kernel without transparent huge
// pages) leaves 4 KiB pages: slower, never wrong.
func LongLivedBytes(n int) []byte {
	b := AlignedBytes(n)
	AdviseHugePages(b)
	return b
}

// NewLongLived is New on LongLivedBytes: a zero-filled buffer for weights
// and other storage kept for the program's life.
func NewLongLived(t ir.Type) *Buffer { return &Buffer{typ: t, data: LongLivedBytes(byteSize(t))} }
