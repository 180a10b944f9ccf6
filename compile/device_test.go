package compile_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func expAdd(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Add(x) }

// TestKeepOnDevice: results stay in the PJRT device's memory, are taken by
// the next call without a copy, and read back on demand.
func TestKeepOnDevice(t *testing.T) {
	c, err := compile.New(expAdd, compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.25, ir.F32, 4)
	y := x
	for range 3 {
		out, err := c.Call(y)
		if err != nil {
			t.Fatal(err)
		}
		y = out[0]
		if y.Buffer().Device() == nil {
			t.Fatal("the result is not on the device")
		}
	}
	if d := near(y, expAdd(expAdd(expAdd(x))), 1e-5); d != "" {
		t.Error(d)
	}
}

// TestDonate: a donated argument cannot be used again, as an argument or
// read, on the PJRT device and on the host.
func TestDonate(t *testing.T) {
	for _, opts := range [][]compile.Option{
		{compile.Device("pjrt"), compile.KeepOnDevice()},
		{compile.Device("cpu")},
	} {
		c, err := compile.New(expAdd, append(opts, compile.Donate(0), compile.Name("step"), compile.CacheDir(""))...)
		if err != nil {
			t.Fatal(err)
		}
		x := tensor.Full(0.25, ir.F32, 4)
		out, err := c.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := near(out[0], expAdd(tensor.Full(0.25, ir.F32, 4)), 1e-6); d != "" {
			t.Error(d)
		}
		_, err = c.Call(x)
		want := "step: argument 0 (f32[4]) was donated to a call of step (argument 0): it has no value anymore"
		if err == nil || err.Error() != want {
			t.Errorf("reusing a donated tensor: got %v, want %s", err, want)
		}
		func() {
			defer func() {
				if p := fmt.Sprint(recover()); p != "f32[4] was donated to a call of step (argument 0)" {
					t.Errorf("reading a donated tensor panicked with %q", p)
				}
			}()
			x.Float32s()
		}()
	}
}

// TestKeepOnDeviceConcurrent: 16 goroutines chain calls on the device.
func TestKeepOnDeviceConcurrent(t *testing.T) {
	c, err := compile.New(expAdd, compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			x := tensor.Full(float64(g)/16, ir.F32, 8)
			out, err := c.Call(x)
			if err == nil {
				out, err = c.Call(out[0])
			}
			if err != nil {
				t.Error(err)
				return
			}
			if d := near(out[0], expAdd(expAdd(x)), 1e-5); d != "" {
				t.Errorf("goroutine %d: %s", g, d)
			}
		})
	}
	wg.Wait()
}

// TestPJRTPersistentCache: a second process (a fresh cache on the same
// directory) loads the serialized PJRT executable instead of compiling.
func TestPJRTPersistentCache(t *testing.T) {
	dir := cacheDir(t)
	b, err := pjrt.Open(pjrt.BackendName)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.75, ir.F32, 5)
	for i := range 2 {
		cache := engine.NewCache(dir, engine.CacheOptions{})
		c, err := compile.New(expAdd, compile.Device("pjrt"), compile.Cache(cache), compile.Name("persisted"))
		if err != nil {
			t.Fatal(err)
		}
		compiles, loads := b.Counts()
		out, err := c.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := near(out[0], expAdd(x), 1e-6); d != "" {
			t.Error(d)
		}
		c2, l2 := b.Counts()
		if want := [2]int64{1 - int64(i), int64(i)}; [2]int64{c2 - compiles, l2 - loads} != want {
			t.Errorf("call %d: the backend compiled %d and loaded %d programs, want %v", i, c2-compiles, l2-loads, want)
		}
	}
}

func inc(x *tensor.Tensor) *tensor.Tensor { return x.Add(tensor.Full(1, ir.F32, 4)) }

func sum(x *tensor.Tensor) *tensor.Tensor { return x.Sum(0) }

// TestDonateMarksDonors: a donated argument is marked in the StableHLO
// (aliased to a result of its type, else a buffer donor), the chained
// calls on the PJRT device agree with the host, and a function that donates
// nothing leaves its device argument intact. That XLA then writes the
// result into the donated memory is checked in backend/pjrt
// (TestDonationReusesMemory).
func TestDonateMarksDonors(t *testing.T) {
	x := tensor.Full(0.5, ir.F32, 4)
	for _, c := range []struct {
		f    func(*tensor.Tensor) *tensor.Tensor
		attr string
	}{{inc, "%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}"}, {sum, "%arg0: tensor<4xf32> {jax.buffer_donor = true}"}} {
		donating, err := compile.New(c.f, compile.Device("pjrt"), compile.KeepOnDevice(), compile.Donate(0), compile.CacheDir(""))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := compile.New(c.f, compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
		if err != nil {
			t.Fatal(err)
		}
		hlo, err := donating.Lower(x)
		if err != nil || !strings.Contains(hlo, c.attr) {
			t.Errorf("donating lowering lacks %q (%v):\n%s", c.attr, err, hlo)
		}
		if hlo, _ := plain.Lower(x); strings.Contains(hlo, "donor") || strings.Contains(hlo, "aliasing") {
			t.Errorf("lowering without donation marks donors:\n%s", hlo)
		}
		// Device inputs: plain leaves its argument intact, donating consumes it.
		kept, err := onDevice(t, x)
		if err != nil {
			t.Fatal(err)
		}
		out, err := plain.Call(kept)
		if err != nil {
			t.Fatal(err)
		}
		if d := near(out[0], c.f(inc(x)), 1e-6); d != "" {
			t.Error(d)
		}
		if kept.Buffer().Donated() != "" || near(kept, inc(x), 0) != "" {
			t.Error("an argument of a function that donates nothing was consumed or changed")
		}
		if out, err = donating.Call(kept); err != nil {
			t.Fatal(err)
		}
		if kept.Buffer().Donated() == "" {
			t.Error("the donated device tensor is not marked donated")
		}
		if d := near(out[0], c.f(inc(x)), 1e-6); d != "" {
			t.Error(d)
		}
	}
}

// onDevice returns inc(x) kept in the PJRT device's memory.
func onDevice(t *testing.T, x *tensor.Tensor) (*tensor.Tensor, error) {
	c, err := compile.New(inc, compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
	if err != nil {
		return nil, err
	}
	out, err := c.Call(x)
	if err != nil {
		return nil, err
	}
	y := out[0]
	if y.Buffer().Device() == nil {
		t.Fatal("the result is not on the device")
	}
	return y, nil
}

// TestDonateInCacheKey: the donor set is part of the cache key, so a
// function that donates never takes the persistent entry of one that does
// not (whose StableHLO marks no donors), nor the other way round.
func TestDonateInCacheKey(t *testing.T) {
	dir := cacheDir(t)
	x := tensor.Full(0.75, ir.F32, 4)
	for i, donate := range []bool{false, true, false} {
		opts := []compile.Option{compile.Device("pjrt"), compile.Cache(engine.NewCache(dir, engine.CacheOptions{})), compile.Name("keyed")}
		if donate {
			opts = append(opts, compile.Donate(0))
		}
		c, err := compile.New(inc, opts...)
		if err != nil {
			t.Fatal(err)
		}
		hlo, err := c.Lower(x)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(hlo, "tf.aliasing_output") != donate {
			t.Errorf("run %d (donate %v) got the StableHLO\n%s", i, donate, hlo)
		}
		if s, want := c.Stats(), int64(i/2); s.DiskHits != want {
			t.Errorf("run %d (donate %v): %d programs from the persistent cache, want %d", i, donate, s.DiskHits, want)
		}
	}
}
