package pjrt

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Topology is a description of a device mesh (PJRT_TopologyDescription),
// which a plugin can compile for without any device present.
type Topology struct {
	p    *Plugin
	name string
	h    uintptr
	cln  runtime.Cleanup
}

// Topology creates the topology named name ("v5e:2x2", "v6e:2x2", ...).
func (p *Plugin) Topology(name string) (*Topology, error) {
	if err := p.Initialize(); err != nil {
		return nil, err
	}
	b := []byte(name + "\x00")
	a := &topologyCreateArgs{
		structSize: unsafe.Sizeof(topologyCreateArgs{}),
		name:       unsafe.Pointer(&b[0]),
		nameLen:    uintptr(len(name)),
	}
	err := p.call(fnTopologyCreate, unsafe.Pointer(a))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	t := &Topology{p: p, name: name, h: a.topology}
	p.live.Add(1)
	t.cln = runtime.AddCleanup(t, func(h uintptr) { p.destroyTopology(h) }, a.topology)
	return t, nil
}

func (p *Plugin) destroyTopology(h uintptr) {
	a := &topologyArgs{structSize: unsafe.Sizeof(topologyArgs{}), topology: h}
	p.call(fnTopologyDestroy, unsafe.Pointer(a))
	p.live.Add(-1)
}

// Close destroys the topology. It is safe to call twice.
func (t *Topology) Close() error {
	if t == nil || t.h == 0 {
		return nil
	}
	t.cln.Stop()
	t.p.destroyTopology(t.h)
	t.h = 0
	return nil
}

// PlatformVersion is the plugin's version string for this topology (for
// libtpu, its build).
func (t *Topology) PlatformVersion() (string, error) {
	return t.str(fnTopologyPlatformVersion)
}

// PlatformName is the platform the topology belongs to ("tpu").
func (t *Topology) PlatformName() (string, error) {
	return t.str(fnTopologyPlatformName)
}

// DeviceKind is the kind of the topology's devices ("TPU v6 lite"), what a
// client on such a device reports for its own.
func (t *Topology) DeviceKind() (string, error) {
	a := &topologyDevicesArgs{structSize: unsafe.Sizeof(topologyDevicesArgs{}), topology: t.h}
	if err := t.p.call(fnTopologyDeviceDescriptions, unsafe.Pointer(a)); err != nil {
		return "", err
	}
	if a.numDescriptions == 0 || a.numDescriptions > 1<<16 {
		return "", fmt.Errorf("pjrt: topology has %d device descriptions", a.numDescriptions)
	}
	d := unsafe.Slice((*uintptr)(cPtr(a.descriptions)), a.numDescriptions)[0]
	k := &deviceDescriptionKindArgs{structSize: unsafe.Sizeof(deviceDescriptionKindArgs{}), description: d}
	if err := t.p.call(fnDeviceDescriptionKind, unsafe.Pointer(k)); err != nil {
		return "", err
	}
	return cString(k.kind, k.kindLen), nil
}

// DeviceIDs are the IDs of the topology's devices (its chips), in the
// plugin's order.
func (t *Topology) DeviceIDs() ([]int, error) {
	a := &topologyDevicesArgs{structSize: unsafe.Sizeof(topologyDevicesArgs{}), topology: t.h}
	if err := t.p.call(fnTopologyDeviceDescriptions, unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	if a.numDescriptions > 1<<16 {
		return nil, fmt.Errorf("pjrt: topology has %d device descriptions", a.numDescriptions)
	}
	var ids []int
	for _, d := range unsafe.Slice((*uintptr)(cPtr(a.descriptions)), a.numDescriptions) {
		id := &deviceDescriptionIDArgs{structSize: unsafe.Sizeof(deviceDescriptionIDArgs{}), description: d}
		if err := t.p.call(fnDeviceDescriptionID, unsafe.Pointer(id)); err != nil {
			return nil, err
		}
		ids = append(ids, int(id.id))
	}
	return ids, nil
}

func (t *Topology) str(f fnIndex) (string, error) {
	a := &topologyStringArgs{structSize: unsafe.Sizeof(topologyStringArgs{}), topology: t.h}
	if err := t.p.call(f, unsafe.Pointer(a)); err != nil {
		return "", err
	}
	return cString(a.str, a.strLen), nil
}

// callC calls a plain C function of one pointer argument the plugin gave us.
func callC(fn, arg uintptr) {
	purego.SyscallN(fn, arg)
}
