// Package parse benchmarks frontend/tir.Parse, the step that dominates
// loading a program from the persistent compile cache (engine/ stores each
// program as .tir text):
//
//	go test -run '^$' -bench . -benchmem ./bench/parse
//
// It parses examples/transformer_block.tir and a generated file of about
// 200 KB (that block repeated under distinct function names) and reports
// MB/s of source, so figures for different files compare.
package parse
