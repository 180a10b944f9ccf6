package jsonstrict

import (
	"encoding/json"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a": [1, {"b": 2, "c": {"b": 3}}], "b": null}`, ""},
		{`"top"`, ""},
		{`{"a": 1, "a": 2}`, `duplicate key "a" in the object at $`},
		{`{"a": [0, {"x": 1, "x": 1}]}`, `duplicate key "x" in the object at $.a[1]`},
		{`{"a": {"b": {"c": 1, "c": 2}}}`, `duplicate key "c" in the object at $.a.b`},
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
