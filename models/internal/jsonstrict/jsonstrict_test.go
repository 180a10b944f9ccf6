package jsonstrict

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a": [1, {"b": 2, "c": {"b": 3}}], "b": null}`, ""},
		{`"top"`, ""},
		{`{"a": 1, "a": 2}`, `duplicate key "a" in the object at $`},
		{`{"a": [0, {"x": 1, "x": 1}]}`, `duplicate key "x" in the object at $.a[1]`},
		{`{"a": {"b": {"c": 1, "c": 2}}}`, `duplicate key "c" in the object at $.a.b`},
		{`{"x": [{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"a":0}]}`, `duplicate key "a" in the object at $.x[0]`},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":{"i":0}}`, ``},
		{"{\"a\": \"\xc3\"}", `not valid UTF-8 at byte 7`},
		{``, `empty JSON`},
		{`{"a": 1`, `invalid JSON: unexpected end`},
		{`{"a": 1} 2`, `invalid JSON: data after the top-level value`},
		{`{"a" 1}`, `invalid JSON: invalid character '1' after object key`},
	}
	for _, c := range cases {
		err := Check([]byte(c.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Check(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecode(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	for in, want := range map[string]string{
		`{"a": 1, "b": 2}`: `unknown field "b"`,
		`{"a": "1"}`:       `a: a JSON string where an integer is expected`,
	} {
		if err := Decode([]byte(in), &v); err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %s", in, err, want)
		}
	}
}

// FuzzCheck: Check never panics, and whatever it accepts encoding/json parses.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": 2}], "c": "d"}`))
	f.Add([]byte(`{"a": 1, "a": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data) == nil && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
	})
}

// nested is issue 29's config.json: a valid document nested depth arrays deep.
func nested(depth int) []byte {
	return []byte(`{"model_type":"qwen3","id2label":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
}

// TestDeepNesting: a 200 KB file nested 100000 deep is refused at the first
// level past MaxDepth, allocating a small multiple of its size (before the
// budget, Check kept a path string per open level: over 8 GB).
func TestDeepNesting(t *testing.T) {
	data := nested(100000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := Check(data)
	runtime.ReadMemStats(&after)
	want := "invalid JSON: nested deeper than 64 levels at byte 96"
	if err == nil || err.Error() != want {
		t.Fatalf("Check = %v, want %s", err, want)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*uint64(len(data)) {
		t.Errorf("Check allocated %d bytes for %d bytes of input", got, len(data))
	}
	// MaxDepth levels are fine: the top-level object and 63 arrays.
	if err := Check(nested(MaxDepth - 1)); err != nil {
		t.Errorf("Check at depth %d: %v", MaxDepth, err)
	}
	if err := Check(nested(MaxDepth)); err == nil || err.Error() != want {
		t.Errorf("Check at depth %d = %v, want %s", MaxDepth+1, err, want)
	}
	var v struct{}
	if err := Decode(data, &v); err == nil || err.Error() != want {
		t.Errorf("Decode = %v, want %s", err, want)
	}
}

// TestLinearMemory: an accepted file of many wide, deep values allocates in
// proportion to its size, not to the product of its depth and width.
func TestLinearMemory(t *testing.T) {
	deep := `{"k":` + strings.Repeat(`{"aaaaaaaaaaaaaaaa":`, MaxDepth-3) + `[1]` + strings.Repeat("}", MaxDepth-3) + `}`
	data := []byte("[" + strings.Repeat(deep+",", 2000) + "0]")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := Check(data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*uint64(len(data)) {
		t.Errorf("Check allocated %d bytes for %d bytes of input", got, len(data))
	}
}
