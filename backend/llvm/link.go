package llvm

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kernel objects are linked by running the linker clang's driver would
// run, with the same arguments, without the driver: `clang -shared` is one
// more process that loads clang's libraries (tens of megabytes to
// relocate) only to start ld, and it ran after the parts were compiled, on
// the build's critical path. Qwen3-0.6B's decode step: 0.043-0.045 s of CPU
// and 0.065-0.105 s of wall a link through the driver, 0.022-0.025 s and
// 0.033-0.046 s direct (docs/PERFORMANCE.md). The object's bytes are the
// same (TestDirectLinkSameBytes).

// Markers that stand for the output and the inputs in the link line clang
// prints (linkLine); neither names a file, so the driver checks nothing.
const (
	linkOutMark = "tpucc.link.out"
	linkInMark  = "tpucc.link.in"
)

// linker is linkLine's answer, asked in the background once clang is
// found: a process that links waits for it (a driver's run, tens of
// milliseconds) only if it links before the answer came, and one that
// never builds does not wait at all.
type linker struct {
	done chan struct{}
	line []string
}

// startLinker asks clang for its link line in the background.
func startLinker(clang string) *linker {
	l := &linker{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.line = linkLine(clang)
	}()
	return l
}

// get is the link line, nil for none (or no linker asked).
func (l *linker) get() []string {
	if l == nil {
		return nil
	}
	<-l.done
	return l.line
}

// linkLine asks clang (-###) for the link it runs for `clang -shared -o
// OUT INPUTS -lm`; nil when its answer is not one such command (then links
// go through the driver).
func linkLine(clang string) []string {
	args := append(append([]string{"-###"}, linkFlags...), "-o", linkOutMark, "-Wl,"+linkInMark, "-lm")
	cmd := exec.Command(clang, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if runTool(cmd) != nil {
		return nil
	}
	return parseLinkLine(out.String())
}

// parseLinkLine finds in clang's -### output its one command, and returns
// it when it is an absolute program with the output and input markers once
// each.
func parseLinkLine(out string) []string {
	var line []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, ` "`) {
			continue
		}
		if line != nil {
			return nil // more than one job: not a plain link
		}
		if line = splitQuoted(strings.TrimSpace(l)); line == nil {
			return nil
		}
	}
	if len(line) == 0 || !filepath.IsAbs(line[0]) {
		return nil
	}
	outs, ins := 0, 0
	for i, a := range line {
		switch a {
		case linkOutMark:
			outs++
			if i == 0 || line[i-1] != "-o" {
				return nil
			}
		case linkInMark:
			ins++
		}
	}
	if outs != 1 || ins != 1 {
		return nil
	}
	return line
}

// splitQuoted splits the arguments clang prints with -###: each one in
// double quotes, a backslash escaping the character after it; nil when
// the line is not that.
func splitQuoted(s string) []string {
	var args []string
	for s != "" {
		if s[0] != '"' {
			return nil
		}
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		if i == len(s) {
			return nil
		}
		args = append(args, b.String())
		s = strings.TrimLeft(s[i+1:], " ")
	}
	return args
}

// linkCommand is the program and arguments that link objs into the shared
// object out, with defsyms (NAME=SYMBOL) defined: the linker itself when
// clang told which (linkLine), else clang's driver.
func (t *toolchain) linkCommand(out string, objs, defsyms []string) (string, []string) {
	ld := t.ld.get()
	if ld == nil {
		args := append(append([]string{}, linkFlags...), "-o", out)
		args = append(append(args, objs...), "-lm")
		for _, d := range defsyms {
			args = append(args, "-Wl,--defsym="+d)
		}
		return t.clang, args
	}
	var args []string
	for _, a := range ld[1:] {
		switch a {
		case linkOutMark:
			args = append(args, out)
		case linkInMark:
			args = append(args, objs...)
			for _, d := range defsyms {
				args = append(args, "--defsym="+d)
			}
		default:
			args = append(args, a)
		}
	}
	return ld[0], args
}
