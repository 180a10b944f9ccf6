package models

import (
	"math"
	"slices"
	"testing"

	_ "github.com/tpucc/tpucc/backend/pjrt" // the pjrt device: XLA:CPU through PJRT
)

// TestGeneratorOnDevice: on a PJRT device (the pinned XLA:CPU plugin) the
// weights are copied into the device's memory once and the KV cache stays
// there between steps; the tokens are the host backend's and the first
// logits agree with its within 1e-5 of the largest, on two generations in a
// row (a cache left on the device is released, never reused unzeroed).
func TestGeneratorOnDevice(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	host, err := NewGenerator(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest"})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range dev.weights {
		if w.Device() == nil {
			t.Fatalf("weight %s is not in the device's memory", dev.m.Params[i].Name)
		}
	}
	req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 6}
	want, err := host.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := dev.Generate(req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
			t.Errorf("generation %d on the device: tokens %v, on the host %v", i, got.Tokens, want.Tokens)
		}
		g, w := got.FirstLogits.Float32s(), want.FirstLogits.Float32s()
		scale, diff := 0.0, 0.0
		for j := range w {
			scale = math.Max(scale, math.Abs(float64(w[j])))
			diff = math.Max(diff, math.Abs(float64(g[j]-w[j])))
		}
		if diff > 1e-5*scale {
			t.Errorf("generation %d: first logits differ by %g (largest %g)", i, diff, scale)
		}
		if dev.spare.bufs != nil {
			t.Errorf("generation %d kept a cache in the device's memory", i)
		}
	}
	if _, err := NewGenerator(m, Options{Device: "pjrt", Precision: "fast"}); err == nil ||
		err.Error() != `unknown precision "fast" (want one of default, high, highest)` {
		t.Errorf("precision fast: %v", err)
	}
}
