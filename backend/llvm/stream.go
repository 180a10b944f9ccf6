package llvm

import (
	"math/bits"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// Streaming (non-temporal) stores for loop kernels whose results are larger
// than the last-level cache.
//
// An ordinary store first reads the line it writes into the cache (a read
// for ownership), so a kernel that writes N bytes it does not read moves
// 2N bytes for them; a streaming store writes the whole line to memory
// without reading it. On bench/cpu's chain (x*sigmoid(x) + bias + residual,
// f32[4096,4096], 192 MiB of reads and writes a call) the kernel moved 256
// MiB instead of 192. Called in turn with the ordinary kernel from a C
// harness (two threads, 150 calls each, the host loaded), the streamed one
// took 2-24% less CPU time a thread (medians 3.28, 2.48 and 4.16 ms against
// 3.57, 3.27 and 4.23; docs/PERFORMANCE.md). What is given up: a result
// written with them is not in the cache afterwards, so a kernel that reads it
// next reads it from memory. An output at least as large as the last-level
// cache would mostly have left the cache anyway, and the reads saved (its
// size) are more than the reads that can be lost (the cache's size):
// streaming is chosen only from there (target.stream).
//
// The loop vectoriser does not widen a non-temporal store whose alignment
// it cannot prove (a scalar float store is 4-byte aligned), and leaves the
// whole loop scalar. So a streamed kernel computes its innermost dimension
// in chunks of streamChunk elements into a tile on the stack (the same
// vectorised loop as before, storing to the tile, which stays in L1), and
// copies each chunk out with explicit 64-byte vector stores from the first
// line boundary on; the elements before it and after the last whole line
// are stored as before. A kernel that streamed ends with an sfence: the
// streaming stores are weakly ordered, and whoever reads the results next
// (another thread of the pool, or the caller) must see them.

// streamChunk is how many elements of each output a streamed kernel
// computes into its tile before copying them out: 512 bytes of f32, eight
// lines. The streaming stores must stay interleaved with the loads and the
// arithmetic: the chain's kernel with chunks of 64 or 128 elements took
// the CPU time of the same loop storing non-temporally in place (3.09-3.18
// ms a thread, median of 150 alternated calls), with 256 3.40, 1024 3.56
// (the ordinary stores' 3.61) and 4096 far more: a long burst of streaming
// stores waits for the write-combining buffers.
const streamChunk = 128

// streamLine is the bytes of one streaming store: a cache line.
const streamLine = 64

// streamMinRun is the shortest innermost dimension a kernel streams: a
// shorter one would copy out a few lines per chunk for the chunk's
// bookkeeping.
const streamMinRun = 256

// streamDefaultBytes is target.stream where the host's last-level cache is
// unknown.
const streamDefaultBytes = 32 << 20

// streamMinBytes is the output size from which loop kernels stream
// (target.stream): the last-level cache the kernels' threads share, which
// sysfs gives as l3 a core (gemmHost.L3), or streamDefaultBytes when it
// does not; 0 (never) on a CPU that is not x86-64, where the sfence this
// emits does not exist.
func streamMinBytes(features string, l3 int64, threads int) int64 {
	if !hasFlag(features, "sse2") {
		return 0
	}
	if l3 <= 0 {
		return streamDefaultBytes
	}
	return l3 * int64(max(threads, 1))
}

// streams reports whether the loop kernel storing vs over dims (no concat)
// stores them with streaming stores: together at least tgt.stream bytes,
// of an innermost run of at least streamMinRun elements.
func (pl *planner) streams(vs []*ir.Value, dims []int64) bool {
	if pl.tgt.stream <= 0 || len(dims) == 0 {
		return false
	}
	if _, lead := nestRows(dims); lead < len(dims) && dims[len(dims)-1] < streamMinRun {
		return false
	}
	var total int64
	for _, w := range vs {
		n, _ := w.Type.NumElements()
		_, mem, ok := elemType(w.Type.DType)
		if !ok {
			return false
		}
		total += n * memBytes(mem)
	}
	return total >= pl.tgt.stream
}

// memBytes is the size of a value of the memory type t.
func memBytes(t types.Type) int64 {
	switch t {
	case types.I8:
		return 1
	case types.I16:
		return 2
	case types.I64, types.Double:
		return 8
	}
	return 4
}

// emitStreamed is emitNest for a kernel whose outputs dst (of the memory
// types mems) are streamed: values gives the outputs' stored values at idx.
// The nest is emitNest's, its innermost dimension (the kernel's range for
// one dimension) cut into chunks (streamRun).
func emitStreamed(k *kfn, dims []int64, dst []value.Value, mems []types.Type, values func(idx []value.Value) []value.Value) {
	tiles := make([]value.Value, len(dst))
	for i, m := range mems {
		tiles[i] = k.tile(m, streamChunk)
	}
	idx := make([]value.Value, len(dims))
	last := len(dims) - 1
	at := func(j value.Value) []value.Value { idx[last] = j; return values(idx) }
	_, lead := nestRows(dims)
	if lead == len(dims) { // one dimension: the kernel's range is the run
		k.streamRun(k.lo, k.hi, tiles, dst, at, func(c value.Value) value.Value { return c })
	} else {
		k.loop(k.lo, k.hi, nil, func(i value.Value, _ []value.Value) []value.Value {
			copy(idx, k.delinear(i, dims[:lead]))
			var rec func(d int)
			rec = func(d int) {
				if d < last {
					k.loopN(dims[d], func(x value.Value) { idx[d] = x; rec(d + 1) })
					return
				}
				k.streamRun(ci(0), ci(dims[last]), tiles, dst, at, func(c value.Value) value.Value {
					idx[last] = c
					return k.linear(idx, dims)
				})
			}
			rec(lead)
			return nil
		})
	}
	k.cur.NewCall(k.g.declare("llvm.x86.sse.sfence", types.Void))
}

// tile is a 64-byte aligned array of n elements of t on the kernel's stack,
// allocated in its entry block.
func (k *kfn) tile(t types.Type, n int64) value.Value {
	a := lir.NewAlloca(types.NewArray(uint64(n), t))
	a.Align = streamLine
	p := lir.NewBitCast(a, types.NewPointer(t))
	entry := k.f.Blocks[0]
	entry.Insts = append([]lir.Instruction{a, p}, entry.Insts...)
	return p
}

// streamRun stores the outputs over the innermost indices [from, to) a
// chunk at a time: at(j) gives the outputs' values at index j, which go to
// the tiles; out(c) is the outputs' flat index at index c, where the
// chunk from c is copied out (streamCopy).
func (k *kfn) streamRun(from, to value.Value, tiles, dst []value.Value, at func(j value.Value) []value.Value, out func(c value.Value) value.Value) {
	n := k.cur.NewSub(to, from)
	chunks := k.cur.NewSDiv(k.cur.NewAdd(n, ci(streamChunk-1)), ci(streamChunk))
	k.loop(ci(0), chunks, nil, func(q value.Value, _ []value.Value) []value.Value {
		c := k.mulAdd(q, streamChunk, from)
		m := k.smin(ci(streamChunk), k.cur.NewSub(to, c))
		k.loop(ci(0), m, nil, func(o value.Value, _ []value.Value) []value.Value {
			for i, v := range at(k.cur.NewAdd(c, o)) {
				k.store(v, tiles[i], o)
			}
			return nil
		})
		base := out(c)
		for i := range dst {
			k.streamCopy(tiles[i], dst[i], base, m)
		}
		return nil
	})
}

// streamCopy copies n elements from tile to dst[at:]: those before dst's
// first line boundary and after its last whole line with ordinary stores,
// the lines between with streaming stores. A dst not aligned to its
// element's size (never made by the plan) is copied with ordinary stores.
func (k *kfn) streamCopy(tile, dst, at, n value.Value) {
	t := dst.Type().(*types.PointerType).ElemType
	size := memBytes(t)
	per := streamLine / size
	c := k.cur
	addr := c.NewPtrToInt(k.at(t, dst, at), types.I64)
	head := c.NewLShr(c.NewAnd(c.NewSub(ci(0), addr), ci(streamLine-1)), ci(int64(bits.TrailingZeros64(uint64(size)))))
	odd := c.NewICmp(enum.IPredNE, c.NewAnd(addr, ci(size-1)), ci(0))
	h := k.smin(k.cur.NewSelect(odd, n, head), n)
	lines := k.cur.NewSDiv(k.cur.NewSub(n, h), ci(per))
	plain := func(from, to value.Value) {
		k.loop(from, to, nil, func(j value.Value, _ []value.Value) []value.Value {
			k.store(k.load(t, tile, j), dst, k.cur.NewAdd(at, j))
			return nil
		})
	}
	plain(ci(0), h)
	vt := types.NewVector(uint64(per), t)
	k.loop(ci(0), lines, nil, func(l value.Value, _ []value.Value) []value.Value {
		o := k.mulAdd(l, per, h)
		ld := k.cur.NewLoad(vt, k.cur.NewBitCast(k.at(t, tile, o), types.NewPointer(vt)))
		ld.Align = lir.Align(size)
		st := k.cur.NewStore(ld, k.cur.NewBitCast(k.at(t, dst, k.cur.NewAdd(at, o)), types.NewPointer(vt)))
		st.Align = streamLine
		st.Metadata = append(st.Metadata, &metadata.Attachment{Name: "nontemporal", Node: k.g.nontemporal()})
		return nil
	})
	plain(k.mulAdd(lines, per, h), n)
}

// nontemporal is the module's !{i32 1}, the node a non-temporal store is
// marked with, defined once.
func (g *gen) nontemporal() *metadata.Tuple {
	if g.ntNode == nil {
		g.ntNode = &metadata.Tuple{MetadataID: metadata.MetadataID(len(g.m.MetadataDefs)), Fields: []metadata.Field{constant.NewInt(types.I32, 1)}}
		g.m.MetadataDefs = append(g.m.MetadataDefs, g.ntNode)
	}
	return g.ntNode
}
