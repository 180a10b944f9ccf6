package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// Cache holds compiled programs by the hash of their full key: in memory for
// the process, and in a directory for later processes.
//
// An entry file is written whole to a temporary name and renamed into place,
// so a reader (in any process) sees a complete old entry, a complete new one
// or none. Each file carries its payload's length and SHA-256; a truncated or
// corrupt file, or one whose program does not decode (or parse) back or has other
// parameters, is dropped with one warning and reported as a miss, so the
// caller recompiles: a bad file costs a compile, never a crash or a wrong
// result. Two processes that miss at once both compile and both write; the
// second rename wins and both files were complete.
//
// The directory is kept under MaxBytes by removing the least recently used
// entries (a hit refreshes the file's modification time); those removals and
// the in-memory ones past MaxMemory are the evictions the statistics count.
type Cache struct {
	dir       string
	maxBytes  int64
	maxMemory int
	warn      io.Writer

	mu     sync.Mutex
	mem    map[string]*Executable
	order  []string // mem's keys, oldest first
	warned map[string]bool

	memHits, diskHits, misses, writes, corrupt, evictions atomic.Int64
}

// CacheOptions configure NewCache.
type CacheOptions struct {
	MaxBytes  int64     // the directory's size cap; 0 is 1 GiB, negative is no cap
	MaxMemory int       // programs kept in memory; 0 is 256
	Warn      io.Writer // where warnings go; nil is stderr
}

// NewCache returns a cache whose entries persist in dir ("" keeps them in
// memory only). The directory is created on the first write.
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
		mem: map[string]*Executable{}, warned: map[string]bool{}}
}

// Dir is the persistent directory, "" for a memory-only cache.
func (c *Cache) Dir() string { return c.dir }

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
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{MemoryHits: c.memHits.Load(), DiskHits: c.diskHits.Load(), Misses: c.misses.Load(),
		Writes: c.writes.Load(), Corrupt: c.corrupt.Load(), Evictions: c.evictions.Load()}
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

// lookup finds the program of k, whose entry function must take params. A
// disk entry that fails any check is dropped (with a warning) and reported
// as a miss; note, when not "", is a line for the explain log.
func (c *Cache) lookup(k fullKey, params []ir.Type, times *StageTimes) (exe *Executable, src source, note string) {
	c.mu.Lock()
	exe = c.mem[k.hash]
	c.mu.Unlock()
	if exe != nil {
		c.memHits.Add(1)
		return exe, fromMemory, ""
	}
	if c.dir == "" {
		c.misses.Add(1)
		return nil, fromNowhere, ""
	}
	t0 := time.Now()
	path := c.path(k.hash)
	exe, err := readEntry(path, k, params)
	times.Load += time.Since(t0)
	switch {
	case err == nil:
		c.diskHits.Add(1)
		now := time.Now()
		_ = os.Chtimes(path, now, now) // least recently used goes first; failing to mark it is harmless
		c.remember(k.hash, exe)
		return exe, fromDisk, "loaded from the persistent cache: " + path
	case errors.Is(err, fs.ErrNotExist):
		c.misses.Add(1)
		return nil, fromNowhere, ""
	}
	c.misses.Add(1)
	c.corrupt.Add(1)
	// Another process may have replaced the file since it was read; removing
	// its good entry only costs that process's next reader a compile.
	_ = os.Remove(path)
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
	if c.dir == "" {
		return 0, nil
	}
	data, err := encodeEntry(k, name, exe)
	if err != nil {
		return 0, err
	}
	if err := writeAtomic(c.dir, c.path(k.hash), data); err != nil {
		return 0, err
	}
	c.writes.Add(1)
	if c.maxBytes > 0 {
		evicted = c.trim(c.path(k.hash))
	}
	return evicted, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so no reader ever sees a partial file.
func writeAtomic(dir, path string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// trim removes the least recently used entries until the directory is under
// the cap, never the entry just written (keep).
func (c *Cache) trim(keep string) int {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return 0
	}
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	total := int64(0)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".tpucc") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{filepath.Join(c.dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.Before(files[j].mod)
		}
		return files[i].path < files[j].path
	})
	n := 0
	for _, f := range files {
		if total <= c.maxBytes {
			break
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
			n++
			c.evictions.Add(1)
		}
	}
	return n
}

// entryMagic starts every entry file; the number is the format's version
// (2: the program is loaded from its binary encoding, IR).
const entryMagic = "tpucc-cache-entry 2"

// entryPayload is what an entry file holds after its header.
//
// The program is there twice: as text (TIR), for people reading the
// directory and as the authority, and as EncodeModule's bytes (IR), which
// load without parsing (parsing the text costs more than compiling a small
// program). IRSum is the SHA-256 of the TIR text the bytes were encoded
// with: when the text was changed since (by hand, to debug), the bytes no
// longer describe it and the text is parsed instead.
type entryPayload struct {
	Key   string `json:"key"`    // the full key text, which must match the lookup's
	Name  string `json:"name"`   // the function, for people reading the directory
	Entry string `json:"entry"`  // the entry function of TIR
	TIR   string `json:"tir"`    // the optimised program, as ir.Print writes it
	IR    []byte `json:"ir"`     // the same program, as EncodeModule writes it
	IRSum string `json:"ir_sum"` // hex SHA-256 of the TIR that IR encodes
	HLO   string `json:"hlo"`    // its StableHLO text
}

// encodeEntry writes the header (magic, SHA-256 and length of the payload)
// and the payload.
func encodeEntry(k fullKey, name string, exe *Executable) ([]byte, error) {
	text := ir.Print(exe.Module)
	sum := sha256.Sum256([]byte(text))
	payload, err := json.Marshal(entryPayload{Key: k.text, Name: name, Entry: exe.Entry.Name, TIR: text,
		IR: EncodeModule(exe.Module), IRSum: hex.EncodeToString(sum[:]), HLO: exe.HLO})
	if err != nil {
		return nil, err
	}
	sum = sha256.Sum256(payload)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsha256 %s\nbytes %d\n\n", entryMagic, hex.EncodeToString(sum[:]), len(payload))
	b.Write(payload)
	return b.Bytes(), nil
}

// readEntry loads and checks the entry file at path. A missing file is
// fs.ErrNotExist; every other failure says what is wrong with the file.
func readEntry(path string, k fullKey, params []ir.Type) (*Executable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("unreadable: %v", err)
	}
	payload, err := checkEntry(data)
	if err != nil {
		return nil, err
	}
	var p entryPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("bad payload: %v", err)
	}
	if p.Key != k.text {
		return nil, fmt.Errorf("it holds another key")
	}
	m, err := entryModule(path, &p)
	if err != nil {
		return nil, err
	}
	f := m.Func(p.Entry)
	if f == nil {
		return nil, fmt.Errorf("its program has no function @%s", p.Entry)
	}
	if len(f.Params) != len(params) {
		return nil, fmt.Errorf("its program takes %d arguments, want %d", len(f.Params), len(params))
	}
	for i, v := range f.Params {
		if v.Type.DType != params[i].DType || !v.Type.SameShape(params[i]) { // layouts may differ
			return nil, fmt.Errorf("its program's argument %d is %s, want %s", i, v.Type, params[i])
		}
	}
	return &Executable{Module: m, Entry: f, HLO: p.HLO}, nil
}

// entryModule rebuilds an entry's program: from its binary encoding when
// that was made from its text, else by parsing the text.
func entryModule(path string, p *entryPayload) (*ir.Module, error) {
	sum := sha256.Sum256([]byte(p.TIR))
	if len(p.IR) > 0 && hex.EncodeToString(sum[:]) == p.IRSum {
		m, err := DecodeModule(p.IR)
		if err != nil {
			return nil, fmt.Errorf("its program does not decode: %v", firstLine(err.Error()))
		}
		return m, nil
	}
	m, err := tir.Parse(path, []byte(p.TIR))
	if err != nil {
		return nil, fmt.Errorf("its program does not parse: %v", firstLine(err.Error()))
	}
	return m, nil
}

// checkEntry verifies the header, length and checksum and returns the payload.
func checkEntry(data []byte) ([]byte, error) {
	header, payload, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("no header")
	}
	lines := strings.Split(string(header), "\n")
	if len(lines) != 3 || lines[0] != entryMagic {
		return nil, fmt.Errorf("bad header")
	}
	sumHex, ok1 := strings.CutPrefix(lines[1], "sha256 ")
	nText, ok2 := strings.CutPrefix(lines[2], "bytes ")
	n, err := strconv.Atoi(nText)
	if !ok1 || !ok2 || err != nil || n < 0 {
		return nil, fmt.Errorf("bad header")
	}
	if len(payload) != n {
		if len(payload) < n {
			return nil, fmt.Errorf("truncated: %d of %d bytes", len(payload), n)
		}
		return nil, fmt.Errorf("%d bytes, want %d", len(payload), n)
	}
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(sum[:]) != sumHex {
		return nil, fmt.Errorf("checksum mismatch")
	}
	return payload, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
