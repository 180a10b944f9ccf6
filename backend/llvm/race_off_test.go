//go:build !race

package llvm

const raceEnabled = false
