package pjrt

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// bufferTypes maps tpucc's dtypes to PJRT_Buffer_Type.
var bufferTypes = map[ir.DType]int32{
	ir.I1: 1, ir.I8: 2, ir.I16: 3, ir.I32: 4, ir.I64: 5, ir.U8: 6, ir.U16: 7, ir.U32: 8, ir.U64: 9,
	ir.F16: 10, ir.F32: 11, ir.F64: 12, ir.BF16: 13, ir.C64: 14, ir.C128: 15,
}

func dtypeOf(t int32) (ir.DType, bool) {
	for d, bt := range bufferTypes {
		if bt == t {
			return d, true
		}
	}
	return ir.Invalid, false
}

// Buffer is an array on a device (PJRT_Buffer).
type Buffer struct {
	c   *Client
	h   uintptr
	typ ir.Type
	cln runtime.Cleanup
	del bufferArgs // Close's arguments to PJRT_Buffer_Destroy, on the heap with the Buffer
	// ready: the buffer is known to be computed (a result of a call whose
	// completion event was awaited), so a read need not wait on it.
	ready bool
	// A buffer over lent host memory (lendHost, lends) keeps that memory
	// pinned until Close has destroyed it and awaited the plugin's done
	// event (if the plugin gave one).
	lends    bool
	lent     runtime.Pinner
	lentDone uintptr
}

func (c *Client) newBuffer(h uintptr, t ir.Type) *Buffer {
	b := c.transientBuffer(h, t)
	b.cln = runtime.AddCleanup(b, c.p.dropBuffer, h)
	return b
}

func (c *Client) wrap(h uintptr, t ir.Type, transient bool) *Buffer {
	if transient {
		return c.transientBuffer(h, t)
	}
	return c.newBuffer(h, t)
}

// transientBuffer wraps h without a cleanup, for a buffer that never leaves
// the function making it, which closes it on every path (a deferred Close):
// backend calls from host memory copy their arguments in and their results
// out, and registering and stopping a cleanup for each cost more than the
// copies.
func (c *Client) transientBuffer(h uintptr, t ir.Type) *Buffer {
	c.p.live.Add(1)
	return &Buffer{c: c, h: h, typ: t}
}

func (p *Plugin) destroyBuffer(h uintptr) {
	p.destroyBufferWith(new(bufferArgs), h)
}

// destroyBufferWith destroys h with a, heap memory the caller provides
// (Close passes the Buffer's own, sparing an allocation).
func (p *Plugin) destroyBufferWith(a *bufferArgs, h uintptr) {
	*a = bufferArgs{structSize: unsafe.Sizeof(bufferArgs{}), buffer: h}
	p.call(fnBufferDestroy, unsafe.Pointer(a))
	p.live.Add(-1)
}

// Close destroys the buffer. It is safe to call twice.
func (b *Buffer) Close() error {
	if b == nil || b.h == 0 {
		return nil
	}
	b.cln.Stop()
	b.c.p.destroyBufferWith(&b.del, b.h)
	b.h = 0
	if b.lends {
		err := b.c.p.await(b.lentDone)
		b.lent.Unpin()
		b.lends, b.lentDone = false, 0
		return err
	}
	return nil
}

// Type is the buffer's type.
func (b *Buffer) Type() ir.Type { return b.typ }

// FromHost copies data, a dense row-major array of static type t, to the
// client's first device. It returns once the plugin is done with data.
func (c *Client) FromHost(t ir.Type, data []byte) (*Buffer, error) {
	return c.fromHost(t, data, copyHost)
}

// FromHostOn is FromHost onto the client's device at index dev (of
// Devices()): a replica's argument (Replicated.Execute).
func (c *Client) FromHostOn(dev int, t ir.Type, data []byte) (*Buffer, error) {
	if dev < 0 || dev >= len(c.devices) {
		return nil, fmt.Errorf("pjrt: device %d of a client of %d", dev, len(c.devices))
	}
	return c.fromHostOn(dev, t, data, copyHost)
}

// How fromHost makes a buffer of host memory.
type hostMode uint8

const (
	copyHost      hostMode = iota // a copy, with a cleanup (FromHost)
	copyTransient                 // a copy, without a cleanup (transientBuffer)
	lendHost                      // the memory itself, pinned until Close, without a cleanup
)

// fromHost is FromHost in one of the modes. Lending saves the plugin an
// allocation and a copy (XLA:CPU reads an aligned array in place; it copies
// one that is not); a lent buffer must never be donated, since the program
// could then write its results into the caller's memory.
func (c *Client) fromHost(t ir.Type, data []byte, mode hostMode) (*Buffer, error) {
	return c.fromHostOn(0, t, data, mode)
}

// fromHostOn is fromHost onto the client's device at index dev.
func (c *Client) fromHostOn(dev int, t ir.Type, data []byte, mode hostMode) (*Buffer, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	bt, ok := bufferTypes[t.DType]
	if !ok {
		return nil, fmt.Errorf("pjrt: no PJRT element type for %s", t.DType)
	}
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() {
		return nil, fmt.Errorf("pjrt: %s is not a static type", t)
	}
	if want := n * int64(t.DType.Size()); int64(len(data)) != want {
		return nil, fmt.Errorf("pjrt: %d bytes for %s, want %d", len(data), t, want)
	}
	dims := make([]int64, len(t.Shape)+1) // +1: never a nil pointer for a scalar
	for i, d := range t.Shape {
		dims[i] = d.Size
	}
	host := data
	if len(host) == 0 {
		host = make([]byte, 1)
	}
	a := &bufferFromHostArgs{
		structSize: unsafe.Sizeof(bufferFromHostArgs{}),
		client:     c.h,
		data:       unsafe.Pointer(&host[0]),
		typ:        bt,
		dims:       unsafe.Pointer(&dims[0]),
		numDims:    uintptr(len(t.Shape)),
		semantics:  hostBufferImmutableOnlyDuringCall,
		device:     c.devices[dev].h,
	}
	var lent runtime.Pinner
	if mode == lendHost {
		a.semantics = hostBufferImmutableZeroCopy
		lent.Pin(&host[0])
	}
	err := c.p.call(fnClientBufferFromHostBuffer, unsafe.Pointer(a))
	if err == nil && mode != lendHost {
		// The event fires when the plugin is done with data; with the
		// semantics above that is already so, and waiting costs nothing.
		err = c.p.await(a.doneWithHost)
	}
	runtime.KeepAlive(host)
	runtime.KeepAlive(dims)
	if err != nil {
		if a.buffer != 0 {
			c.p.live.Add(1)
			c.p.destroyBuffer(a.buffer)
		}
		if mode == lendHost {
			c.p.await(a.doneWithHost) // only a failed call fails here: no event
			lent.Unpin()
		}
		return nil, err
	}
	t.Layout = nil
	b := c.wrap(a.buffer, t, mode != copyHost)
	if mode == lendHost {
		b.lends, b.lent, b.lentDone = true, lent, a.doneWithHost
	}
	return b, nil
}

// ToHost copies the buffer to a new dense row-major byte slice.
func (b *Buffer) ToHost() ([]byte, error) {
	n, _ := b.typ.NumElements()
	dst := make([]byte, max(n*int64(b.typ.DType.Size()), 1))
	size := n * int64(b.typ.DType.Size())
	if err := b.copyToHost(dst, size); err != nil {
		return nil, err
	}
	return dst[:size], nil
}

// copyToHost copies the buffer's size bytes into dst (at least one byte
// long, so that it has an address).
func (b *Buffer) copyToHost(dst []byte, size int64) error {
	if b.h == 0 {
		return errors.New("pjrt: read of a closed buffer")
	}
	if b.c.platform == "cpu" {
		return b.readHostMemory(dst[:size])
	}
	a := &bufferToHostArgs{
		structSize: unsafe.Sizeof(bufferToHostArgs{}),
		src:        b.h,
		dst:        unsafe.Pointer(&dst[0]),
		dstSize:    uintptr(size),
	}
	err := b.c.p.call(fnBufferToHostBuffer, unsafe.Pointer(a))
	if err == nil {
		err = b.c.p.await(a.event)
	}
	runtime.KeepAlive(dst)
	return err
}

// readHostMemory copies a buffer of a plugin whose device memory is host
// memory (XLA:CPU) straight from that memory, once the buffer is ready.
// PJRT_Buffer_ToHostBuffer would do the same copy on the plugin's thread
// pool and wake this thread when done, which costs a hundred microseconds
// or more per read on a loaded machine; jaxlib reads CPU buffers in place
// too. XLA:CPU lays arrays out densely, major to minor, as Buffer does.
func (b *Buffer) readHostMemory(dst []byte) error {
	if !b.ready {
		r := &bufferReadyEventArgs{structSize: unsafe.Sizeof(bufferReadyEventArgs{}), buffer: b.h}
		if err := b.c.p.call(fnBufferReadyEvent, unsafe.Pointer(r)); err != nil {
			return err
		}
		if err := b.c.p.await(r.event); err != nil {
			return err
		}
		b.ready = true
	}
	if len(dst) == 0 {
		return nil
	}
	u := &bufferUnsafePointerArgs{structSize: unsafe.Sizeof(bufferUnsafePointerArgs{}), buffer: b.h}
	if err := b.c.p.call(fnBufferUnsafePointer, unsafe.Pointer(u)); err != nil {
		return err
	}
	if u.pointer == 0 {
		return errors.New("pjrt: the plugin gave no address for a CPU buffer")
	}
	copy(dst, unsafe.Slice((*byte)(cPtr(u.pointer)), len(dst)))
	return nil
}

// typeOf reads a plugin buffer's element type and dimensions.
func (c *Client) typeOf(h uintptr) (ir.Type, error) {
	e := &bufferElementTypeArgs{structSize: unsafe.Sizeof(bufferElementTypeArgs{}), buffer: h}
	if err := c.p.call(fnBufferElementType, unsafe.Pointer(e)); err != nil {
		return ir.Type{}, err
	}
	dt, ok := dtypeOf(e.typ)
	if !ok {
		return ir.Type{}, fmt.Errorf("pjrt: result of PJRT element type %d, which tpucc has no dtype for", e.typ)
	}
	d := &bufferDimensionsArgs{structSize: unsafe.Sizeof(bufferDimensionsArgs{}), buffer: h}
	if err := c.p.call(fnBufferDimensions, unsafe.Pointer(d)); err != nil {
		return ir.Type{}, err
	}
	if d.numDims > 64 {
		return ir.Type{}, fmt.Errorf("pjrt: result of rank %d", d.numDims)
	}
	t := ir.Type{DType: dt, Shape: []ir.Dim{}}
	if d.numDims > 0 {
		for _, n := range unsafe.Slice((*int64)(cPtr(d.dims)), d.numDims) {
			t.Shape = append(t.Shape, ir.D(n))
		}
	}
	return t, nil
}

// Deleted reports whether the plugin has deleted the buffer's device memory:
// true after a call that was allowed to donate it
// (LoadedExecutable.ExecuteDonating) and whose program consumed it. A
// closed buffer is deleted too.
func (b *Buffer) Deleted() (bool, error) {
	if b == nil || b.h == 0 {
		return true, nil
	}
	a := &bufferIsDeletedArgs{structSize: unsafe.Sizeof(bufferIsDeletedArgs{}), buffer: b.h}
	if err := b.c.p.call(fnBufferIsDeleted, unsafe.Pointer(a)); err != nil {
		return false, err
	}
	return a.deleted, nil
}

// devicePointer is the address of the buffer's device memory as the plugin
// gives it (PJRT_Buffer_UnsafePointer), for tests that check that a result
// reuses a donated argument's memory.
func (b *Buffer) devicePointer() (uintptr, error) {
	u := &bufferUnsafePointerArgs{structSize: unsafe.Sizeof(bufferUnsafePointerArgs{}), buffer: b.h}
	if err := b.c.p.call(fnBufferUnsafePointer, unsafe.Pointer(u)); err != nil {
		return 0, err
	}
	return u.pointer, nil
}
