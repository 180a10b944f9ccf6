// Package layering holds the test of the project's import rule (see
// docs/DESIGN.md, "Packages"): which packages may import which. It has no
// code of its own.
package layering
