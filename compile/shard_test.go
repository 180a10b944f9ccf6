package compile_test

import (
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func matTanh(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).Tanh() }

var dpTP = compile.Mesh(compile.Axis{Name: "dp", Size: 2}, compile.Axis{Name: "tp", Size: 2})

// A Go function with a mesh and sharded arguments runs on the mesh's four
// devices: its StableHLO carries the shardings, its kept result is split
// over the devices, and the numbers are the eager ones.
func TestShardedFunc(t *testing.T) {
	c, err := compile.New(matTanh, dpTP, compile.Shard(0, "dp", ""), compile.Shard(1, "", "tp"),
		compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	text, err := c.Lower(x, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"mhlo.num_partitions = 4 : i32",
		`sdy.mesh @mesh = <["dp"=2, "tp"=2]>`,
		`%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>}`,
		`%arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"tp"}]>}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the StableHLO lacks %q:\n%s", want, text)
		}
	}
	out, err := c.Call(x, w)
	if err != nil {
		t.Fatal(err)
	}
	y := out[0]
	if d, ok := y.Buffer().Device().(*pjrt.ShardedBuffer); !ok || len(d.Shards) != 4 {
		t.Fatalf("the result is held as %T, want a ShardedBuffer of 4 pieces", y.Buffer().Device())
	}
	if d := near(y, matTanh(x, w), 1e-5); d != "" {
		t.Error(d)
	}
}

// Shardings that do not fit are errors of the call, naming the function
// and the call site (the trace's parameters' position).
func TestShardedFuncErrors(t *testing.T) {
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	for _, c := range []struct {
		opts []compile.Option
		want string
	}{
		{[]compile.Option{dpTP, compile.Shard(0, "dp", "zz")},
			`matTanh: shard_test.go:LINE: error: sharding <@mesh, [{"dp"}, {"zz"}]> uses axis "zz", which mesh @mesh does not have`},
		{[]compile.Option{dpTP, compile.Shard(1, "tp")},
			`matTanh: shard_test.go:LINE: error: sharding <@mesh, [{"tp"}]> has 1 dimension, but f32[16,4] has rank 2`},
		{[]compile.Option{dpTP, compile.Shard(2, "tp")},
			"matTanh: sharding of argument 2: not a tensor argument of this call"},
		{[]compile.Option{compile.Shard(0, "dp", "")},
			"compile: argument 0 is sharded, but no mesh is given"},
	} {
		f, err := compile.New(matTanh, append(c.opts, compile.Name("matTanh"), compile.CacheDir(""))...)
		_, _, line, _ := runtime.Caller(0)
		if err == nil {
			_, err = f.Call(x, w) // line+2: where the trace's parameters are
		}
		want := strings.ReplaceAll(c.want, "LINE", strconv.Itoa(line+2))
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// The mesh and the shardings are part of the cache key: a function split
// another way compiles its own program, and split the same way again loads
// the first one from the persistent cache.
func TestShardingInCacheKey(t *testing.T) {
	dir := cacheDir(t)
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	for i, rows := range []string{"dp", "tp", "dp"} {
		c, err := compile.New(matTanh, dpTP, compile.Shard(0, rows, ""), compile.Device("pjrt"),
			compile.Cache(engine.NewCache(dir, engine.CacheOptions{})), compile.Name("keyed"))
		if err != nil {
			t.Fatal(err)
		}
		hlo, err := c.Lower(x, w)
		if err != nil {
			t.Fatal(err)
		}
		if want := `#sdy.sharding<@mesh, [{"` + rows + `"}, {}]>`; !strings.Contains(hlo, want) {
			t.Errorf("run %d: the StableHLO lacks %s", i, want)
		}
		if s, want := c.Stats(), int64(i/2); s.DiskHits != want {
			t.Errorf("run %d (rows over %s): %d programs from the persistent cache, want %d", i, rows, s.DiskHits, want)
		}
	}
}

// A sharded program's executable is kept in the persistent cache with the
// program: a second process (a fresh cache on the same directory) finds the
// program on disk and loads the serialized executable for the mesh's four
// devices instead of compiling it, and its numbers are the eager ones.
func TestShardedExecutablePersisted(t *testing.T) {
	dir := cacheDir(t)
	b, err := pjrt.Open(pjrt.BackendName)
	if err != nil {
		t.Fatal(err)
	}
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	var cache *engine.Cache
	for i := range 2 {
		cache = engine.NewCache(dir, engine.CacheOptions{})
		c, err := compile.New(matTanh, dpTP, compile.Shard(0, "dp", ""), compile.Shard(1, "", "tp"), compile.Device("pjrt"),
			compile.Cache(cache), compile.Name("persisted-sharded"))
		if err != nil {
			t.Fatal(err)
		}
		compiles, loads := b.Counts()
		out, err := c.Call(x, w)
		if err != nil {
			t.Fatal(err)
		}
		if d := near(out[0], matTanh(x, w), 1e-5); d != "" {
			t.Error(d)
		}
		c2, l2 := b.Counts()
		if want := [2]int64{1 - int64(i), int64(i)}; [2]int64{c2 - compiles, l2 - loads} != want {
			t.Errorf("process %d: the backend compiled %d and loaded %d programs, want %v", i, c2-compiles, l2-loads, want)
		}
		if s := c.Stats(); s.DiskHits != int64(i) {
			t.Errorf("process %d: %d programs from the persistent cache, want %d", i, s.DiskHits, i)
		}
	}
	// The same function compiled again in the second process: the cache's
	// memory has the executable, so the backend neither compiles nor loads.
	c, err := compile.New(matTanh, dpTP, compile.Shard(0, "dp", ""), compile.Shard(1, "", "tp"), compile.Device("pjrt"),
		compile.Cache(cache), compile.Name("persisted-sharded"))
	if err != nil {
		t.Fatal(err)
	}
	compiles, loads := b.Counts()
	if _, err := c.Call(x, w); err != nil {
		t.Fatal(err)
	}
	if c2, l2 := b.Counts(); c2 != compiles || l2 != loads || c.Stats().MemoryHits != 1 {
		t.Errorf("compiled again: %d compiles, %d loads, %d memory hits; want 0, 0, 1", c2-compiles, l2-loads, c.Stats().MemoryHits)
	}
}

func matTanhSplit(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).ShardAs("dp", "tp").Tanh() }

// A sharding constraint inside a Go function (Tensor.ShardAs) and a split
// result (ShardResult) reach the StableHLO as Shardy writes them; the result
// stays on the devices split that way, and the numbers are the eager ones
// (eagerly ShardAs is the identity).
func TestShardAsAndResult(t *testing.T) {
	c, err := compile.New(matTanhSplit, dpTP, compile.Shard(0, "dp", ""), compile.ShardResult(0, "dp", "tp"),
		compile.Device("pjrt"), compile.KeepOnDevice(), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	text, err := c.Lower(x, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`sdy.sharding_constraint %0 <@mesh, [{"dp"}, {"tp"}]> : tensor<8x4xf32>`,
		`-> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {"tp"}]>})`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the StableHLO lacks %q:\n%s", want, text)
		}
	}
	out, err := c.Call(x, w)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out[0].Buffer().Device().(*pjrt.ShardedBuffer)
	if !ok || d.Sharding.String() != `<@mesh, [{"dp"}, {"tp"}]>` || !d.Shards[0].Type().Equal(ir.Tensor(ir.F32, 4, 2)) {
		t.Fatalf("the result is held as %T %v, want pieces of f32[4,2] split over dp and tp", out[0].Buffer().Device(), d)
	}
	if d := near(out[0], matTanh(x, w), 1e-5); d != "" {
		t.Error(d)
	}
	if d := near(matTanhSplit(x, w), matTanh(x, w), 0); d != "" {
		t.Errorf("eager ShardAs: %s", d)
	}
}

// ShardAs's mistakes are errors of the call naming the op's position;
// a split result needs a mesh.
func TestShardAsErrors(t *testing.T) {
	x, w := tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16, 4)
	_, _, base, _ := runtime.Caller(0)
	cases := []struct {
		f    func(x, w *tensor.Tensor) *tensor.Tensor
		opts []compile.Option
		want string
	}{
		{func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).ShardAs("dp") }, []compile.Option{dpTP},
			`shard_test.go:L2: shard_as: sharding <@mesh, [{"dp"}]> has 1 dimension, but f32[8,4] has rank 2`},
		{func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).ShardAs("dp", "zz") }, []compile.Option{dpTP},
			`shard_test.go:L4: error: sharding <@mesh, [{"dp"}, {"zz"}]> uses axis "zz", which mesh @mesh does not have`},
		{func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).ShardAs("dp", ",") }, []compile.Option{dpTP},
			`shard_test.go:L6: shard_as: dimension 1: an empty axis name in ","`},
		{matTanhSplit, nil, "shard_test.go:SPLIT: shard_as: the function runs on no mesh: compile it with compile.Mesh"},
		{matTanh, []compile.Option{compile.ShardResult(0, "tp")}, "compile: result 0 is sharded, but no mesh is given"},
	}
	_, split := runtime.FuncForPC(reflect.ValueOf(matTanhSplit).Pointer()).FileLine(reflect.ValueOf(matTanhSplit).Pointer())
	for _, c := range cases {
		f, err := compile.New(c.f, append(c.opts, compile.Name("split"), compile.CacheDir(""))...)
		if err == nil {
			_, err = f.Call(x, w)
		}
		want := strings.NewReplacer("L2", strconv.Itoa(base+6), "L4", strconv.Itoa(base+8), "L6", strconv.Itoa(base+10),
			"SPLIT", strconv.Itoa(split)).Replace(c.want)
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
