package safetensors

import (
	"testing"
)

// FuzzParseHeader: any bytes either parse into a header whose tensors tile the
// data exactly, or give an error; never a panic.
func FuzzParseHeader(f *testing.F) {
	f.Add(raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(raw(`{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]},"b":{"dtype":"BOOL","shape":[],"data_offsets":[4,5]}}`, make([]byte, 5)))
	f.Add(raw(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{}}`, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data, int64(len(data)))
		if err != nil {
			return
		}
		at := int64(0)
		for _, info := range h.Tensors {
			n, ok := info.Type().NumElements()
			if !ok || info.Begin != at || info.End-info.Begin != n*int64(info.DType.Size()) {
				t.Fatalf("accepted a bad layout: %+v after %d", info, at)
			}
			at = info.End
		}
		if h.DataAt+at != int64(len(data)) {
			t.Fatalf("accepted %d data bytes for %d in tensors", int64(len(data))-h.DataAt, at)
		}
	})
}
