package golden

import (
	"strings"
	"testing"
)

func TestSelf(t *testing.T) {
	Run(t, "testdata", func(t *testing.T, c *Case) map[string]string {
		in, ok := c.Input("in.txt")
		if !ok {
			t.Fatal("no in.txt")
		}
		if c.Directive("mode") != "upper" {
			t.Fatalf("directive mode = %q", c.Directive("mode"))
		}
		return map[string]string{"out.txt": strings.ToUpper(in)}
	})
}
