package ir

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestNarrowFloatsMatchMLDtypes: every code of each f8, f6 and f4 type
// decodes to ml_dtypes' value, and each probe (every value, the midpoints
// between neighbours and the float32 numbers around them, overflow, the
// specials, random numbers; both signs) rounds to ml_dtypes' code. The
// table is testdata/narrow_floats.txt, written by testdata/gen_narrow.py.
func TestNarrowFloatsMatchMLDtypes(t *testing.T) {
	f, err := os.Open("testdata/narrow_floats.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d DType
	seen := map[DType][2]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || fs[0] == "#" {
			continue
		}
		if fs[0] == "type" {
			var ok bool
			if d, ok = ParseDType(fs[1]); !ok || !d.IsNarrowFloat() {
				t.Fatalf("line %d: %q is not a narrow float dtype", line, fs[1])
			}
			continue
		}
		a, err1 := strconv.ParseUint(fs[1], 16, 32)
		b, err2 := strconv.ParseUint(fs[2], 16, 32)
		if len(fs) != 3 || err1 != nil || err2 != nil {
			t.Fatalf("line %d: bad line %q", line, sc.Text())
		}
		n := seen[d]
		switch fs[0] {
		case "decode":
			want := float64(math.Float32frombits(uint32(b)))
			got := d.NarrowFromBits(uint8(a))
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) || math.Signbit(got) != math.Signbit(want) && !math.IsNaN(want) {
				t.Errorf("%s: code %#02x is %v, ml_dtypes says %v", d, a, got, want)
			}
			n[0]++
		case "encode":
			v := float64(math.Float32frombits(uint32(a)))
			if got := d.NarrowToBits(v); got != uint8(b) {
				t.Errorf("%s: %v (%#08x) rounds to %#02x, ml_dtypes says %#02x", d, v, a, got, b)
			}
			n[1]++
		}
		seen[d] = n
	}
	for dt := range narrowFormats {
		if n := seen[dt]; n[0] != 1<<dt.Bits() || n[1] < 100 {
			t.Errorf("%s: %d codes and %d probes checked, want all %d codes and at least 100 probes", dt, n[0], n[1], 1<<dt.Bits())
		}
	}
}
