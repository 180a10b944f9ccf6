package pjrt

import (
	"errors"
	"unsafe"
)

// MemoryStats is what one device's memory holds while an executable runs,
// as the compiler laid it out (xla::CompiledMemoryStats): for a program
// split over a mesh, each chip's share, not the whole program's.
type MemoryStats struct {
	GeneratedCode int64 // the program's code
	Arguments     int64 // parameters
	Outputs       int64 // results
	Alias         int64 // the part of Outputs that reuses an argument's memory
	Temp          int64 // scratch: intermediate values
}

// Total is the device memory the executable needs at most: results that
// alias an argument are counted once.
func (s MemoryStats) Total() int64 {
	return s.GeneratedCode + s.Arguments + s.Outputs - s.Alias + s.Temp
}

// MemoryStats asks the plugin for the executable's compiled memory
// statistics (PJRT_Executable_GetCompiledMemoryStats).
func (e *Executable) MemoryStats() (MemoryStats, error) {
	if e.h == 0 {
		return MemoryStats{}, errors.New("pjrt: memory statistics of a closed executable")
	}
	a := &memoryStatsArgs{structSize: unsafe.Sizeof(memoryStatsArgs{}), executable: e.h}
	if err := e.p.call(fnExecutableGetCompiledMemoryStats, unsafe.Pointer(a)); err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{GeneratedCode: a.generatedCode, Arguments: a.arguments, Outputs: a.outputs,
		Alias: a.alias, Temp: a.temp}, nil
}
