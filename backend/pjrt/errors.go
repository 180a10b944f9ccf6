package pjrt

import (
	"fmt"
	"unsafe"
)

// Code is a PJRT error code (the absl status codes).
type Code int32

var codeNames = [...]string{
	1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
	5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
	9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
	13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}

func (c Code) String() string {
	if c > 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code %d", int32(c))
}

// Error is an error reported by a plugin: the function that failed, the
// plugin's code and its message. The plugin's error object is destroyed
// before an Error is returned.
type Error struct {
	Func    string
	Code    Code
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("pjrt: %s: %s: %s", e.Func, e.Code, e.Message)
}

type errorDestroyArgs struct {
	structSize uintptr
	ext        uintptr
	err        uintptr
}

type errorMessageArgs struct {
	structSize uintptr
	ext        uintptr
	err        uintptr
	message    uintptr // out
	messageLen uintptr // out
}

type errorGetCodeArgs struct {
	structSize uintptr
	ext        uintptr
	err        uintptr
	code       int32 // out
	_          int32
}

// takeError converts the plugin error e, returned by fn, into an *Error and
// destroys e.
func (p *Plugin) takeError(fn fnIndex, e uintptr) error {
	defer func() {
		a := &errorDestroyArgs{structSize: unsafe.Sizeof(errorDestroyArgs{}), err: e}
		p.rawCall(fnErrorDestroy, unsafe.Pointer(a))
	}()
	out := &Error{Func: fn.String(), Code: 2}
	m := &errorMessageArgs{structSize: unsafe.Sizeof(errorMessageArgs{}), err: e}
	p.rawCall(fnErrorMessage, unsafe.Pointer(m))
	out.Message = cString(m.message, m.messageLen)
	c := &errorGetCodeArgs{structSize: unsafe.Sizeof(errorGetCodeArgs{}), err: e}
	if r := p.rawCall(fnErrorGetCode, unsafe.Pointer(c)); r == 0 {
		out.Code = Code(c.code)
	} else {
		// GetCode failing leaves a second error to destroy; UNKNOWN stands.
		a := &errorDestroyArgs{structSize: unsafe.Sizeof(errorDestroyArgs{}), err: r}
		p.rawCall(fnErrorDestroy, unsafe.Pointer(a))
	}
	return out
}

// cPtr turns an address the plugin handed us into a pointer. The memory is
// the plugin's, never Go's heap, so the collector does not care about it.
func cPtr(u uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&u))
}

// cString copies n bytes at the plugin's address s into a Go string.
func cString(s, n uintptr) string {
	if s == 0 || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(cPtr(s)), n))
}

// cBytes copies n bytes at the plugin's address s.
func cBytes(s, n uintptr) []byte {
	if s == 0 || n == 0 {
		return []byte{}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cPtr(s)), n)...)
}
