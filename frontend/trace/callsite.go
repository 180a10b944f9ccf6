package trace

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tpucc/tpucc/ir"
)

// libraryPackages are the packages whose frames are never the user's call
// site: the tensor API, this tracer, compile.Func's wrapper and the runtime
// behind it. A user's own test package (tensor_test) is not among them.
var libraryPackages = map[string]bool{
	"github.com/tpucc/tpucc/tensor":         true,
	"github.com/tpucc/tpucc/frontend/trace": true,
	"github.com/tpucc/tpucc/compile":        true,
	"github.com/tpucc/tpucc/engine":         true,
}

// CallerPos returns the file and line of the user's code that led to the
// current call: the first frame, starting skip frames above CallerPos's
// caller, whose function is outside the library packages (tensor,
// frontend/trace, compile, runtime). The file is relative to the working
// directory when it lies below it (as the Go compiler prints paths), else
// absolute. Col is 0: Go frames have no column. The zero Pos is returned when
// every frame is the library's.
func CallerPos(skip int) ir.Pos {
	var pcs [32]uintptr
	// 0 is runtime.Callers, 1 is CallerPos, 2 its caller.
	n := runtime.Callers(2+skip, pcs[:])
	for n > 0 {
		frames := runtime.CallersFrames(pcs[:n])
		for {
			fr, more := frames.Next()
			if !libraryPackages[packagePath(fr.Function)] && fr.Function != "" {
				return ir.Pos{File: displayPath(fr.File), Line: fr.Line}
			}
			if !more {
				break
			}
		}
		if n < len(pcs) {
			break
		}
		// Every frame so far was the library's: look further up.
		skip += n
		n = runtime.Callers(2+skip, pcs[:])
	}
	return ir.Pos{}
}

// packagePath extracts the import path from a function name as the runtime
// spells it: "github.com/tpucc/tpucc/tensor.(*Tensor).Add",
// "main.main", "pkg.F[...].func1" (type arguments may hold slashes and dots,
// so they are cut first).
func packagePath(fn string) string {
	if i := strings.IndexByte(fn, '['); i >= 0 {
		fn = fn[:i]
	}
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

var workDir = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
})

// displayPath shortens file to a path relative to the working directory when
// the file lies below it.
func displayPath(file string) string {
	wd := workDir()
	if wd == "" || !filepath.IsAbs(file) {
		return file
	}
	rel, err := filepath.Rel(wd, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return rel
}
