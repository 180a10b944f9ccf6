package llvm

import (
	"fmt"
	"testing"
)

// BenchmarkGemv times a batch-1 decode step's products, x [1, K] times a
// weight stored [N, K] as Hugging Face stores it, with the weights from
// memory (each call takes the next of enough copies to fill 192 MB; the lm
// head alone is larger than the L3), on all cores, in f32 and with bf16
// weights read at their width. GB/s counts the weight's bytes: the bound
// is what the host streams (go run ./bench/limits).
//
//	go test ./backend/llvm -run '^$' -bench Gemv -benchtime 20x
//
// Each shape runs with the kernel's own parameters (gemvFor) and with the
// variants in gemvVariants, alternated within one process.
func BenchmarkGemv(b *testing.B) {
	for _, s := range [][2]int64{{1024, 3072}, {3072, 1024}, {1024, 151936}} {
		for _, dt := range []string{"f32", "bf16"} {
			size := int64(4)
			if dt == "bf16" {
				size = 2
			}
			copies := max(1, int((192<<20)/(s[0]*s[1]*size)))
			for _, v := range gemvVariants {
				b.Run(fmt.Sprintf("%s/%dx%d/%s", dt, s[0], s[1], v.name), func(b *testing.B) {
					if v.p != nil {
						defer func(f func(m, k int64, narrow bool) gemvParams) { gemvFor = f }(gemvFor)
						gemvFor = v.p
					}
					gemmBench{m: 1, k: s[0], n: s[1], rhsT: true, copies: copies, wdt: dt}.run(b)
				})
			}
		}
	}
}

// gemvVariants are the parameters BenchmarkGemv sets beside the kernel's
// own (nil).
var gemvVariants = []struct {
	name string
	p    func(m, k int64, narrow bool) gemvParams
}{
	{"default", nil},
	{"cols1-accs4", func(m, k int64, narrow bool) gemvParams { return gemvParams{cols: 1, accs: 4} }},
	{"cols1-accs4-pf1k", func(m, k int64, narrow bool) gemvParams { return gemvParams{cols: 1, accs: 4, ahead: 1024} }},
	{"cols1-accs4-pf4k", func(m, k int64, narrow bool) gemvParams { return gemvParams{cols: 1, accs: 4, ahead: 4096} }},
	{"cols4-pf2g", func(m, k int64, narrow bool) gemvParams { return gemvParams{cols: 4, accs: 1, ahead: 8 * k} }},
	{"cols2-accs2", func(m, k int64, narrow bool) gemvParams { return gemvParams{cols: 2, accs: 2} }},
}
