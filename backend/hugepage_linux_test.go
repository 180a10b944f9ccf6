package backend

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseHuge: large storage is advised onto huge pages (the "hg" flag
// of the mapping that holds it, /proc/self/smaps); small storage is not.
func TestAdviseHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	big := AlignedBytes(3 * HugeBytes)
	small := AlignedBytes(HugeBytes / 2)
	// The first 2 MiB boundary inside big is advised whatever big's start.
	p := uintptr(unsafe.Pointer(&big[0]))
	inside := (p + 2<<20 - 1) &^ (2<<20 - 1)
	if flags := vmFlags(t, inside); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping of %#x (in %d MiB of storage) has flags %q, no hg", inside, len(big)>>20, flags)
	}
	if flags := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("%d KiB of storage was advised onto huge pages (flags %q)", len(small)>>10, flags)
	}
}

// vmFlags are the VmFlags of the mapping of this process that holds addr.
func vmFlags(t *testing.T, addr uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}
