package pjrt

import "unsafe"

// await blocks until the plugin's event e is ready, destroys it, and returns
// its error, if any. A zero event is ready.
func (p *Plugin) await(e uintptr) error {
	if e == 0 {
		return nil
	}
	// The plugin reads each call's arguments only during the call, so one
	// allocation holds both.
	a := &[2]eventArgs{
		{structSize: unsafe.Sizeof(eventArgs{}), event: e},
		{structSize: unsafe.Sizeof(eventArgs{}), event: e},
	}
	err := p.call(fnEventAwait, unsafe.Pointer(&a[0]))
	if derr := p.call(fnEventDestroy, unsafe.Pointer(&a[1])); err == nil {
		err = derr
	}
	return err
}
