package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
)

// Named is a tensor to write.
type Named struct {
	Name string
	Buf  *backend.Buffer
}

// Write writes tensors in the safetensors format, in the order given, with
// the header's entries sorted by name and padded with spaces to a multiple
// of 8 bytes so that every tensor starts 8-byte aligned in a mapping.
func Write(w io.Writer, tensors []Named, metadata map[string]string) error {
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return err
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
	}
	order := slices.Clone(tensors)
	slices.SortFunc(order, func(a, b Named) int { return strings.Compare(a.Name, b.Name) })
	offsets := map[string][2]int64{}
	at := int64(0)
	for _, t := range tensors {
		if _, dup := offsets[t.Name]; dup || t.Name == "__metadata__" {
			return fmt.Errorf("safetensors.Write: tensor name %q repeated or reserved", t.Name)
		}
		n := int64(len(t.Buf.Bytes()))
		offsets[t.Name] = [2]int64{at, at + n}
		at += n
	}
	for i, t := range order {
		name, ok := dtypeName(t.Buf.Type().DType)
		if !ok {
			return fmt.Errorf("safetensors.Write: tensor %q: dtype %s has no safetensors name", t.Name, t.Buf.Type().DType)
		}
		if i > 0 || len(metadata) > 0 {
			hdr.WriteByte(',')
		}
		key, _ := json.Marshal(t.Name)
		hdr.Write(key)
		fmt.Fprintf(&hdr, `:{"dtype":%q,"shape":[`, name)
		for j, d := range t.Buf.Type().Dims() {
			if j > 0 {
				hdr.WriteByte(',')
			}
			hdr.WriteString(strconv.FormatInt(d, 10))
		}
		o := offsets[t.Name]
		fmt.Fprintf(&hdr, `],"data_offsets":[%d,%d]}`, o[0], o[1])
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes tensors to path (see Write), replacing it.
func WriteFile(path string, tensors []Named, metadata map[string]string) error {
	var buf bytes.Buffer
	if err := Write(&buf, tensors, metadata); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
