package main

import (
	"fmt"
	"strconv"
	"strings"
)

// flagKind says how a flag takes its value.
type flagKind uint8

const (
	boolFlag  flagKind = iota // --verify-each, --verify-each=false; never takes the next argument
	valueFlag                 // --seed 3 or --seed=3; given twice, the last one wins
	listFlag                  // --input a=x.npy --input b=y.npy; every occurrence is kept, in order
)

// flagSpec declares one flag of a command. Every flag may be spelled with one dash or two
// (-o, --o, -seed, --seed), as the standard flag package allows.
type flagSpec struct {
	name string // without dashes
	kind flagKind
	arg  string // placeholder shown in help (FILE, N); empty for a bool flag
	doc  string // help text; "\n" starts a continuation line
}

// parsed is a command line after flag parsing: flag values by name, and the positional
// arguments in order. Flags and positional arguments may be interleaved; "--" ends the
// flags, and a lone "-" is a positional argument (standard input).
type parsed struct {
	values     map[string][]string
	positional []string
	help       bool // -h, -help or --help was given
}

// has reports whether flag name was given at all.
func (p *parsed) has(name string) bool { return len(p.values[name]) > 0 }

// value is the last value given for flag name, or def when it was not given.
func (p *parsed) value(name, def string) string {
	if vs := p.values[name]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return def
}

// list is every value given for a list flag, in command-line order.
func (p *parsed) list(name string) []string { return p.values[name] }

// flag is the value of a bool flag (false when absent).
func (p *parsed) flag(name string) bool { return p.value(name, "false") == "true" }

// parseFlags splits args into flags and positional arguments according to specs. An
// unknown flag, a missing value or a malformed bool is a usage error.
func parseFlags(specs []flagSpec, args []string) (*parsed, error) {
	p := &parsed{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			p.positional = append(p.positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			p.positional = append(p.positional, arg)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		if name == "h" || name == "help" {
			p.help = true
			continue
		}
		spec := findFlag(specs, name)
		if spec == nil {
			return nil, usagef("unknown flag %s", flagText(arg))
		}
		switch spec.kind {
		case boolFlag:
			if hasVal {
				b, err := strconv.ParseBool(val)
				if err != nil {
					return nil, usagef("flag --%s takes no value or =true/=false, not %q", name, val)
				}
				val = strconv.FormatBool(b)
			} else {
				val = "true"
			}
		default:
			if !hasVal {
				if i+1 == len(args) {
					return nil, usagef("flag --%s needs a value (%s)", name, spec.arg)
				}
				i++
				val = args[i]
			}
		}
		p.values[name] = append(p.values[name], val)
	}
	return p, nil
}

// flagText is how an unknown flag is quoted back: its name as given, without any value.
func flagText(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	return name
}

func findFlag(specs []flagSpec, name string) *flagSpec {
	for i := range specs {
		if specs[i].name == name {
			return &specs[i]
		}
	}
	return nil
}

// flagHelp renders specs as an aligned two-column list for help text.
func flagHelp(specs []flagSpec) string {
	heads := make([]string, len(specs))
	width := 0
	for i, s := range specs {
		dash := "--"
		if len(s.name) == 1 {
			dash = "-"
		}
		heads[i] = "  " + dash + s.name
		if s.arg != "" {
			heads[i] += " " + s.arg
		}
		width = max(width, len(heads[i]))
	}
	var b strings.Builder
	for i, s := range specs {
		for j, line := range strings.Split(s.doc, "\n") {
			head := ""
			if j == 0 {
				head = heads[i]
			}
			fmt.Fprintf(&b, "%-*s  %s\n", width, head, line)
		}
	}
	return b.String()
}
