package backend

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// TestAdviseHugePages: AdviseHugePages advises exactly the whole 2 MiB
// pages inside a slice (none in a slice that holds none), and the kernel
// then marks their mapping "hg" in /proc/self/smaps. A kernel without
// transparent huge pages refuses the advice with EINVAL.
func TestAdviseHugePages(t *testing.T) {
	raw := New(ir.Tensor(ir.U8, 5*hugePage)).Bytes()
	p := uintptr(unsafe.Pointer(&raw[0]))
	start := int((hugePage - p%hugePage) % hugePage) // the first whole page
	for _, c := range []struct {
		lo, hi, want int
	}{
		{start, start + hugePage - 4096, 0},          // short of a whole page
		{start + 4096, start + hugePage + 4096, 0},   // two part pages
		{start + 4096, start + 2*hugePage + 4096, 1}, // one whole page between parts
		{start, start + 2*hugePage, 2},               // exactly two
		{0, 0, 0},                                    // empty
	} {
		n, err := AdviseHugePages(raw[c.lo:c.hi])
		if errors.Is(err, syscall.EINVAL) {
			if _, serr := os.Stat("/sys/kernel/mm/transparent_hugepage"); serr == nil {
				t.Fatalf("madvise refused on a kernel with transparent huge pages: %v", err)
			}
			return // no transparent huge pages here: nothing to advise
		}
		if err != nil || n != c.want*hugePage {
			t.Errorf("AdviseHugePages([%d:%d]) = %d, %v; want %d whole pages", c.lo, c.hi, n, err, c.want)
		}
		if c.want > 0 {
			at := uintptr(unsafe.Pointer(&raw[c.lo])) + hugePage - 1
			if flags := vmFlags(t, at&^(hugePage-1)); !strings.Contains(" "+flags+" ", " hg ") {
				t.Errorf("AdviseHugePages([%d:%d]): the mapping's flags %q lack hg (MADV_HUGEPAGE)", c.lo, c.hi, flags)
			}
		}
	}
}

// TestLongLived: the storage of NewLongLived and of a stack made on the
// host (a model's stacked weights, backend.Stack) is advised: the mapping
// of its first whole 2 MiB page is marked "hg", and the values are the
// rows'.
func TestLongLived(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("no transparent huge pages on this kernel: nothing is advised")
	}
	row := ir.Tensor(ir.U8, hugePage)
	var rows []*Buffer
	for i := range 3 {
		r := New(row)
		r.Bytes()[hugePage-1] = byte(i + 1)
		rows = append(rows, r)
	}
	stacked := Stack(rows, nil).Bytes()
	for i := range 3 {
		if got := stacked[(i+1)*hugePage-1]; got != byte(i+1) {
			t.Errorf("the stack's row %d ends in %d, want %d", i, got, i+1)
		}
	}
	for name, data := range map[string][]byte{
		"NewLongLived": NewLongLived(ir.Tensor(ir.U8, 3*hugePage)).Bytes(),
		"Stack":        stacked,
	} {
		at := (uintptr(unsafe.Pointer(&data[0])) + hugePage - 1) &^ (hugePage - 1)
		if flags := vmFlags(t, at); !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("%s: the mapping's flags %q lack hg (MADV_HUGEPAGE)", name, flags)
		}
	}
}

// vmFlags is the VmFlags line of the mapping of /proc/self/smaps holding addr.
func vmFlags(t *testing.T, addr uintptr) string {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: lo-hi perms ...
			var lo, hi uintptr
			_, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
			in = err == nil && lo <= addr && addr < hi
			continue
		}
		if in && f[0] == "VmFlags:" {
			return strings.Join(f[1:], " ")
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}
