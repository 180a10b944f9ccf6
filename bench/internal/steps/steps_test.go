package steps

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend/llvm"
)

// TestKinds: products group by shape and layout, other steps by what they
// compute; each kind's rate is GFLOP/s (products) or GB/s, over the times
// taken since the earlier profile.
func TestKinds(t *testing.T) {
	ms := time.Millisecond
	old := Profile{{Entry: "step", Steps: []llvm.StepTime{
		{Step: 0, What: "dot_general", Calls: 1, Total: 5 * ms, MACs: 1 << 20, Shape: "1x64x128x128 lhs km rhs kn", Bytes: 4 << 10},
		{Step: 1, What: "loop add", Calls: 1, Total: 7 * ms, Bytes: 1 << 20},
		{Step: 2, What: "dot_general+add", Calls: 1, Total: 1 * ms, MACs: 1 << 20, Shape: "1x64x128x128 lhs km rhs kn", Bytes: 4 << 10},
		{Step: 3, What: "loop add", Calls: 1, Total: 1 * ms, Bytes: 1 << 20},
	}}}
	now := Profile{{Entry: "step", Steps: []llvm.StepTime{
		{Step: 0, What: "dot_general", Calls: 3, Total: 9 * ms, MACs: 1 << 20, Shape: "1x64x128x128 lhs km rhs kn", Bytes: 4 << 10},
		{Step: 1, What: "loop add", Calls: 2, Total: 8 * ms, Bytes: 1 << 20},
		{Step: 2, What: "dot_general+add", Calls: 3, Total: 3 * ms, MACs: 1 << 20, Shape: "1x64x128x128 lhs km rhs kn", Bytes: 4 << 10},
		{Step: 3, What: "loop add", Calls: 2, Total: 2 * ms, Bytes: 1 << 20},
	}}}
	// Since matches programs by executable: another's times are not taken
	// off, the same one's are.
	old[0].x = &llvm.Executable{}
	if got := now.Since(old)[0].Steps[0].Calls; got != 3 {
		t.Errorf("Since with another executable's profile: %d calls, want 3", got)
	}
	now[0].x = old[0].x
	ks := now.Since(old).Kinds()["step"]
	want := []Kind{
		{Name: "product 1x64x128x128 lhs km rhs kn", Steps: 2, Calls: 4, Total: 6 * ms, Bytes: 4 * 4 << 10, MACs: 4 << 20},
		{Name: "loop add", Steps: 2, Calls: 2, Total: 2 * ms, Bytes: 2 << 20},
	}
	if len(ks) != len(want) || ks[0] != want[0] || ks[1] != want[1] {
		t.Fatalf("kinds %+v, want %+v", ks, want)
	}
	var out bytes.Buffer
	now.Since(old).PrintKinds(&out, "x: ", 10)
	for _, line := range []string{
		"x: step by kind: 0.008 s, products 0.006 s (75.0%), the rest 0.002 s:",
		"      6.0 ms  75.0%    2 steps      4 calls     1.4 GFLOP/s  product 1x64x128x128 lhs km rhs kn",
		"      2.0 ms  25.0%    2 steps      2 calls     1.0 GB/s  loop add",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("PrintKinds printed\n%s\nwithout the line\n%s", out.String(), line)
		}
	}
}
