package safetensors

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// shardedDir writes two shards and an index that maps a, b to the first
// and c to the second.
func shardedDir(t *testing.T, index string) string {
	t.Helper()
	dir := t.TempDir()
	one := []Named{{"a", buf(t, ir.Tensor(ir.F32, 2), 1)}, {"b", buf(t, ir.Tensor(ir.BF16, 3), 2)}}
	two := []Named{{"c", buf(t, ir.Tensor(ir.F16, 2, 2), 3)}}
	if err := WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), one, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), two, nil); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, dir, IndexFile, []byte(index))
	return dir
}

const goodIndex = `{"metadata": {"total_size": 22}, "weight_map": {
	"a": "model-00001-of-00002.safetensors",
	"b": "model-00001-of-00002.safetensors",
	"c": "model-00002-of-00002.safetensors"}}`

func TestSharded(t *testing.T) {
	dir := shardedDir(t, goodIndex)
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := strings.Join(c.Names(), ","); got != "a,b,c" {
		t.Errorf("Names() = %s, want a,b,c", got)
	}
	info, file, ok := c.Info("c")
	if !ok || file != filepath.Join(dir, "model-00002-of-00002.safetensors") || info.Type().String() != "f16[2,2]" {
		t.Errorf("Info(c) = %v %s %v", info, file, ok)
	}
	b, err := c.Tensor("b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Type().String() != "bf16[3]" || b.Bytes()[0] != 2 || b.Bytes()[5] != 7 {
		t.Errorf("b = %s % x", b.Type(), b.Bytes())
	}
	if _, err := c.Tensor("d"); err == nil || err.Error() != dir+`: no tensor "d"` {
		t.Errorf("missing tensor: %v", err)
	}
}

func TestSingleInDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, SingleFile), []Named{{"w", buf(t, ir.Tensor(ir.F32, 1), 0)}}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Tensor("w"); err != nil {
		t.Error(err)
	}
	if _, err := c.Tensor("v"); err == nil || err.Error() != filepath.Join(dir, SingleFile)+`: no tensor "v"` {
		t.Errorf("missing tensor: %v", err)
	}
	empty := t.TempDir()
	if _, err := Open(empty); err == nil || err.Error() != empty+": neither model.safetensors.index.json nor model.safetensors is there" {
		t.Errorf("empty directory: %v", err)
	}
}

func TestShardErrors(t *testing.T) {
	s1, s2 := "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	cases := []struct {
		name, index, want string
	}{
		{"missing in shard", `{"weight_map": {"a": "` + s1 + `", "b": "` + s1 + `", "c": "` + s2 + `", "d": "` + s2 + `"}}`,
			`DIR/` + s2 + `: tensor "d" is not in ` + s2 + `, where DIR/model.safetensors.index.json puts it`},
		{"unexpected in shard", `{"weight_map": {"a": "` + s1 + `", "c": "` + s2 + `"}}`,
			`DIR/` + s1 + `: tensor "b" is not in the weight_map of DIR/model.safetensors.index.json`},
		{"wrong shard", `{"weight_map": {"a": "` + s1 + `", "b": "` + s2 + `", "c": "` + s2 + `"}}`,
			`DIR/` + s1 + `: tensor "b" is there, but DIR/model.safetensors.index.json puts it in ` + s2},
		{"escaping path", `{"weight_map": {"a": "../` + s1 + `"}}`,
			`DIR/model.safetensors.index.json: tensor "a": shard "../` + s1 + `" is not a file name in the model directory`},
		{"missing shard", `{"weight_map": {"a": "model-9.safetensors"}}`,
			`open DIR/model-9.safetensors: no such file or directory`},
		{"duplicate", `{"weight_map": {"a": "` + s1 + `", "a": "` + s2 + `"}}`,
			`DIR/model.safetensors.index.json: duplicate key "a" in the object at $.weight_map`},
		{"unknown field", `{"weight_map": {"a": "` + s1 + `"}, "shards": 2}`,
			`DIR/model.safetensors.index.json: unknown field "shards"`},
		{"empty", `{"metadata": {}}`, `DIR/model.safetensors.index.json: no weight_map`},
	}
	for _, c := range cases {
		dir := shardedDir(t, c.index)
		_, err := Open(dir)
		want := strings.ReplaceAll(c.want, "DIR", dir)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, want)
		}
	}
}

// An index naming a shard per tensor (100000 of them, 3 MB) is read in
// linear time and refused at its first missing shard: the shards were
// collected by searching the list, which took a minute for this file and
// hours for one of the 64 MiB an index may have.
func TestIndexManyShards(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"weight_map": {`)
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t%d": "s%d.safetensors"`, i, i)
	}
	b.WriteString("}}")
	dir := t.TempDir()
	writeRaw(t, dir, IndexFile, []byte(b.String()))
	_, err := Open(dir)
	if want := "open " + filepath.Join(dir, "s0.safetensors") + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A tensor in two shards is refused even without an index.
func TestDuplicateAcrossShards(t *testing.T) {
	dir := shardedDir(t, goodIndex)
	s1 := filepath.Join(dir, "model-00001-of-00002.safetensors")
	if err := WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), []Named{{"a", buf(t, ir.Tensor(ir.F32, 2), 1)}}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := openFiles([]string{s1, filepath.Join(dir, "model-00002-of-00002.safetensors")}, nil, "")
	if want := filepath.Join(dir, "model-00002-of-00002.safetensors") + `: tensor "a" is also in ` + s1; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
