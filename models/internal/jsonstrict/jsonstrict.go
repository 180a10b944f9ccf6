// Package jsonstrict checks the JSON files of a model directory (a
// safetensors header, model.safetensors.index.json, config.json,
// tokenizer.json) before encoding/json decodes them. encoding/json keeps the
// last of two equal keys and replaces invalid UTF-8 with U+FFFD without a
// word; a checkpoint is untrusted input, so both are errors here.
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted. Real model
// files nest fewer than ten levels (tokenizer.json's normalizer sequences are
// the deepest); the budget is checked before a level is opened, so hostile
// nesting costs nothing per level beyond the decoder's own token.
const MaxDepth = 64

// Check reports the first reason data is not exactly one well-formed JSON
// value of valid UTF-8 without a repeated key in any object, nested at most
// MaxDepth levels. Errors name the place by a path such as $.weight_map or
// $.layers[3], or by a byte offset. Memory is linear in len(data): paths are
// only built for an error.
func Check(data []byte) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("not valid UTF-8 at byte %d", invalidAt(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) != 0 {
				return errors.New("invalid JSON: unexpected end")
			}
			return errors.New("empty JSON")
		}
		if err != nil {
			return fmt.Errorf("invalid JSON: %v", err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '[' || d == '{') && len(stack) >= MaxDepth {
			// The decoder has just read this delimiter, one byte back.
			return fmt.Errorf("invalid JSON: nested deeper than %d levels at byte %d", MaxDepth, dec.InputOffset()-1)
		}
		if err := step(&stack, tok); err != nil {
			return err
		}
		if len(stack) == 0 {
			break
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the top-level value")
	}
	return nil
}

// frame is one open object or array.
type frame struct {
	object  bool
	wantKey bool   // an object expects a key next
	key     string // the object's current key
	index   int    // an array's next index
	// An object's keys so far: a short list while few, since most objects of
	// a model file hold a handful, then a set.
	few  []string
	many map[string]bool
}

// fewKeys is the most keys an object keeps in its list before the set.
const fewKeys = 8

// add records key k of an object; false if the object already has it.
func (f *frame) add(k string) bool {
	if f.many != nil {
		if f.many[k] {
			return false
		}
		f.many[k] = true
		return true
	}
	if slices.Contains(f.few, k) {
		return false
	}
	if len(f.few) < fewKeys {
		f.few = append(f.few, k)
		return true
	}
	f.many = make(map[string]bool, 2*fewKeys)
	for _, old := range f.few {
		f.many[old] = true
	}
	f.many[k] = true
	f.few = nil
	return true
}

// path names the container stack[n-1] as $.a[3].b.
func path(stack []frame, n int) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, f := range stack[:n-1] {
		if f.object {
			b.WriteString("." + f.key)
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

// step applies one token; a top-level scalar leaves the stack empty.
func step(stack *[]frame, tok json.Token) error {
	n := len(*stack)
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		*stack = (*stack)[:n-1]
		valueDone(*stack)
		return nil
	}
	if n > 0 && (*stack)[n-1].object && (*stack)[n-1].wantKey {
		top := &(*stack)[n-1]
		k := tok.(string) // the decoder only yields strings as keys
		if !top.add(k) {
			return fmt.Errorf("duplicate key %q in the object at %s", k, path(*stack, n))
		}
		top.key, top.wantKey = k, false
		return nil
	}
	if d, ok := tok.(json.Delim); ok {
		*stack = append(*stack, frame{object: d == '{', wantKey: d == '{'})
		return nil
	}
	valueDone(*stack)
	return nil
}

// valueDone moves the enclosing container past the value just finished.
func valueDone(stack []frame) {
	if len(stack) == 0 {
		return
	}
	top := &stack[len(stack)-1]
	if top.object {
		top.wantKey = true
	} else {
		top.index++
	}
}

func invalidAt(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// Decode checks data, then decodes it into v refusing fields v does not
// declare: the error names the unknown field.
func Decode(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tidy(err)
	}
	return nil
}

// tidy rewrites encoding/json's errors into the words used elsewhere here.
func tidy(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		what := fmt.Sprintf("a JSON %s where %s is expected", te.Value, goKind(te.Type.String()))
		if te.Field == "" {
			return errors.New(what)
		}
		return fmt.Errorf("%s: %s", te.Field, what)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", rest)
	}
	return errors.New(strings.TrimPrefix(msg, "json: "))
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "an object"
	}
	return t
}
