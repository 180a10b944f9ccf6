package engine

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// replicasTIR runs as four replicas.
const replicasTIR = `replicas = 4

func @f(%x: f32[2,3]) -> (f32[2,3], f32[8,3]) {
  %s = all_reduce %x {groups=[[0,1,2,3]], kind=sum} : f32[2,3]
  %g = all_gather %x {dim=0, groups=[[0,1,2,3]]} : f32[8,3]
  return %s, %g
}
`

// TestReplicasInCacheKey: the replica count is part of the printed program
// a key hashes, so programs of different counts never share an entry.
func TestReplicasInCacheKey(t *testing.T) {
	o, err := Options{Backend: "reference"}.check()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, r := range []int64{0, 2, 4} {
		m, err := tir.Parse("k.tir", []byte(strings.Replace(replicasTIR, "replicas = 4", "", 1)))
		if err != nil {
			t.Fatal(err)
		}
		m.Replicas = r
		k := makeKey(&o, signature{}, ir.Print(m))
		if prev, dup := seen[k.hash]; dup {
			t.Errorf("%d and %d replicas have one key", prev, r)
		}
		seen[k.hash] = r
	}
}
