package pjrt

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Client is a PJRT client: the plugin's devices and the programs and buffers
// on them. Its methods are safe for concurrent use; Close must not race with
// them.
type Client struct {
	p        *Plugin
	h        uintptr
	cln      runtime.Cleanup
	devices  []Device
	platform string
	version  string

	mu     sync.Mutex // guards closed
	closed bool
}

// Device is one addressable device of a client.
type Device struct {
	ID   int
	Kind string // "cpu", "TPU v6 lite", ...
	h    uintptr
}

// NewClient creates a client with the plugin's default options and those
// given, which the plugin checks: the XLA:CPU plugin takes
// cpu_device_count (int64) and asynchronous (bool) and refuses a name it
// does not know.
func (p *Plugin) NewClient(opts ...Option) (*Client, error) {
	if err := p.Initialize(); err != nil {
		return nil, err
	}
	a := &clientCreateArgs{structSize: unsafe.Sizeof(clientCreateArgs{})}
	nv, unpin, err := namedValues(opts)
	if err != nil {
		return nil, err
	}
	if len(nv) > 0 {
		a.options, a.numOptions = unsafe.Pointer(&nv[0]), uintptr(len(nv))
	}
	err = p.call(fnClientCreate, unsafe.Pointer(a))
	runtime.KeepAlive(nv)
	unpin()
	if err != nil {
		return nil, err
	}
	c := &Client{p: p, h: a.client}
	p.live.Add(1)
	c.cln = runtime.AddCleanup(c, func(h uintptr) { p.destroyClient(h) }, a.client)
	if c.platform, err = c.str(fnClientPlatformName); err == nil {
		if c.version, err = c.str(fnClientPlatformVersion); err == nil {
			err = c.readDevices()
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (p *Plugin) destroyClient(h uintptr) {
	a := &clientArgs{structSize: unsafe.Sizeof(clientArgs{}), client: h}
	p.call(fnClientDestroy, unsafe.Pointer(a))
	p.live.Add(-1)
}

// Close destroys the client. Buffers and executables of the client must be
// closed first. It is safe to call twice.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.cln.Stop()
	c.p.destroyClient(c.h)
	return nil
}

// Plugin is the plugin the client belongs to.
func (c *Client) Plugin() *Plugin { return c.p }

// Platform is the plugin's platform name ("cpu", "tpu", "cuda").
func (c *Client) Platform() string { return c.platform }

// PlatformVersion is the plugin's own version string.
func (c *Client) PlatformVersion() string { return c.version }

// Devices lists the client's addressable devices.
func (c *Client) Devices() []Device { return append([]Device(nil), c.devices...) }

func (c *Client) str(f fnIndex) (string, error) {
	a := &clientStringArgs{structSize: unsafe.Sizeof(clientStringArgs{}), client: c.h}
	if err := c.p.call(f, unsafe.Pointer(a)); err != nil {
		return "", err
	}
	return cString(a.str, a.strLen), nil
}

func (c *Client) readDevices() error {
	a := &clientDevicesArgs{structSize: unsafe.Sizeof(clientDevicesArgs{}), client: c.h}
	if err := c.p.call(fnClientAddressableDevices, unsafe.Pointer(a)); err != nil {
		return err
	}
	if a.numDevices == 0 || a.numDevices > 1<<16 {
		return fmt.Errorf("pjrt: plugin reports %d addressable devices", a.numDevices)
	}
	hs := unsafe.Slice((*uintptr)(cPtr(a.devices)), a.numDevices)
	for _, h := range hs {
		d := &deviceGetDescriptionArgs{structSize: unsafe.Sizeof(deviceGetDescriptionArgs{}), device: h}
		if err := c.p.call(fnDeviceGetDescription, unsafe.Pointer(d)); err != nil {
			return err
		}
		id := &deviceDescriptionIDArgs{structSize: unsafe.Sizeof(deviceDescriptionIDArgs{}), description: d.description}
		if err := c.p.call(fnDeviceDescriptionID, unsafe.Pointer(id)); err != nil {
			return err
		}
		kind, err := c.p.descriptionKind(d.description)
		if err != nil {
			return err
		}
		c.devices = append(c.devices, Device{ID: int(id.id), Kind: kind, h: h})
	}
	return nil
}

// descriptionKind is the kind of a device description (TPU v6 lite, cpu).
func (p *Plugin) descriptionKind(description uintptr) (string, error) {
	k := &deviceDescriptionKindArgs{structSize: unsafe.Sizeof(deviceDescriptionKindArgs{}), description: description}
	if err := p.call(fnDeviceDescriptionKind, unsafe.Pointer(k)); err != nil {
		return "", err
	}
	return cString(k.kind, k.kindLen), nil
}

// use reports an error when the client has been closed.
func (c *Client) use() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pjrt: use of a closed client")
	}
	return nil
}
