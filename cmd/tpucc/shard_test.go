package main

import (
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
)

// shardSrc splits its inputs over two devices; its elementwise work is
// exact, so any split gives the reference executor's digits.
const shardSrc = `mesh @mesh = <["tp"=2]>

func @f(%x: f32[4,6] {sharding=<@mesh, [{}, {"tp"}]>}, %y: f32[4,6] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[4,6] {sharding=<@mesh, [{"tp"}, {}]>} {
  %a = mul %x, %y : f32[4,6]
  %b = max %a, %x : f32[4,6]
  return %b
}
`

// tpucc run --device pjrt runs a sharded .tir end to end (split inputs from
// --seed, gathered results) and prints what the reference executor prints.
// The numbers alone cannot show that two devices ran it (one device gives
// them too); backend/pjrt's TestShardBackendKeepsResultsOnDevices checks the
// pieces. The plugin's default device count (4) is enough;
// TPUCC_PJRT_OPTIONS=cpu_device_count=N sets it when this test opens the
// process's client first.
func TestRunSharded(t *testing.T) {
	t.Setenv(pjrt.EnvOptions, "cpu_device_count=2")
	in := writeFile(t, t.TempDir(), "s.tir", []byte(shardSrc))
	want := tpucc(t, "", "run", in, "--backend", "reference", "--seed", "7")
	if want.code != 0 || want.stdout == "" {
		t.Fatalf("reference run: exit %d, stderr %q", want.code, want.stderr)
	}
	got := tpucc(t, "", "run", in, "--device", "pjrt", "--seed", "7")
	if got.code != 0 || got.stdout != want.stdout {
		t.Errorf("--device pjrt: exit %d, stdout\n%s\nwant\n%s\nstderr %q", got.code, got.stdout, want.stdout, got.stderr)
	}
}
