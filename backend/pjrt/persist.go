package pjrt

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// The runtime's persistent cache keeps a PJRT executable beside its program
// (backend.Persistable) as the plugin serialized it, under an ID that names
// what it was compiled from and by:
//
//	pjrt-executable sha256:EXE hlo-sha256:HLO backend-sha256:FP
//
// EXE hashes the serialized bytes, HLO the StableHLO text compiled, FP the
// backend's Fingerprint (plugin platform, version, C API version, device
// kind). CompileExpecting loads the bytes only when all three match, and
// compiles afresh otherwise: a cache entry is input, never trusted.

const codePrefix = "pjrt-executable"

// codeID is the ID's part that does not depend on the executable's bytes.
func (b *Backend) codeID(hlo string) string {
	return "hlo-sha256:" + SHA256([]byte(hlo)) + " backend-sha256:" + SHA256([]byte(b.Fingerprint()))
}

// NativeCode serializes the executable (once) for the persistent cache.
func (e *executable) NativeCode() (backend.NativeCode, bool) {
	e.once.Do(func() {
		data, err := e.exe.Serialize()
		if err != nil || len(data) == 0 {
			return
		}
		e.code = backend.NativeCode{ID: codePrefix + " sha256:" + SHA256(data) + " " + e.id, Data: data}
		e.codeOK = true
	})
	return e.code, e.codeOK
}

// CompileExpecting loads code when its ID matches p and this backend, and
// compiles p otherwise (also when the plugin refuses the bytes).
func (b *Backend) CompileExpecting(p *backend.Program, code backend.NativeCode) (backend.Executable, error) {
	return b.compile(p, &code)
}

// load deserializes code for p, or returns nil when there is none or it
// does not check out.
func (b *Backend) load(p *backend.Program, code *backend.NativeCode, params []ir.Type) *LoadedExecutable {
	if code == nil {
		return nil
	}
	want := fmt.Sprintf("%s sha256:%s %s", codePrefix, SHA256(code.Data), b.codeID(p.HLO))
	if code.ID != want || !strings.HasPrefix(code.ID, codePrefix+" ") {
		return nil
	}
	exe, err := b.c.Deserialize(code.Data, params)
	if err != nil {
		return nil
	}
	b.loads.Add(1)
	return exe
}

// Counts is how many programs the backend compiled and how many it loaded
// from persisted code.
func (b *Backend) Counts() (compiles, loads int64) { return b.compiles.Load(), b.loads.Load() }
