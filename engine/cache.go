package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpucc/tpucc/internal/privdir"
	"github.com/tpucc/tpucc/ir"
)

// Cache holds compiled programs by the hash of their full key: in memory for
// the process, and in a directory for later processes.
//
// An entry file is written whole to a temporary name, flushed to disk and
// renamed into place, so a reader (in any process) sees a complete old
// entry, a complete new one or none. A loaded entry is input like any
// other and is checked as strictly as a fresh compile's result (see
// decodeEntry): a file that fails any check is dropped with one warning and
// reported as a miss, so the caller recompiles: a bad file costs a compile,
// never a crash. Two processes that miss at once both compile and both
// write; the second rename wins and both files were complete.
//
// The directory must be private to the user (internal/privdir): one that
// others can write, that another user owns or that is a symbolic link is
// refused with a warning, and the cache keeps programs in memory only.
// Temporary files that a killed writer left behind are removed once they
// are a minute old.
//
// The directory is kept under MaxBytes (temporary files count) by removing
// the least recently used entries (a hit refreshes the file's modification
// time); those removals and the in-memory ones past MaxMemory are the
// evictions the statistics count.
type Cache struct {
	dir       string
	maxBytes  int64
	maxMemory int
	warn      io.Writer

	opened  sync.Once
	refused bool // the directory failed privdir's checks: memory only

	mu     sync.Mutex
	mem    map[string]*Executable
	order  []string // mem's keys, oldest first
	warned map[string]bool
	ours   map[string]bool // temporary files this Cache is writing

	memHits, diskHits, misses, writes, corrupt, evictions, swept atomic.Int64
}

// CacheOptions configure NewCache.
type CacheOptions struct {
	MaxBytes  int64     // the directory's size cap; 0 is 1 GiB, negative is no cap
	MaxMemory int       // programs kept in memory; 0 is 256
	Warn      io.Writer // where warnings go; nil is stderr
}

// NewCache returns a cache whose entries persist in dir ("" keeps them in
// memory only). The directory is created (0700) and checked on first use.
func NewCache(dir string, o CacheOptions) *Cache {
	if o.MaxBytes == 0 {
		o.MaxBytes = 1 << 30
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = 256
	}
	if o.Warn == nil {
		o.Warn = stderr
	}
	return &Cache{dir: dir, maxBytes: o.MaxBytes, maxMemory: o.MaxMemory, warn: o.Warn,
		mem: map[string]*Executable{}, warned: map[string]bool{}, ours: map[string]bool{}}
}

// Dir is the persistent directory, "" for a memory-only cache (and for one
// whose directory was refused).
func (c *Cache) Dir() string {
	if !c.open() {
		return ""
	}
	return c.dir
}

// open prepares the directory on the Cache's first use: creates it, checks
// that it is private, and sweeps stale temporary files. It reports whether
// the directory is usable.
func (c *Cache) open() bool {
	if c.dir == "" {
		return false
	}
	c.opened.Do(func() {
		if err := privdir.EnsureOwnerOnly(c.dir); err != nil {
			c.refused = true
			fmt.Fprintf(c.warn, "tpucc: warning: not using the persistent cache: %v; compiled programs are kept in memory only\n", err)
			return
		}
		c.scan()
	})
	return !c.refused
}

// DefaultDir is where the default cache persists: $TPUCC_CACHE_DIR if set
// ("off" disables persistence), else $XDG_CACHE_HOME/tpucc, else
// ~/.cache/tpucc; "" when none of them can be found.
func DefaultDir() string {
	if d, ok := os.LookupEnv("TPUCC_CACHE_DIR"); ok {
		if d == "off" {
			return ""
		}
		return d
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "tpucc")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".cache", "tpucc")
	}
	return ""
}

var defaultCache = sync.OnceValue(func() *Cache { return NewCache(DefaultDir(), CacheOptions{}) })

// DefaultCache is the process's shared cache, persisting in DefaultDir().
func DefaultCache() *Cache { return defaultCache() }

// CacheStats counts a cache's traffic.
type CacheStats struct {
	MemoryHits, DiskHits, Misses int64
	Writes                       int64 // entries written to disk
	Corrupt                      int64 // entries dropped as corrupt
	Evictions                    int64 // entries removed to respect the caps
	Swept                        int64 // stale temporary files removed (left by killed writers)
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{MemoryHits: c.memHits.Load(), DiskHits: c.diskHits.Load(), Misses: c.misses.Load(),
		Writes: c.writes.Load(), Corrupt: c.corrupt.Load(), Evictions: c.evictions.Load(),
		Swept: c.swept.Load()}
}

// source says where a lookup found its program.
type source uint8

const (
	fromNowhere source = iota
	fromMemory
	fromDisk
)

// path is the file of the entry with key hash h.
func (c *Cache) path(h string) string { return filepath.Join(c.dir, h+".tpucc") }

// lookup finds the program of k for a call whose traced entry is want. A
// disk entry that fails any check is dropped (with a warning) and reported
// as a miss; note, when not "", says so for the explain log.
func (c *Cache) lookup(k fullKey, target string, want *ir.Func, times *StageTimes) (exe *Executable, src source, note string) {
	c.mu.Lock()
	exe = c.mem[k.hash]
	c.mu.Unlock()
	if exe != nil {
		c.memHits.Add(1)
		return exe, fromMemory, ""
	}
	if !c.open() {
		c.misses.Add(1)
		return nil, fromNowhere, ""
	}
	t0 := time.Now()
	path := c.path(k.hash)
	exe, err := readEntry(path, k, target, want)
	times.Load += time.Since(t0)
	switch {
	case err == nil:
		c.diskHits.Add(1)
		now := time.Now()
		_ = os.Chtimes(path, now, now) // least recently used goes first; failing to mark it is harmless
		// The caller remembers it once a backend has compiled it.
		return exe, fromDisk, ""
	case errors.Is(err, fs.ErrNotExist):
		c.misses.Add(1)
		return nil, fromNowhere, ""
	}
	c.misses.Add(1)
	c.corrupt.Add(1)
	// Another process may have replaced the file since it was read; removing
	// its good entry only costs that process's next reader a compile. A
	// directory at the name goes with what it holds: left there, it made
	// the rewrite's rename fail and every later run drop it again.
	_ = os.RemoveAll(path)
	c.mu.Lock()
	first := !c.warned[path]
	c.warned[path] = true
	c.mu.Unlock()
	if first {
		fmt.Fprintf(c.warn, "tpucc: warning: dropped corrupt cache entry %s (%v); recompiling\n", path, err)
	}
	return nil, fromNowhere, fmt.Sprintf("dropped corrupt cache entry %s (%v)", path, err)
}

// remember keeps exe in memory, evicting the oldest entries past the cap.
func (c *Cache) remember(h string, exe *Executable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mem[h]; ok {
		return
	}
	c.mem[h] = exe
	c.order = append(c.order, h)
	for len(c.order) > c.maxMemory {
		delete(c.mem, c.order[0])
		c.order = c.order[1:]
		c.evictions.Add(1)
	}
}

// store keeps exe under k in memory and, for a persistent cache, on disk.
// It returns how many disk entries were evicted to make room.
func (c *Cache) store(k fullKey, name string, exe *Executable) (evicted int, err error) {
	c.remember(k.hash, exe)
	if !c.open() {
		return 0, nil
	}
	data, err := encodeEntry(k, name, exe)
	if err != nil {
		return 0, err
	}
	if err := c.writeAtomic(c.path(k.hash), data); err != nil {
		return 0, err
	}
	c.writes.Add(1)
	if c.maxBytes > 0 {
		evicted = c.trim(c.path(k.hash))
	}
	return evicted, nil
}

// Executables returns the programs the cache holds in memory, oldest
// first: a benchmark reads their backends' per-step times through it.
func (c *Cache) Executables() []*Executable {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Executable, 0, len(c.order))
	for _, h := range c.order {
		out = append(out, c.mem[h])
	}
	return out
}
