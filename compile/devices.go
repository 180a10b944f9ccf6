package compile

// The PJRT backends (pjrt, pjrt-tpu, pjrt-gpu) are linked into every program
// that compiles functions, so that Device("tpu"), and the default device on
// a TPU VM, need no import of the user's. The package is pure Go (purego):
// it loads a plugin only when its backend is opened.
import _ "github.com/tpucc/tpucc/backend/pjrt"
