package pjrt

import "unsafe"

// await blocks until the plugin's event e is ready, destroys it, and returns
// its error, if any. A zero event is ready.
func (p *Plugin) await(e uintptr) error {
	if e == 0 {
		return nil
	}
	a := &eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: e}
	err := p.call(fnEventAwait, unsafe.Pointer(a))
	d := &eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: e}
	if derr := p.call(fnEventDestroy, unsafe.Pointer(d)); err == nil {
		err = derr
	}
	return err
}
