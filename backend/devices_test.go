package backend

import (
	"os"
	"path/filepath"
	"testing"
)

// fakePCI lays out a sysfs PCI directory of (vendor, class) devices.
func fakePCI(t *testing.T, devs ...[2]string) {
	t.Helper()
	dir := t.TempDir()
	for i, d := range devs {
		p := filepath.Join(dir, "0000:00:0"+string(rune('0'+i))+".0")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "vendor"), []byte(d[0]+"\n"), 0o644)
		os.WriteFile(filepath.Join(p, "class"), []byte(d[1]+"\n"), 0o644)
	}
	old := pciRoot
	pciRoot = dir
	t.Cleanup(func() { pciRoot = old })
}

func TestDeviceDetection(t *testing.T) {
	cases := []struct {
		devs     [][2]string
		tpu, gpu bool
	}{
		{nil, false, false},
		// A VM's virtual NIC and disk of Google's vendor id are no TPU.
		{[][2]string{{"0x1ae0", "0x020000"}, {"0x1ae0", "0x010802"}, {"0x8086", "0x060000"}}, false, false},
		{[][2]string{{"0x1ae0", "0x020000"}, {"0x1ae0", "0x120000"}}, true, false},
		{[][2]string{{"0x10de", "0x030200"}}, false, true},
		{[][2]string{{"0x10de", "0x040300"}}, false, false}, // an NVIDIA audio function
	}
	for i, c := range cases {
		fakePCI(t, c.devs...)
		if HasTPU() != c.tpu || HasGPU() != c.gpu {
			t.Errorf("case %d: HasTPU %v, HasGPU %v; want %v, %v", i, HasTPU(), HasGPU(), c.tpu, c.gpu)
		}
	}
	pciRoot = filepath.Join(t.TempDir(), "absent")
	if HasTPU() || HasGPU() {
		t.Error("a machine without sysfs has a device")
	}
}
