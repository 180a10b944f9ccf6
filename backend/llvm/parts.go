package llvm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// partRuns counts clang's compiles of parts in this process (PartRuns).
var partRuns atomic.Int64

// PartRuns is how many part modules this process has compiled with clang
// (split.go): a test asserts that a kernel found in the cache cost none.
func PartRuns() int64 { return partRuns.Load() }

// program returns the verified object of the program whose IR is text and
// whose step kernels are named in steps: the cache's, else linked from its
// kernels' parts (split.go), found in the cache or built by one clang per
// part at once. A module that cannot be split is built whole (build).
func (c *objectCache) program(t *toolchain, key, text string, g *gen, steps map[string]bool, times *BuildTimes) ([]byte, error) {
	so := filepath.Join(c.dir, key+".so")
	sum := filepath.Join(c.dir, key+".sha256")
	if data, ok := c.cached(so, sum, times); ok {
		return data, nil
	}
	ctx, us, ok := g.units(t, steps)
	if !ok {
		return c.object(t, key, text, times)
	}
	return c.once(key, "kernels.ll", times, func(tmp string, cpu *toolCPU) ([]byte, error) {
		// The whole module is written first, as a build of it whole would:
		// it goes beside the object, and shows what is being built meanwhile.
		if err := os.WriteFile(filepath.Join(tmp, "kernels.ll"), []byte(text), 0o600); err != nil {
			return nil, fmt.Errorf("llvm: %v", err)
		}
		data, err := c.linkParts(t, ctx, us, tmp, times, cpu, true)
		if err != nil {
			return nil, err
		}
		clangRuns.Add(1)
		return data, nil
	})
}

// linkParts builds the parts of the kernels the cache lacks (all of them
// unless useCache), links them with the cached ones into tmp/kernels.so,
// whose bytes it returns. A link that fails with cached parts (an index
// that names a part without its kernel) is tried again from scratch.
func (c *objectCache) linkParts(t *toolchain, ctx string, us []unit, tmp string, times *BuildTimes, cpu *toolCPU, useCache bool) ([]byte, error) {
	objs, missing := []string(nil), us
	if useCache {
		objs, missing = c.cachedParts(us, tmp)
	}
	times.Kernels, times.KernelsCached = len(us), len(us)-len(missing)
	built, kept, err := c.buildParts(t, ctx, missing, tmp, cpu)
	if err != nil {
		return nil, err
	}
	times.Parts += len(built)
	data, err := link(t, tmp, append(objs, built...), us, cpu)
	if kerr := kept(); err == nil && kerr != nil {
		return nil, kerr
	}
	if err != nil && len(objs) > 0 {
		return c.linkParts(t, ctx, us, tmp, times, cpu, false)
	}
	return data, err
}

// cachedParts copies into tmp the verified objects of the cached parts
// that hold kernels of us and returns their paths, with the kernels no
// cached part holds.
func (c *objectCache) cachedParts(us []unit, tmp string) (objs []string, missing []unit) {
	taken := map[string]bool{}
	for _, u := range us {
		rec, err := readRegular(filepath.Join(c.dir, u.key+".kernel"), maxRecord)
		part := strings.TrimSpace(string(rec))
		if err != nil || !isKey(part) {
			missing = append(missing, u)
			continue
		}
		if taken[part] {
			continue
		}
		data, err := verifyObject(filepath.Join(c.dir, part+".o"), filepath.Join(c.dir, part+".o.sha256"))
		if err != nil {
			missing = append(missing, u)
			continue
		}
		obj := filepath.Join(tmp, "cached-"+part+".o")
		if err := os.WriteFile(obj, data, 0o600); err != nil {
			missing = append(missing, u)
			continue
		}
		taken[part] = true
		objs = append(objs, obj)
	}
	return objs, missing
}

// isKey reports whether s is a key as the cache writes them (64 hex
// digits), so a record never names a path elsewhere.
func isKey(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// buildParts compiles us in balanced parts, one clang per part at once,
// and returns the objects' paths in tmp as soon as every clang is done.
// Each part's object goes into the cache with its kernels recorded as
// found there (keepPart) meanwhile: a part's dozen small files cost the
// build's wall time when the link waited for them. kept waits for that and
// says whether it failed; the caller calls it before tmp goes (the files
// are staged there), whatever else failed.
func (c *objectCache) buildParts(t *toolchain, ctx string, us []unit, tmp string, cpu *toolCPU) (objs []string, kept func() error, err error) {
	if len(us) == 0 {
		return nil, func() error { return nil }, nil
	}
	groups := balance(us, runtime.GOMAXPROCS(0))
	objs = make([]string, len(groups))
	errs := make([]error, len(groups))
	keepErrs := make([]error, len(groups))
	var compiled, keeping sync.WaitGroup
	for i := range groups {
		compiled.Add(1)
		go func() {
			defer compiled.Done()
			text := partText(ctx, groups[i])
			var data []byte
			if objs[i], data, errs[i] = c.buildPart(t, text, tmp, i, cpu); errs[i] != nil {
				return
			}
			keeping.Add(1)
			go func() {
				defer keeping.Done()
				keepErrs[i] = c.keepPart(t.partKey(text), data, groups[i], tmp)
			}()
		}()
	}
	compiled.Wait()
	kept = func() error {
		keeping.Wait()
		return errors.Join(keepErrs...)
	}
	if err := errors.Join(errs...); err != nil {
		kept()
		return nil, nil, err
	}
	return objs, kept, nil
}

// buildPart compiles one part's module text to tmp/partI.o, which only
// this build writes and which is what gets linked, and returns its path and
// bytes.
func (c *objectCache) buildPart(t *toolchain, text, tmp string, i int, cpu *toolCPU) (string, []byte, error) {
	ll := filepath.Join(tmp, fmt.Sprintf("part%d.ll", i))
	obj := filepath.Join(tmp, fmt.Sprintf("part%d.o", i))
	if err := os.WriteFile(ll, []byte(text), 0o600); err != nil {
		return "", nil, fmt.Errorf("llvm: %v", err)
	}
	if err := verifyModule(ll); err != nil {
		return "", nil, err
	}
	partRuns.Add(1)
	if err := runClang(t, compileArgs(obj, ll), cpu); err != nil {
		return "", nil, err
	}
	data, err := readRegular(obj, maxObject)
	if err != nil {
		return "", nil, fmt.Errorf("llvm: %v", err)
	}
	return obj, data, nil
}

// keepPart puts a part's object data in the cache under key with its hash
// record, and records each of its kernels us as found there.
func (c *objectCache) keepPart(key string, data []byte, us []unit, tmp string) error {
	h := sha256.Sum256(data)
	files := map[string][]byte{key + ".o": data, key + ".o.sha256": []byte(hex.EncodeToString(h[:]))}
	for _, u := range us {
		files[u.key+".kernel"] = []byte(key)
	}
	// The object and its record go in before the kernels point at them;
	// a reader that finds them mismatched rebuilds, as for any corrupt
	// object.
	for _, name := range []string{key + ".o", key + ".o.sha256"} {
		if err := c.put(tmp, name, files[name]); err != nil {
			return err
		}
		delete(files, name)
	}
	for name, b := range files {
		if err := c.put(tmp, name, b); err != nil {
			return err
		}
	}
	return nil
}

// put writes b to the cache as name: into the build's directory tmp first,
// then renamed into place, so no reader sees half a file.
func (c *objectCache) put(tmp, name string, b []byte) error {
	staged := filepath.Join(tmp, "put-"+name)
	if err := os.WriteFile(staged, b, 0o600); err != nil {
		return fmt.Errorf("llvm: %v", err)
	}
	dst := filepath.Join(c.dir, name)
	clearOdd(dst)
	if err := os.Rename(staged, dst); err != nil {
		return fmt.Errorf("llvm: %v", err)
	}
	return nil
}

// link links the part objects objs into tmp/kernels.so, each kernel of us
// exported under the program's name for it too, and returns its bytes.
func link(t *toolchain, tmp string, objs []string, us []unit, cpu *toolCPU) ([]byte, error) {
	out := filepath.Join(tmp, "kernels.so")
	defsyms := make([]string, len(us))
	for i, u := range us {
		defsyms[i] = u.name + "=" + u.sym
	}
	if err := linkObjects(t, out, objs, defsyms, cpu); err != nil {
		return nil, err
	}
	data, err := readRegular(out, maxObject)
	if err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	return data, nil
}
