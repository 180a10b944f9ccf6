package hlosuite

import "testing"

func TestZZList(t *testing.T) {
	files, _ := Files([]string{"../../testdata/stablehlo-interpret"})
	for _, f := range files {
		outs, err := RunFile(f, reference)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Status != Passed {
				t.Logf("%v %s: @%s: %s", o.Status, o.Pos, o.Name, o.Reason)
			}
		}
	}
}
