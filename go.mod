module github.com/tpucc/tpucc

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/google/go-cmp v0.7.0
	golang.org/x/tools v0.52.0
)
