package pjrt

import "unsafe"

// A field that points into Go memory is an unsafe.Pointer, never a uintptr:
// escape analysis then moves what it points to onto the heap, which does not
// move. A uintptr into a goroutine's stack is left dangling when the stack
// grows and is copied before the call (TestCPUConcurrent caught a buffer
// made from another goroutine's data that way).
//
// The C API's argument structs, laid out by hand for 64-bit platforms (every
// field is pointer-sized or padded to be). Each starts with struct_size and
// extension_start. A struct whose newer versions append fields carries a
// zeroed reserve so that its struct_size covers what plugins up to API 0.115
// expect; layoutSizes lists them for the probe test.

type pluginInitializeArgs struct {
	structSize, ext uintptr
}

type pluginAttributesArgs struct {
	structSize, ext uintptr
	attributes      uintptr // out: PJRT_NamedValue*
	numAttributes   uintptr // out
}

// namedValue is PJRT_NamedValue; value holds the union.
type namedValue struct {
	structSize, ext uintptr
	name, nameLen   uintptr
	typ             int32
	_               int32
	value           uintptr
	valueSize       uintptr
}

type eventArgs struct { // Destroy, Await, Error
	structSize, ext uintptr
	event           uintptr
}

type eventIsReadyArgs struct {
	structSize, ext uintptr
	event           uintptr
	ready           bool // out
	_               [7]byte
}

type topologyCreateArgs struct {
	structSize, ext uintptr
	name            unsafe.Pointer
	nameLen         uintptr
	options         uintptr
	numOptions      uintptr
	topology        uintptr // out
}

type topologyArgs struct { // Destroy
	structSize, ext uintptr
	topology        uintptr
}

type topologyStringArgs struct { // PlatformName, PlatformVersion
	structSize, ext uintptr
	topology        uintptr
	str, strLen     uintptr // out
}

type topologyDevicesArgs struct { // GetDeviceDescriptions
	structSize, ext uintptr
	topology        uintptr
	descriptions    uintptr // out: const PJRT_DeviceDescription* const*
	numDescriptions uintptr // out
}

type program struct {
	structSize, ext uintptr
	code            unsafe.Pointer
	codeLen         uintptr
	format          unsafe.Pointer
	formatLen       uintptr
}

type compileArgs struct {
	structSize, ext uintptr
	topology        uintptr
	program         unsafe.Pointer
	options         unsafe.Pointer
	optionsLen      uintptr
	client          uintptr
	executable      uintptr // out
}

type executableArgs struct { // Executable_Destroy
	structSize, ext uintptr
	executable      uintptr
}

type executableSerializeArgs struct {
	structSize, ext uintptr
	executable      uintptr
	bytes, bytesLen uintptr // out
	serialized      uintptr // out
	deleter         uintptr // out: void (*)(PJRT_SerializedExecutable*)
}

type executableNumOutputsArgs struct {
	structSize, ext uintptr
	executable      uintptr
	numOutputs      uintptr // out
}

type executableOutputTypesArgs struct {
	structSize, ext uintptr
	executable      uintptr
	types           uintptr // out: PJRT_Buffer_Type*
	numTypes        uintptr // out
}

type executableOutputDimsArgs struct {
	structSize, ext uintptr
	executable      uintptr
	numOutputs      uintptr // out
	dims            uintptr // out: int64_t*, all outputs' dims concatenated
	dimSizes        uintptr // out: size_t*, rank of each output
}

type clientCreateArgs struct {
	structSize, ext    uintptr
	options            unsafe.Pointer // PJRT_NamedValue*, pinned (see namedValues)
	numOptions         uintptr
	kvGet, kvGetArg    uintptr
	kvPut, kvPutArg    uintptr
	client             uintptr // out
	kvTryGet, kvTryArg uintptr
}

type clientArgs struct { // Client_Destroy
	structSize, ext uintptr
	client          uintptr
}

type clientStringArgs struct { // PlatformName, PlatformVersion
	structSize, ext uintptr
	client          uintptr
	str, strLen     uintptr // out
}

type clientDevicesArgs struct {
	structSize, ext uintptr
	client          uintptr
	devices         uintptr // out: PJRT_Device* const*
	numDevices      uintptr // out
}

type clientCompileArgs struct {
	structSize, ext uintptr
	client          uintptr
	program         unsafe.Pointer
	options         unsafe.Pointer
	optionsLen      uintptr
	executable      uintptr // out: PJRT_LoadedExecutable*
}

// Host buffer semantics: the plugin copies the host memory before
// BufferFromHostBuffer returns, so a caller's slice is never lent past the
// call (FromHost still awaits the done event when a plugin gives one).
const hostBufferImmutableOnlyDuringCall = 0

// hostBufferImmutableZeroCopy lends the host memory to the buffer instead:
// the plugin may read it in place until the buffer is destroyed and its
// done event has fired, and never writes it (lendHost).
const hostBufferImmutableZeroCopy = 2

type bufferFromHostArgs struct {
	structSize, ext uintptr
	client          uintptr
	data            unsafe.Pointer
	typ             int32
	_               int32
	dims            unsafe.Pointer
	numDims         uintptr
	strides, numStr uintptr
	semantics       int32
	_               int32
	device          uintptr
	memory          uintptr
	deviceLayout    uintptr
	doneWithHost    uintptr // out: PJRT_Event*
	buffer          uintptr // out
}

type deviceGetDescriptionArgs struct {
	structSize, ext uintptr
	device          uintptr
	description     uintptr // out
}

type deviceDescriptionIDArgs struct {
	structSize, ext uintptr
	description     uintptr
	id              int32 // out
	_               int32
}

type deviceDescriptionKindArgs struct {
	structSize, ext uintptr
	description     uintptr
	kind, kindLen   uintptr // out
}

type loadedExecutableArgs struct { // LoadedExecutable_Destroy
	structSize, ext uintptr
	executable      uintptr
}

type loadedDevicesArgs struct {
	structSize, ext uintptr
	executable      uintptr
	devices         uintptr // out: PJRT_Device* const*
	numDevices      uintptr // out
}

type loadedGetExecutableArgs struct {
	structSize, ext uintptr
	loaded          uintptr
	executable      uintptr // out
}

type executeOptions struct {
	structSize, ext  uintptr
	sendCallbacks    uintptr
	recvCallbacks    uintptr
	numSend, numRecv uintptr
	launchID         int32
	_                int32
	nonDonatable     unsafe.Pointer // const int64_t*
	numNonDon        uintptr
	context          uintptr
	callLocation     uintptr
	numTasks         uintptr
	taskIDs          uintptr
	incarnationIDs   uintptr
}

type executeArgs struct {
	structSize, ext      uintptr
	executable           uintptr
	options              unsafe.Pointer
	argumentLists        unsafe.Pointer // PJRT_Buffer* const* const*
	numDevices, numArgs  uintptr
	outputLists          unsafe.Pointer // PJRT_Buffer** const*
	deviceCompleteEvents unsafe.Pointer // PJRT_Event**
	executeDevice        uintptr
}

type deserializeArgs struct {
	structSize, ext    uintptr
	client             uintptr
	bytes              unsafe.Pointer
	bytesLen           uintptr
	loaded             uintptr // out
	overrideOpts, olen uintptr
}

type bufferIsDeletedArgs struct {
	structSize, ext uintptr
	buffer          uintptr
	deleted         bool // out
}

type bufferArgs struct { // Buffer_Destroy
	structSize, ext uintptr
	buffer          uintptr
}

type bufferElementTypeArgs struct {
	structSize, ext uintptr
	buffer          uintptr
	typ             int32 // out
	_               int32
}

type bufferDimensionsArgs struct {
	structSize, ext uintptr
	buffer          uintptr
	dims, numDims   uintptr // out
}

type bufferToHostArgs struct {
	structSize, ext uintptr
	src             uintptr
	hostLayout      uintptr
	dst             unsafe.Pointer
	dstSize         uintptr
	event           uintptr // out
}

type bufferUnsafePointerArgs struct {
	structSize, ext uintptr
	buffer          uintptr
	pointer         uintptr // out: the buffer's device memory
}

type bufferReadyEventArgs struct {
	structSize, ext uintptr
	buffer          uintptr
	event           uintptr // out
}

// memoryStatsArgs is PJRT_Executable_GetCompiledMemoryStats_Args up to
// the two fields newer plugins add (peak and total), which a plugin that
// knows them fills only when the struct is large enough: they are here so
// the struct is as large as the newest plugin expects.
type memoryStatsArgs struct {
	structSize, ext uintptr
	executable      uintptr
	generatedCode   int64 // out: device memory
	arguments       int64
	outputs         int64
	alias           int64
	temp            int64
	host            [5]int64 // out: host memory, the same five
	peak, total     int64    // out, newer plugins
}

// layoutSize pairs a function with the size of the argument struct we pass
// it, for the test that asks each plugin what it expects.
type layoutSize struct {
	fn   fnIndex
	size uintptr
}

var layoutSizes = []layoutSize{
	{fnPluginInitialize, unsafe.Sizeof(pluginInitializeArgs{})},
	{fnPluginAttributes, unsafe.Sizeof(pluginAttributesArgs{})},
	{fnEventIsReady, unsafe.Sizeof(eventIsReadyArgs{})},
	{fnEventAwait, unsafe.Sizeof(eventArgs{})},
	{fnEventDestroy, unsafe.Sizeof(eventArgs{})},
	{fnTopologyCreate, unsafe.Sizeof(topologyCreateArgs{})},
	{fnTopologyDestroy, unsafe.Sizeof(topologyArgs{})},
	{fnTopologyPlatformName, unsafe.Sizeof(topologyStringArgs{})},
	{fnTopologyPlatformVersion, unsafe.Sizeof(topologyStringArgs{})},
	{fnTopologyDeviceDescriptions, unsafe.Sizeof(topologyDevicesArgs{})},
	{fnCompile, unsafe.Sizeof(compileArgs{})},
	{fnExecutableDestroy, unsafe.Sizeof(executableArgs{})},
	{fnExecutableSerialize, unsafe.Sizeof(executableSerializeArgs{})},
	{fnExecutableNumOutputs, unsafe.Sizeof(executableNumOutputsArgs{})},
	{fnExecutableOutputElementTypes, unsafe.Sizeof(executableOutputTypesArgs{})},
	{fnExecutableOutputDimensions, unsafe.Sizeof(executableOutputDimsArgs{})},
	{fnExecutableGetCompiledMemoryStats, unsafe.Sizeof(memoryStatsArgs{})},
	{fnClientCreate, unsafe.Sizeof(clientCreateArgs{})},
	{fnClientDestroy, unsafe.Sizeof(clientArgs{})},
	{fnClientPlatformName, unsafe.Sizeof(clientStringArgs{})},
	{fnClientPlatformVersion, unsafe.Sizeof(clientStringArgs{})},
	{fnClientAddressableDevices, unsafe.Sizeof(clientDevicesArgs{})},
	{fnClientCompile, unsafe.Sizeof(clientCompileArgs{})},
	{fnClientBufferFromHostBuffer, unsafe.Sizeof(bufferFromHostArgs{})},
	{fnDeviceGetDescription, unsafe.Sizeof(deviceGetDescriptionArgs{})},
	{fnDeviceDescriptionID, unsafe.Sizeof(deviceDescriptionIDArgs{})},
	{fnDeviceDescriptionKind, unsafe.Sizeof(deviceDescriptionKindArgs{})},
	{fnLoadedExecutableDestroy, unsafe.Sizeof(loadedExecutableArgs{})},
	{fnLoadedExecutableGetExec, unsafe.Sizeof(loadedGetExecutableArgs{})},
	{fnLoadedExecutableDevices, unsafe.Sizeof(loadedDevicesArgs{})},
	{fnLoadedExecutableExecute, unsafe.Sizeof(executeArgs{})},
	{fnExecutableDeserializeAndLoad, unsafe.Sizeof(deserializeArgs{})},
	{fnBufferDestroy, unsafe.Sizeof(bufferArgs{})},
	{fnBufferIsDeleted, unsafe.Sizeof(bufferIsDeletedArgs{})},
	{fnBufferElementType, unsafe.Sizeof(bufferElementTypeArgs{})},
	{fnBufferDimensions, unsafe.Sizeof(bufferDimensionsArgs{})},
	{fnBufferToHostBuffer, unsafe.Sizeof(bufferToHostArgs{})},
	{fnBufferReadyEvent, unsafe.Sizeof(bufferReadyEventArgs{})},
	{fnBufferUnsafePointer, unsafe.Sizeof(bufferUnsafePointerArgs{})},
}
