package pjrt

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// LoadedExecutable is a program compiled for and loaded on a client
// (PJRT_LoadedExecutable). Execute is safe for concurrent use.
type LoadedExecutable struct {
	c       *Client
	h       uintptr
	cln     runtime.Cleanup
	outputs int
	params  []ir.Type // nil: the caller gave no signature to check against
	// outTypes are the results' types, read once from the executable so
	// that a call does not ask each result buffer for its type; nil when
	// the plugin cannot say (each result is asked).
	outTypes []ir.Type
	frames   sync.Pool // *frame, so that a call allocates no argument structs
}

// frame is one call's argument structs, reused across calls.
type frame struct {
	args             executeArgs
	opts             executeOptions
	argv, outv       []uintptr
	argList, outList unsafe.Pointer
	event            uintptr
	await, destroy   eventArgs
	nonDonatable     []int64 // the argument positions the call must not donate
}

// Compile compiles StableHLO text for the client's devices, with
// SemanticsOverrides for its platform. params, when
// not nil, are the entry's parameter types: Execute checks its arguments
// against them in Go, because a plugin handed mismatched shapes may abort
// the process instead of returning an error.
func (c *Client) Compile(stablehlo string, params []ir.Type, o CompileOptions) (*LoadedExecutable, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	if o.Replicas*o.Partitions > len(c.devices) {
		return nil, fmt.Errorf("pjrt: %d replicas x %d partitions need %d devices, the client has %d",
			o.Replicas, o.Partitions, o.Replicas*o.Partitions, len(c.devices))
	}
	a := &clientCompileArgs{structSize: unsafe.Sizeof(clientCompileArgs{}), client: c.h}
	err := withProgram(stablehlo, o.withSemantics(c.platform), func(pr, opts unsafe.Pointer, n uintptr) error {
		a.program, a.options, a.optionsLen = pr, opts, n
		return c.p.call(fnClientCompile, unsafe.Pointer(a))
	})
	if err != nil {
		return nil, err
	}
	return c.newLoaded(a.executable, params)
}

// Deserialize loads an executable serialized by the same plugin and device
// kind (LoadedExecutable.Serialize, Executable.Serialize).
func (c *Client) Deserialize(blob []byte, params []ir.Type) (*LoadedExecutable, error) {
	h, err := c.deserialize(blob)
	if err != nil {
		return nil, err
	}
	return c.newLoaded(h, params)
}

// deserialize loads blob on the client and returns the loaded executable's
// handle, for newLoaded.
func (c *Client) deserialize(blob []byte) (uintptr, error) {
	if err := c.use(); err != nil {
		return 0, err
	}
	if len(blob) == 0 {
		return 0, errors.New("pjrt: empty serialized executable")
	}
	a := &deserializeArgs{
		structSize: unsafe.Sizeof(deserializeArgs{}),
		client:     c.h,
		bytes:      unsafe.Pointer(&blob[0]),
		bytesLen:   uintptr(len(blob)),
	}
	err := c.p.call(fnExecutableDeserializeAndLoad, unsafe.Pointer(a))
	runtime.KeepAlive(blob)
	if err != nil {
		return 0, err
	}
	return a.loaded, nil
}

func (c *Client) newLoaded(h uintptr, params []ir.Type) (*LoadedExecutable, error) {
	e := &LoadedExecutable{c: c, h: h, params: params}
	c.p.live.Add(1)
	p := c.p
	e.cln = runtime.AddCleanup(e, func(h uintptr) { p.destroyLoaded(h) }, h)
	exe, err := e.executable()
	if err == nil {
		e.outputs, err = exe.NumOutputs()
		if t, terr := exe.OutputTypes(); err == nil && terr == nil && len(t) == e.outputs {
			e.outTypes = t
		}
		exe.Close()
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (p *Plugin) destroyLoaded(h uintptr) {
	a := &loadedExecutableArgs{structSize: unsafe.Sizeof(loadedExecutableArgs{}), executable: h}
	p.call(fnLoadedExecutableDestroy, unsafe.Pointer(a))
	p.live.Add(-1)
}

// Close destroys the executable. It is safe to call twice, not concurrently
// with Execute.
func (e *LoadedExecutable) Close() error {
	if e == nil || e.h == 0 {
		return nil
	}
	e.cln.Stop()
	e.c.p.destroyLoaded(e.h)
	e.h = 0
	return nil
}

// executable returns the unloaded executable behind e; the caller closes it.
func (e *LoadedExecutable) executable() (*Executable, error) {
	a := &loadedGetExecutableArgs{structSize: unsafe.Sizeof(loadedGetExecutableArgs{}), loaded: e.h}
	if err := e.c.p.call(fnLoadedExecutableGetExec, unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	return e.c.p.newExecutable(a.executable), nil
}

// Serialize returns the executable's serialized form, for Deserialize.
func (e *LoadedExecutable) Serialize() ([]byte, error) {
	if e.h == 0 {
		return nil, errors.New("pjrt: serialize of a closed executable")
	}
	exe, err := e.executable()
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	return exe.Serialize()
}

// NumOutputs is the number of results Execute returns.
func (e *LoadedExecutable) NumOutputs() int { return e.outputs }

// checkArgs refuses, in Go, arguments a plugin might abort on.
func (e *LoadedExecutable) checkArgs(args []*Buffer) error {
	for i, b := range args {
		if b == nil || b.h == 0 {
			return fmt.Errorf("pjrt: argument %d is a closed buffer", i)
		}
		if b.c != e.c {
			return fmt.Errorf("pjrt: argument %d belongs to another client", i)
		}
	}
	if e.params == nil {
		return nil
	}
	if len(args) != len(e.params) {
		return fmt.Errorf("pjrt: %d arguments, the program takes %d", len(args), len(e.params))
	}
	for i, b := range args {
		want := e.params[i]
		want.Layout = nil
		if !b.typ.Equal(want) {
			return fmt.Errorf("pjrt: argument %d is %s, the program takes %s", i, b.typ, want)
		}
	}
	return nil
}

// Execute runs the program on one device and returns its results, which
// the caller closes. It returns once the results are computed.
func (e *LoadedExecutable) Execute(args []*Buffer) ([]*Buffer, error) {
	return e.ExecuteDonating(args, nil)
}

// ExecuteDonating is Execute that lets the program consume the arguments at
// the positions in donate: a parameter the program marks as a donor
// (tf.aliasing_output or jax.buffer_donor in its StableHLO) may have its
// device memory reused for a result, and the plugin then deletes that
// argument's buffer (Deleted reports true; Close still releases the
// handle). Every other argument is named in the call's
// non_donatable_input_indices, so that a donor parameter given a buffer the
// caller still needs is left intact. A parameter the program does not mark
// is never donated, whatever donate says.
func (e *LoadedExecutable) ExecuteDonating(args []*Buffer, donate []int) ([]*Buffer, error) {
	return e.execute(args, donate, false)
}

// execute is ExecuteDonating; transient results have no cleanup
// (transientBuffer), for a caller that closes them on every path.
func (e *LoadedExecutable) execute(args []*Buffer, donate []int, transient bool) ([]*Buffer, error) {
	if e.h == 0 {
		return nil, errors.New("pjrt: execute of a closed executable")
	}
	if err := e.checkArgs(args); err != nil {
		return nil, err
	}
	f, _ := e.frames.Get().(*frame)
	if f == nil || len(f.argv) != len(args)+1 {
		f = &frame{argv: make([]uintptr, len(args)+1), outv: make([]uintptr, e.outputs+1)}
		f.argList, f.outList = unsafe.Pointer(&f.argv[0]), unsafe.Pointer(&f.outv[0])
	}
	for i, b := range args {
		f.argv[i] = b.h
	}
	clear(f.outv)
	f.event = 0
	f.opts = executeOptions{structSize: unsafe.Sizeof(executeOptions{})}
	f.nonDonatable = nonDonatable(f.nonDonatable[:0], len(args), donate)
	if len(f.nonDonatable) > 0 {
		f.opts.nonDonatable, f.opts.numNonDon = unsafe.Pointer(&f.nonDonatable[0]), uintptr(len(f.nonDonatable))
	}
	f.args = executeArgs{
		structSize:           unsafe.Sizeof(executeArgs{}),
		executable:           e.h,
		options:              unsafe.Pointer(&f.opts),
		argumentLists:        unsafe.Pointer(&f.argList),
		numDevices:           1,
		numArgs:              uintptr(len(args)),
		outputLists:          unsafe.Pointer(&f.outList),
		deviceCompleteEvents: unsafe.Pointer(&f.event),
	}
	err := e.c.p.call(fnLoadedExecutableExecute, unsafe.Pointer(&f.args))
	awaited := err == nil && f.event != 0
	if awaited {
		f.await = eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: f.event}
		f.destroy = f.await
		err = e.c.p.call(fnEventAwait, unsafe.Pointer(&f.await))
		if derr := e.c.p.call(fnEventDestroy, unsafe.Pointer(&f.destroy)); err == nil {
			err = derr
		}
	}
	runtime.KeepAlive(args)
	out, err := e.results(f.outv[:e.outputs], err, transient)
	e.frames.Put(f)
	for _, b := range out {
		// The call's completion event fired without error: its results
		// are computed.
		b.ready = awaited
	}
	return out, err
}

// nonDonatable appends to dst the positions below n that donate does not
// list.
func nonDonatable(dst []int64, n int, donate []int) []int64 {
	for i := 0; i < n; i++ {
		if !slices.Contains(donate, i) {
			dst = append(dst, int64(i))
		}
	}
	return dst
}

// results wraps the output handles, or destroys them all on error.
func (e *LoadedExecutable) results(hs []uintptr, err error, transient bool) ([]*Buffer, error) {
	out := make([]*Buffer, 0, len(hs))
	for _, h := range hs {
		if h == 0 {
			continue
		}
		if err != nil {
			e.c.p.live.Add(1)
			e.c.p.destroyBuffer(h)
			continue
		}
		var t ir.Type
		var terr error
		if e.outTypes != nil {
			t = e.outTypes[len(out)]
		} else {
			t, terr = e.c.typeOf(h)
		}
		out = append(out, e.c.wrap(h, t, transient))
		if terr != nil {
			err = terr
		}
	}
	if err != nil {
		for _, b := range out {
			b.Close()
		}
		return nil, err
	}
	return out, nil
}

// DeviceKinds are the kinds of the devices the executable was loaded on,
// as the executable itself reports them.
func (e *LoadedExecutable) DeviceKinds() ([]string, error) {
	a := &loadedDevicesArgs{structSize: unsafe.Sizeof(loadedDevicesArgs{}), executable: e.h}
	if err := e.c.p.call(fnLoadedExecutableDevices, unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	if a.numDevices > 1<<16 {
		return nil, fmt.Errorf("pjrt: the executable reports %d devices", a.numDevices)
	}
	var kinds []string
	for _, h := range unsafe.Slice((*uintptr)(cPtr(a.devices)), a.numDevices) {
		d := &deviceGetDescriptionArgs{structSize: unsafe.Sizeof(deviceGetDescriptionArgs{}), device: h}
		if err := e.c.p.call(fnDeviceGetDescription, unsafe.Pointer(d)); err != nil {
			return nil, err
		}
		k, err := e.c.p.descriptionKind(d.description)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}
