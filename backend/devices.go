package backend

import (
	"os"
	"path/filepath"
	"strings"
)

// pciRoot is where Linux lists PCI devices; a variable for tests.
var pciRoot = "/sys/bus/pci/devices"

// PCI vendor ids of the accelerators a machine may have.
const (
	vendorGoogle = "0x1ae0" // TPU chips, also Google's virtual NICs and disks
	vendorNVIDIA = "0x10de"
)

// HasTPU reports whether the machine has a TPU chip: a PCI device of
// Google's vendor id that is not a network or storage controller (Google's
// virtual NIC and disks share the vendor id). It reads sysfs only, so it is
// cheap and never initialises libtpu, which takes seconds and holds the
// chips.
func HasTPU() bool { return hasPCI(vendorGoogle, "0x01", "0x02") }

// HasGPU reports whether the machine has an NVIDIA GPU (a PCI display or 3D
// controller of NVIDIA's vendor id), from sysfs alone.
func HasGPU() bool { return hasPCIClass(vendorNVIDIA, "0x03") }

// hasPCI reports a device of vendor whose class is none of the excluded
// base classes.
func hasPCI(vendor string, exclude ...string) bool {
	for _, class := range pciClasses(vendor) {
		ok := true
		for _, x := range exclude {
			ok = ok && !strings.HasPrefix(class, x)
		}
		if ok {
			return true
		}
	}
	return false
}

// hasPCIClass reports a device of vendor in the base class.
func hasPCIClass(vendor, class string) bool {
	for _, c := range pciClasses(vendor) {
		if strings.HasPrefix(c, class) {
			return true
		}
	}
	return false
}

// pciClasses lists the classes (0x120000) of vendor's PCI devices.
func pciClasses(vendor string) []string {
	ents, err := os.ReadDir(pciRoot)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		v, err := os.ReadFile(filepath.Join(pciRoot, e.Name(), "vendor"))
		if err != nil || strings.TrimSpace(string(v)) != vendor {
			continue
		}
		c, err := os.ReadFile(filepath.Join(pciRoot, e.Name(), "class"))
		if err == nil {
			out = append(out, strings.TrimSpace(string(c)))
		}
	}
	return out
}
