#!/usr/bin/env bash
# Builds, on a machine with Go, what tools/pjrtgpu/run.sh runs on a GPU
# machine that has no Go and no network: static binaries (no cgo; purego
# loads the plugin), compressed so that they travel with the working tree.
#
#   tools/pjrtgpu/build.sh [DIR]      (from the repository root; DIR: build/pjrtgpu/bin)
set -euo pipefail
DIR=${1:-build/pjrtgpu/bin}
mkdir -p "$DIR"
export CGO_ENABLED=0
flags=(-trimpath -ldflags='-s -w')
go test -c "${flags[@]}" -o "$DIR/oracle.test" ./internal/oracle
go test -c "${flags[@]}" -o "$DIR/pjrt.test" ./backend/pjrt
go build "${flags[@]}" -o "$DIR/mlp" ./examples/go/mlp
go build "${flags[@]}" -o "$DIR/benchpjrt" ./bench/pjrt
go build "${flags[@]}" -o "$DIR/tpucc" ./cmd/tpucc
gzip -f -9 "$DIR"/oracle.test "$DIR"/pjrt.test "$DIR"/mlp "$DIR"/benchpjrt "$DIR"/tpucc
ls -l "$DIR"
