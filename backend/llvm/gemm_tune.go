package llvm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tpucc/tpucc/internal/privdir"
)

// gemmParams are the blocked product's host-dependent choices (gemm.go):
// the micro-kernel's tile, the cache blocks and the prefetch distance of
// the fused packing. Every compiled product bakes them in, so they are
// part of the backend's Fingerprint and of its objects' IR.
type gemmParams struct {
	// Tile is the micro-kernel's columns: 16 (6 x 16 in twelve
	// <8 x float>) or, with AVX-512, 32 (6 x 32 in twelve <16 x float>).
	Tile int64 `json:"tile"`
	// MC, KC, NC: rows of a packed lhs block (a multiple of gemmMR),
	// depth of a packed slice, columns of a packed rhs block (a multiple
	// of gemmNR); NCFew is NC for a product that packs its rhs as it
	// reads it (gemmFuse).
	MC    int64 `json:"mc"`
	KC    int64 `json:"kc"`
	NC    int64 `json:"nc"`
	NCFew int64 `json:"nc_few"`
	// Ahead is how many steps ahead the fused packing asks for the rows
	// it reads in place.
	Ahead int64 `json:"ahead"`
}

func (p gemmParams) String() string {
	return fmt.Sprintf("tile=6x%d mc=%d kc=%d nc=%d ncfew=%d ahead=%d", p.Tile, p.MC, p.KC, p.NC, p.NCFew, p.Ahead)
}

// staticGemm are the parameters tuned by hand on the 2-core AMD EPYC
// host (docs/PERFORMANCE.md) before they were chosen per host:
// TPUCC_GEMM_TUNE=off keeps them.
func staticGemm(wide bool) gemmParams {
	p := gemmParams{Tile: gemmNR, MC: gemmMC, KC: gemmKC, NC: gemmNC, NCFew: gemmNCFew, Ahead: 16}
	if wide {
		p.Tile = 2 * gemmNR
	}
	return p
}

// analyticGemm derives the blocks from the caches, as BLIS's analytical
// model does: the tile's packed rhs panels (KC x Tile floats), reused by
// every row panel, take half of L1d, the rest left to the lhs panel and
// the tile of C streaming through; the packed lhs block (MC x KC) half of
// L2; the packed rhs block (KC x NC) half of a core's share of L3, NC at
// most 512: the cores share a product by column blocks, and with wider
// ones each core packs the same block for its rows.
// The fused packing's rows in flight (Ahead rows of Tile floats) take a
// sixteenth of L1d. Unknown caches keep staticGemm.
func analyticGemm(h gemmHost, tile int64) gemmParams {
	p := staticGemm(h.Wide)
	p.Tile = tile
	if h.L1D <= 0 || h.L2 <= 0 {
		return p
	}
	p.KC = clampRound(h.L1D/2/(4*tile), 64, 512, 8)
	p.MC = clampRound(h.L2/2/(4*p.KC), gemmMR*8, gemmMR*80, gemmMR)
	if h.L3 > 0 {
		p.NC = clampRound(h.L3/2/(4*p.KC), 256, 512, 2*gemmNR)
		p.NCFew = min(p.NCFew, p.NC)
	}
	p.Ahead = clampRound(h.L1D/16/(4*tile), 8, 32, 4)
	return p
}

// clampRound is x rounded down to a multiple of m, within [lo, hi].
func clampRound(x, lo, hi, m int64) int64 {
	return min(max(x/m*m, lo), hi)
}

// gemmCandidates are the parameters calibration times on a host: the
// hand-tuned ones first (a tie keeps them), the analytic ones for the
// widest tile, those with a slice twice as deep, and with AVX-512 the
// analytic and the hand-tuned ones for the AVX2 tile: on a core that
// splits 512-bit FMAs in two (Zen 4) the 6 x 16 tile in ymm registers ran
// faster than 6 x 32 in zmm (docs/CPU_BACKEND.md, "AVX-512 tiles in the
// blocked product"); on one that does not (Zen 5) twice as slow.
// Without the caches there is nothing to derive: the hand-tuned ones
// alone.
func gemmCandidates(h gemmHost) []gemmParams {
	if h.L1D <= 0 || h.L2 <= 0 {
		return []gemmParams{staticGemm(h.Wide)}
	}
	wideTile := staticGemm(h.Wide).Tile
	a := analyticGemm(h, wideTile)
	deep := a
	deep.KC = min(2*a.KC, 512)
	deep.MC = clampRound(a.MC/2, gemmMR*8, gemmMR*80, gemmMR)
	out := []gemmParams{staticGemm(h.Wide), a, deep}
	if h.Wide {
		narrow := staticGemm(false)
		out = append(out, analyticGemm(h, narrow.Tile), narrow)
	}
	var uniq []gemmParams
	for _, p := range out {
		if !slices.Contains(uniq, p) {
			uniq = append(uniq, p)
		}
	}
	return uniq
}

// gemmTuneVersion changes whenever the kernel or the candidates change,
// so that records of an older kernel are timed again.
const gemmTuneVersion = 1

// gemmRecord is a calibration's result as kept in the persistent cache:
// the host it was measured on, the candidates' throughputs and the choice.
type gemmRecord struct {
	Version int          `json:"version"`
	Host    string       `json:"host"`
	Chosen  gemmParams   `json:"chosen"`
	Timed   []gemmTiming `json:"timed"`
}

// gemmTiming is one candidate's best throughput in the calibration.
type gemmTiming struct {
	Params gemmParams `json:"params"`
	GFLOPS float64    `json:"gflops"`
}

// chooseGemm is the parameters for host h: the static ones when tuning is
// off, the record's choice when the record was made by this kernel
// version on this host and chose one of this host's candidates, else the
// analytic ones for the widest tile (the host's before calibration). It
// reads no clock and no file: the same inputs give the same parameters.
func chooseGemm(h gemmHost, rec *gemmRecord, tune bool) gemmParams {
	if !tune {
		return staticGemm(h.Wide)
	}
	if rec.valid(h) {
		return rec.Chosen
	}
	return analyticGemm(h, staticGemm(h.Wide).Tile)
}

// valid reports whether r applies to h (gemmRecord).
func (r *gemmRecord) valid(h gemmHost) bool {
	return r != nil && r.Version == gemmTuneVersion && r.Host == h.key() &&
		slices.Contains(gemmCandidates(h), r.Chosen)
}

// gemmRecordName is the record's file in the cache directory.
const gemmRecordName = "gemm-tune.json"

// readGemmRecord reads the record in dir; nil when there is none or it
// is not a record (a corrupt file is ignored, and calibration runs again),
// or when dir is not the user's own (internal/privdir's rules, as for the
// program cache). Even a planted record chooses only among the host's
// candidates (gemmRecord.valid).
func readGemmRecord(dir string) *gemmRecord {
	info, err := os.Lstat(dir)
	if err != nil || privdir.Check(dir, info) != nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, gemmRecordName))
	if err != nil {
		return nil
	}
	var r gemmRecord
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}

// writeGemmRecord replaces the record in dir (written aside and renamed,
// so a reader never sees half of it).
func writeGemmRecord(dir string, r *gemmRecord) error {
	if err := privdir.Ensure(dir); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, gemmRecordName+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, gemmRecordName))
}
