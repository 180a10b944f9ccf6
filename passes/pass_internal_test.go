package passes

import "testing"

// TestOrderNamesKnownPasses: every constraint of the real table names
// passes that exist, so each one can apply.
func TestOrderNamesKnownPasses(t *testing.T) {
	if err := checkOrderIn(passOrder, Default()); err != nil {
		t.Fatal(err)
	}
}

// TestOrderRejectsUnknownPass: a misspelt name fails every run instead of
// leaving its constraint silently unchecked.
func TestOrderRejectsUnknownPass(t *testing.T) {
	order := append(append([]orderRule(nil), passOrder...),
		orderRule{"fusee", "assign-layout", "a misspelling of fuse"})
	err := checkOrderIn(order, Default())
	want := `passes: the ordering constraint fusee before assign-layout names an unknown pass "fusee"`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	// The check does not depend on the pipeline: an empty one fails alike.
	if err := checkOrderIn(order, nil); err == nil || err.Error() != want {
		t.Fatalf("empty pipeline: got %v, want %s", err, want)
	}
}
