package hf

import (
	"slices"

	"github.com/tpucc/tpucc/models/safetensors"
)

// Progress is what LoadProgress reports each time the loader has taken the
// last tensor of a shard: that shard's counts and the running totals. A
// single-file checkpoint is one shard. Shards are numbered in the order of
// their file names (the Hub's model-00001-of-00005 order), and reported in
// the order they finish, which is that order for checkpoints saved layer by
// layer.
type Progress struct {
	File                      string // the shard's path
	Shard, Shards             int    // 1-based
	Tensors                   int    // the shard's tensors
	Bytes                     int64  // and their bytes
	DoneTensors, TotalTensors int    // over the checkpoint
	DoneBytes, TotalBytes     int64
}

// tally counts the tensors the loader takes, per shard.
type tally struct {
	report func(Progress)
	shards []string       // sorted paths
	left   map[string]int // tensors not yet taken, per shard
	all    map[string]Progress
	done   Progress
}

func newTally(ck *safetensors.Checkpoint, report func(Progress)) *tally {
	t := &tally{report: report, left: map[string]int{}, all: map[string]Progress{}}
	for _, name := range ck.Names() {
		info, file, _ := ck.Info(name)
		p := t.all[file]
		p.File = file
		p.Tensors++
		p.Bytes += info.End - info.Begin
		t.all[file] = p
		t.left[file]++
		t.done.TotalTensors++
		t.done.TotalBytes += info.End - info.Begin
	}
	for f := range t.all {
		t.shards = append(t.shards, f)
	}
	slices.Sort(t.shards)
	return t
}

// take counts one tensor of file, taken for the first time.
func (t *tally) take(file string, info safetensors.Info) {
	if t.report == nil {
		return
	}
	t.done.DoneTensors++
	t.done.DoneBytes += info.End - info.Begin
	if t.left[file]--; t.left[file] > 0 {
		return
	}
	p := t.all[file]
	p.Shard, p.Shards = slices.Index(t.shards, file)+1, len(t.shards)
	p.DoneTensors, p.TotalTensors = t.done.DoneTensors, t.done.TotalTensors
	p.DoneBytes, p.TotalBytes = t.done.DoneBytes, t.done.TotalBytes
	t.report(p)
}
