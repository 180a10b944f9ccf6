package ir

import (
	"strconv"
	"testing"
)

// Module.Func answers from an index; every way of changing Funcs that the
// code base uses (NewFunc, appending, reordering, renaming, replacing in
// place) must still give the first function of the name.
func TestModuleFuncFollowsEdits(t *testing.T) {
	m := NewModule("m.tir")
	a := m.NewFunc("a", nil, nil, nil, Pos{})
	b := m.NewFunc("b", nil, nil, nil, Pos{})
	check := func(step, name string, want *Func) {
		t.Helper()
		if got := m.Func(name); got != want {
			t.Errorf("%s: Func(%q) = %v, want %v", step, name, funcName(got), funcName(want))
		}
	}
	check("built", "a", a)
	check("built", "b", b)
	check("built", "c", nil)

	c := &Func{Name: "c", Module: m}
	m.Funcs = append(m.Funcs, c)
	check("appended", "c", c)

	m.Funcs[0], m.Funcs[1] = m.Funcs[1], m.Funcs[0]
	check("swapped", "a", a)
	check("swapped", "b", b)

	a.Name = "z"
	check("renamed", "a", nil)
	check("renamed", "z", a)

	d := &Func{Name: "b", Module: m}
	m.Funcs[0] = d // b's slot, same name
	check("replaced", "b", d)

	m.Funcs = append(m.Funcs[1:], m.Funcs[0]) // rotated, as progen does
	check("rotated", "z", a)
	check("rotated", "b", d)

	dup := &Func{Name: "c", Module: m}
	m.Funcs = append(m.Funcs, dup)
	check("duplicate", "c", c)
}

func funcName(f *Func) string {
	if f == nil {
		return "nil"
	}
	return "@" + f.Name
}

// A lookup that hits keeps the index it found: looking up every function of
// a large module does not rebuild it (which made a call graph of n
// functions cost O(n²) to verify and run).
func TestModuleFuncKeepsIndex(t *testing.T) {
	m := NewModule("m.tir")
	for i := 0; i < 1000; i++ {
		m.NewFunc("f"+strconv.Itoa(i), nil, nil, nil, Pos{})
	}
	m.Func("f0")
	idx := m.index.Load()
	for i := 999; i >= 0; i-- {
		if f := m.Func("f" + strconv.Itoa(i)); f != m.Funcs[i] {
			t.Fatalf("Func(f%d) = %v", i, funcName(f))
		}
	}
	if m.index.Load() != idx {
		t.Errorf("lookups that hit rebuilt the index")
	}
}
