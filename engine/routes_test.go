package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRoutesAreBoundedLeastRecentlyUsedFirst(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{MaxRoutes: 8})
	hot := mlpArgs(1, 1)
	for b := int64(1); b <= 20; b++ {
		call(t, f, mlpProgram, mlpArgs(b, b))
		call(t, f, mlpProgram, hot)
	}
	// Past 8 routes the table keeps the 6 most recent: evictions at the
	// 9th, 12th, 15th and 18th shape, 3 each.
	s := f.Stats()
	if s.Routes != 8 || s.RouteEvictions != 12 || s.Calls != 40 || s.Hits+s.Misses != 40 {
		t.Fatalf("stats: %s", s)
	}
	// The shape called between every new one was never evicted: its
	// calls are hits that neither trace nor resolve.
	traces := s.Traces
	call(t, f, mlpProgram, mlpArgs(1, 2))
	if s := f.Stats(); s.Traces != traces || s.Hits != s.Calls-s.Misses {
		t.Errorf("hot shape: %s (traces were %d)", s, traces)
	}
	// An evicted shape (3 rows, run in bucket 4) is resolved again: one
	// trace to check its padding, no compile, the right result; its route
	// is the 9th, which evicts 3 more.
	compiles := s.Compiles
	call(t, f, mlpProgram, mlpArgs(3, 4))
	if s := f.Stats(); s.Traces != traces+1 || s.Compiles != compiles || s.RouteEvictions != 15 || s.Routes != 6 {
		t.Errorf("evicted shape: %s (traces were %d, compiles %d)", s, traces, compiles)
	}
}

func TestAddingRoutesIsAmortisedConstant(t *testing.T) {
	// The old table copied the whole map on each new route: n(n-1)/2
	// copies. Rebuilds every quarter of growth copy at most 5 per route.
	for _, max := range []int{0, 1000} {
		rt := newRouteTable(max)
		const n = 20000
		for i := range n {
			rt.add(fmt.Sprint(i), &route{})
			if i%3 == 0 { // a lookup served from dirty, as a repeated new shape is
				rt.lookup(fmt.Sprint(i))
			}
		}
		if rt.copied > 5*n {
			t.Errorf("max %d: %d routes copied for %d added", max, rt.copied, n)
		}
		if want := min(n, max); max > 0 && (rt.len() > max || rt.len() < want*3/4) {
			t.Errorf("max %d: %d routes held", max, rt.len())
		}
	}
}

func TestRoutesUnderConcurrentEviction(t *testing.T) {
	// Readers on the lock-free path while the table evicts under them
	// (go test -race checks the accesses).
	f, _, _ := newFunc(t, mlpProgram, Options{MaxRoutes: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 24 {
				args := mlpArgs(int64(1+(g+i)%12), int64(i))
				got, err := f.Call(args)
				if err != nil {
					t.Error(err)
					return
				}
				want, _ := mlpProgram.Eager(args)
				if d := sameTensors(got, want); d != "" {
					t.Error(d)
				}
			}
		}()
	}
	wg.Wait()
	if s := f.Stats(); s.Routes > 4 || s.RouteEvictions == 0 || s.Calls != 8*24 {
		t.Errorf("stats: %s", s)
	}
}

// BenchmarkRouteHit is the lock-free hit of the route table, beside the
// copy-on-write map it replaced (one atomic load and a map lookup).
func BenchmarkRouteHit(b *testing.B) {
	keys := make([][]byte, 64)
	rt := newRouteTable(DefaultMaxRoutes)
	old := map[string]*route{}
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "t\x01\x02%d,4,", i)
		rt.add(string(keys[i]), &route{})
		old[string(keys[i])] = &route{}
	}
	rt.rebuild() // as repeated calls of the newest routes would
	var snapshot atomic.Pointer[map[string]*route]
	snapshot.Store(&old)
	b.Run("table", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if rt.get(keys[i%len(keys)]) == nil {
					b.Fatal("miss")
				}
			}
		})
	})
	b.Run("copy-on-write-map", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if (*snapshot.Load())[string(keys[i%len(keys)])] == nil {
					b.Fatal("miss")
				}
			}
		})
	})
}
