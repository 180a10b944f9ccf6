package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

var testSpecs = []flagSpec{
	{name: "o", kind: valueFlag, arg: "FILE", doc: "output"},
	{name: "seed", kind: valueFlag, arg: "N", doc: "seed"},
	{name: "input", kind: listFlag, arg: "NAME=FILE", doc: "an input\nsecond line"},
	{name: "verify-each", kind: boolFlag, doc: "verify"},
}

// show renders a parse as text: flags in spec order, then the positional arguments.
func show(p *parsed) string {
	var parts []string
	for _, s := range testSpecs {
		if p.has(s.name) {
			parts = append(parts, s.name+"="+strings.Join(p.list(s.name), "|"))
		}
	}
	parts = append(parts, fmt.Sprintf("args=%q", p.positional))
	if p.help {
		parts = append(parts, "help")
	}
	return strings.Join(parts, " ")
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args string
		want string
	}{
		{"m.tir", `args=["m.tir"]`},
		{"m.tir -o out.hlo", `o=out.hlo args=["m.tir"]`},
		{"-o out.hlo m.tir", `o=out.hlo args=["m.tir"]`},
		{"--o=out.hlo m.tir", `o=out.hlo args=["m.tir"]`},
		{"-o=a -o b m.tir", `o=a|b args=["m.tir"]`},
		{"-o - m.tir", `o=- args=["m.tir"]`},
		{"- -o x", `o=x args=["-"]`},
		{"--seed -3 m.tir", `seed=-3 args=["m.tir"]`},
		{"--seed= m.tir", `seed= args=["m.tir"]`},
		{"--input a=x.npy m.tir --input=b=y.npy", `input=a=x.npy|b=y.npy args=["m.tir"]`},
		{"--verify-each m.tir", `verify-each=true args=["m.tir"]`},
		{"m.tir -verify-each=false", `verify-each=false args=["m.tir"]`},
		{"--verify-each=1 m.tir", `verify-each=true args=["m.tir"]`},
		{"m.tir -- -o --seed", `args=["m.tir" "-o" "--seed"]`},
		{"a b", `args=["a" "b"]`},
		{"m.tir -h", `args=["m.tir"] help`},
		{"--help", `args=[] help`},
	} {
		p, err := parseFlags(testSpecs, strings.Fields(c.args))
		if err != nil {
			t.Errorf("%s: %v", c.args, err)
			continue
		}
		if got := show(p); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		args string
		want string
	}{
		{"--fast m.tir", "unknown flag --fast"},
		{"m.tir ---o x", "unknown flag ---o"},
		{"m.tir --fast=yes", "unknown flag --fast"},
		{"m.tir -o", "flag --o needs a value (FILE)"},
		{"--verify-each=maybe m.tir", `flag --verify-each takes no value or =true/=false, not "maybe"`},
	} {
		_, err := parseFlags(testSpecs, strings.Fields(c.args))
		if _, ok := err.(*usageError); !ok || err.Error() != c.want {
			t.Errorf("%s: error %v, want usage error %q", c.args, err, c.want)
		}
	}
}

func TestParsedAccessors(t *testing.T) {
	p, err := parseFlags(testSpecs, []string{"--seed", "1", "--seed", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if p.value("seed", "0") != "2" || p.value("o", "def") != "def" || p.flag("verify-each") || !slices.Equal(p.list("seed"), []string{"1", "2"}) {
		t.Errorf("accessors: seed %q, o %q, verify-each %v, list %q", p.value("seed", "0"), p.value("o", "def"), p.flag("verify-each"), p.list("seed"))
	}
}

func TestFlagHelp(t *testing.T) {
	want := "" +
		"  -o FILE            output\n" +
		"  --seed N           seed\n" +
		"  --input NAME=FILE  an input\n" +
		"                     second line\n" +
		"  --verify-each      verify\n"
	if got := flagHelp(testSpecs); got != want {
		t.Errorf("flagHelp:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzSource feeds arbitrary files to check, fmt and build: each exits 0 or 1 and never
// fails internally, and fmt's output of a valid program is a fixed point.
func FuzzSource(f *testing.F) {
	for _, s := range []string{expSrc, sugarSrc, twoFuncSrc, twoResultSrc, "", "func", "func @f() -> f32[] {\n  %c = constant 1e400 : f32[]\n  return %c\n}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		check := tpucc(t, src, "check", "-")
		for _, r := range []result{check, tpucc(t, src, "fmt", "-"), tpucc(t, src, "build", "-")} {
			if r.code > 1 || strings.Contains(r.stderr, "internal error") {
				t.Fatalf("status %d, stderr:\n%s", r.code, r.stderr)
			}
		}
		if check.code == 0 {
			text := tpucc(t, src, "fmt", "-").stdout
			if again := tpucc(t, text, "fmt", "-"); again.code != 0 || again.stdout != text {
				t.Fatalf("fmt is not a fixed point:\n%s\nthen:\n%s%s", text, again.stdout, again.stderr)
			}
		}
	})
}
