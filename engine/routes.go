package engine

import (
	"slices"
	"sync/atomic"
)

// DefaultMaxRoutes is how many exact call shapes a Function remembers
// (Options.MaxRoutes). A route costs a few hundred bytes; a shape whose
// route was evicted is resolved again on its next call (a trace and a
// padding check when it runs in a bucket, no compile).
const DefaultMaxRoutes = 4096

// routeTable maps a call's key (appendKey) to its route, bounded by a
// least-recently-used policy.
//
// Hits read an immutable snapshot (read) without a lock, as the old
// copy-on-write map did, but new routes go to a small map (dirty) under
// Function.mu instead of copying the snapshot each time. The snapshot is
// rebuilt as read ∪ dirty when dirty has grown by a quarter of the table,
// or when the slow path has served a quarter of the table's size in
// lookups from dirty: each rebuild copies n routes and is paid for by n/4
// insertions or lookups, so adding a route is O(1) amortised (the scheme of
// sync.Map, with typed string keys so that a lookup of a []byte key does
// not allocate).
//
// Recency is a clock that ticks once per route added; a hit stores the
// clock in its route only when it moved, so a hot route's cache line is
// read, not written, in the steady state. Past max routes the table keeps
// the three quarters most recently used and evicts the rest, once per
// quarter of max insertions.
type routeTable struct {
	read  atomic.Pointer[map[string]*route]
	clock atomic.Int64

	// Under Function.mu:
	dirty  map[string]*route // added since read was built; disjoint from it
	misses int               // lookups served from dirty since read was built
	max    int
	copied int // routes copied by rebuilds and evictions: the amortised cost

	evictions atomic.Int64
}

func newRouteTable(max int) *routeTable {
	t := &routeTable{dirty: map[string]*route{}, max: max}
	t.read.Store(&map[string]*route{})
	return t
}

// get is the lock-free lookup of the fast path.
func (t *routeTable) get(key []byte) *route {
	r := (*t.read.Load())[string(key)]
	if r != nil {
		t.touch(r)
	}
	return r
}

func (t *routeTable) touch(r *route) {
	if now := t.clock.Load(); r.used.Load() != now {
		r.used.Store(now)
	}
}

// lookup finds key in the snapshot or in dirty. Function.mu is held.
func (t *routeTable) lookup(key string) *route {
	if r := (*t.read.Load())[key]; r != nil {
		t.touch(r)
		return r
	}
	r := t.dirty[key]
	if r == nil {
		return nil
	}
	t.touch(r)
	t.misses++
	if t.misses >= t.quarter() {
		t.rebuild()
	}
	return r
}

// add records a new route for key. Function.mu is held.
func (t *routeTable) add(key string, r *route) {
	r.used.Store(t.clock.Add(1))
	t.dirty[key] = r
	switch {
	case t.max > 0 && t.len() > t.max:
		t.evict()
	case len(t.dirty) >= t.quarter():
		t.rebuild()
	}
}

func (t *routeTable) len() int { return len(*t.read.Load()) + len(t.dirty) }

// quarter is the growth or the slow lookups that pay for a rebuild.
func (t *routeTable) quarter() int { return t.len()/4 + 1 }

// rebuild publishes read ∪ dirty as the new snapshot.
func (t *routeTable) rebuild() {
	old := *t.read.Load()
	m := make(map[string]*route, len(old)+len(t.dirty))
	for k, r := range old {
		m[k] = r
	}
	for k, r := range t.dirty {
		m[k] = r
	}
	t.copied += len(m)
	t.publish(m)
}

func (t *routeTable) publish(m map[string]*route) {
	t.read.Store(&m)
	clear(t.dirty)
	t.misses = 0
}

// evict keeps the most recently used three quarters of max routes.
func (t *routeTable) evict() {
	type entry struct {
		key  string
		r    *route
		used int64
	}
	all := make([]entry, 0, t.len())
	for _, m := range []map[string]*route{*t.read.Load(), t.dirty} {
		for k, r := range m {
			all = append(all, entry{k, r, r.used.Load()})
		}
	}
	slices.SortFunc(all, func(a, b entry) int {
		switch {
		case a.used > b.used:
			return -1
		case a.used < b.used:
			return 1
		}
		return 0
	})
	keep := max(t.max-t.max/4, 1)
	m := make(map[string]*route, keep)
	for _, e := range all[:keep] {
		m[e.key] = e.r
	}
	t.copied += len(all)
	t.evictions.Add(int64(len(all) - keep))
	t.publish(m)
}
