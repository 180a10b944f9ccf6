package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/models/internal/jsonstrict"
)

// Names of a model directory's checkpoint files.
const (
	SingleFile = "model.safetensors"
	IndexFile  = "model.safetensors.index.json"
)

// maxIndex bounds the bytes read from an index file; the weight map of the
// largest models is a few megabytes.
const maxIndex = 64 << 20

// Checkpoint is a set of tensors spread over one or more files.
type Checkpoint struct {
	files []*File
	where map[string]*File
	names []string // sorted
}

// Open opens a checkpoint: a .safetensors file, or a directory holding
// model.safetensors.index.json (sharded) or model.safetensors.
func Open(path string) (*Checkpoint, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return openFiles([]string{path}, nil, "")
	}
	index := filepath.Join(path, IndexFile)
	if _, err := os.Stat(index); err == nil {
		return openIndex(path, index)
	}
	single := filepath.Join(path, SingleFile)
	if _, err := os.Stat(single); err != nil {
		return nil, fmt.Errorf("%s: neither %s nor %s is there", path, IndexFile, SingleFile)
	}
	return openFiles([]string{single}, nil, "")
}

// index is model.safetensors.index.json. Its metadata (total_size and the
// like) is informative only: tensors' sizes come from the shards' headers.
type index struct {
	Metadata  map[string]json.RawMessage `json:"metadata"`
	WeightMap map[string]string          `json:"weight_map"`
}

// openIndex opens every shard the index names and requires the index and the
// shards to agree tensor for tensor.
func openIndex(dir, path string) (*Checkpoint, error) {
	text, err := ReadBounded(path, maxIndex)
	if err != nil {
		return nil, err
	}
	var ix index
	if err := jsonstrict.Decode(text, &ix); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: no weight_map", path)
	}
	// A set, not a search of the list: an index naming a shard per tensor
	// made the search quadratic (100000 tensors took a minute).
	var shards []string
	seen := map[string]bool{}
	for _, name := range sortedKeys(ix.WeightMap) {
		shard := ix.WeightMap[name]
		if shard == "" || shard != filepath.Base(shard) || shard == "." || shard == ".." || strings.ContainsAny(shard, `/\`) {
			return nil, fmt.Errorf("%s: tensor %q: shard %q is not a file name in the model directory", path, name, shard)
		}
		if !seen[shard] {
			seen[shard] = true
			shards = append(shards, shard)
		}
	}
	slices.Sort(shards)
	full := make([]string, len(shards))
	for i, s := range shards {
		full[i] = filepath.Join(dir, s)
	}
	return openFiles(full, ix.WeightMap, path)
}

// openFiles opens the files and indexes their tensors; with a weight map it
// also checks that each tensor is in the shard the map names.
func openFiles(paths []string, weightMap map[string]string, indexPath string) (*Checkpoint, error) {
	c := &Checkpoint{where: map[string]*File{}}
	for _, p := range paths {
		f, err := OpenFile(p)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.files = append(c.files, f)
		for _, name := range f.Names() {
			if other, dup := c.where[name]; dup {
				c.Close()
				return nil, fmt.Errorf("%s: tensor %q is also in %s", p, name, other.path)
			}
			if weightMap != nil && weightMap[name] != filepath.Base(p) {
				c.Close()
				if weightMap[name] == "" {
					return nil, fmt.Errorf("%s: tensor %q is not in the weight_map of %s", p, name, indexPath)
				}
				return nil, fmt.Errorf("%s: tensor %q is there, but %s puts it in %s", p, name, indexPath, weightMap[name])
			}
			c.where[name] = f
			c.names = append(c.names, name)
		}
	}
	for _, name := range sortedKeys(weightMap) {
		if c.where[name] == nil {
			c.Close()
			return nil, fmt.Errorf("%s: tensor %q is not in %s, where %s puts it", filepath.Join(filepath.Dir(indexPath), weightMap[name]), name, weightMap[name], indexPath)
		}
	}
	slices.Sort(c.names)
	return c, nil
}

// ReadBounded reads a regular file (not a FIFO, a device or a directory) of
// at most limit bytes: the bounded read for a model directory's small files.
func ReadBounded(path string, limit int64) ([]byte, error) {
	fh, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d accepted", path, size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past %d bytes while being read", path, limit)
	}
	return data, nil
}

// Names lists every tensor, sorted.
func (c *Checkpoint) Names() []string { return c.names }

// Info describes the tensor called name; file is the path of its shard.
func (c *Checkpoint) Info(name string) (info Info, file string, ok bool) {
	f := c.where[name]
	if f == nil {
		return Info{}, "", false
	}
	info, _ = f.Info(name)
	return info, f.path, true
}

// Tensor returns the tensor called name as a view of its shard's bytes.
func (c *Checkpoint) Tensor(name string) (*backend.Buffer, error) {
	f := c.where[name]
	if f == nil {
		return nil, fmt.Errorf("%s: no tensor %q", c.describe(), name)
	}
	return f.Tensor(name)
}

// describe names the checkpoint in an error: its file, or its directory.
func (c *Checkpoint) describe() string {
	if len(c.files) == 1 {
		return c.files[0].path
	}
	if len(c.files) == 0 {
		return "empty checkpoint"
	}
	return filepath.Dir(c.files[0].path)
}

// Close unmaps every file; every buffer handed out becomes invalid.
func (c *Checkpoint) Close() error {
	var errs []error
	for _, f := range c.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
