package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit statuses.
const (
	exitOK      = 0
	exitProgram = 1 // an error in the program or its inputs, or an internal error
	exitUsage   = 2 // a mistake in the command line
)

// env is what a command may touch besides the file system.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand. Commands that read a program take exactly one positional
// argument, the model file; the others take none.
type command struct {
	name    string
	file    bool   // takes the model file as its one positional argument
	files   bool   // takes one or more files or directories
	summary string // one line, for `tpucc help`
	about   string // paragraphs for `tpucc help NAME`, after the usage line
	flags   []flagSpec
	run     func(e *env, p *parsed) error
}

// commands is every subcommand, in the order help lists them.
var commands = []*command{buildCommand, runCommand, gradCommand, checkCommand, fmtCommand, passesCommand, generateCommand, trainCommand, exportCommand, testStableHLOCommand, versionCommand}

func findCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run is tpucc with its arguments (without the program name) and standard streams; it
// returns the exit status. A panic anywhere below is turned into a one-line internal error:
// the user never sees a Go stack trace.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tpucc: internal error: %v\n", r)
			status = exitProgram
		}
	}()
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: tpucc COMMAND [flags] [MODEL.tir]; 'tpucc help' lists the commands\n")
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	c := findCommand(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "tpucc: unknown command %q\nusage: tpucc COMMAND [flags] [MODEL.tir]; 'tpucc help' lists the commands\n", args[0])
		return exitUsage
	}
	p, err := parseFlags(c.flags, args[1:])
	if err == nil && p.help {
		io.WriteString(stdout, commandHelp(c))
		return exitOK
	}
	if err == nil {
		err = checkPositional(c, p)
	}
	if err == nil {
		err = c.run(&env{stdin: stdin, stdout: stdout, stderr: stderr}, p)
	}
	return report(c, err, stderr)
}

func checkPositional(c *command, p *parsed) error {
	switch {
	case c.file && len(p.positional) == 0:
		return usagef("missing the model file argument")
	case c.file && len(p.positional) > 1:
		return usagef("one model file expected, got %d arguments: %s", len(p.positional), strings.Join(p.positional, " "))
	case c.files && len(p.positional) == 0:
		return usagef("missing the files or directories to run")
	case c.files:
	case !c.file && len(p.positional) > 0:
		return usagef("takes no arguments, got %s", strings.Join(p.positional, " "))
	}
	return nil
}

// report prints err as the command's failure and returns the exit status: a usage error
// gets the usage line as a hint, anything else is printed as the diagnostics it carries.
func report(c *command, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "tpucc %s: %s\nusage: %s; 'tpucc help %s' lists the flags\n", c.name, ue.msg, usageLine(c), c.name)
		return exitUsage
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	io.WriteString(stderr, msg)
	return exitProgram
}

func usageLine(c *command) string {
	s := "tpucc " + c.name
	if len(c.flags) > 0 {
		s += " [flags]"
	}
	if c.file {
		s += " MODEL.tir"
	}
	if c.files {
		s += " DIR|FILE..."
	}
	return s
}

const overview = `tpucc compiles .tir tensor programs to StableHLO text for XLA, and runs them: on this
CPU as native code (the llvm backend, the default), on a device through PJRT, or on the
reference executor.

usage: tpucc COMMAND [flags] [MODEL.tir]

commands:
%s
MODEL.tir may be - to read standard input. Flags may come before or after the file, as
--flag=value or --flag value (one dash works too); -- ends the flags.

Exit status: 0 on success; 1 for an error in the program or its inputs, reported as
FILE:LINE:COL: error: MESSAGE on standard error, with no output file written; 2 for a usage
error.
`

// help prints the overview, or one command's help, to stdout.
func help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		var b bytes.Buffer
		lines := [][2]string{}
		for _, c := range commands {
			lines = append(lines, [2]string{c.name, c.summary})
		}
		lines = append(lines, [2]string{"help", "show this, or a command's flags (tpucc help build)"})
		width := 0
		for _, l := range lines {
			width = max(width, len(l[0]))
		}
		for _, l := range lines { // one column of summaries, however long a name
			fmt.Fprintf(&b, "  %-*s  %s\n", width, l[0], l[1])
		}
		fmt.Fprintf(stdout, overview, b.String())
		return exitOK
	case 1:
		if c := findCommand(args[0]); c != nil {
			io.WriteString(stdout, commandHelp(c))
			return exitOK
		}
		fmt.Fprintf(stderr, "tpucc help: unknown command %q\nusage: tpucc help [COMMAND]; 'tpucc help' lists the commands\n", args[0])
	default:
		fmt.Fprintf(stderr, "tpucc help: one command name expected, got %d\nusage: tpucc help [COMMAND]; 'tpucc help' lists the commands\n", len(args))
	}
	return exitUsage
}

func commandHelp(c *command) string {
	s := "usage: " + usageLine(c) + "\n\n" + c.about
	if len(c.flags) > 0 {
		s += "\nflags:\n" + flagHelp(c.flags)
	}
	return s
}
