package backend

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tpucc/tpucc/ir"
)

// DeviceData is a buffer's storage in a device's memory (a PJRT buffer).
// The backend that made it recognises its own and runs on it without a
// copy; everything else reads it through Bytes, which copies it once.
type DeviceData interface {
	// ToHost copies the storage to host memory, in Buffer's encoding.
	ToHost() ([]byte, error)
	// Close releases the device memory.
	Close() error
}

// Uploader is a backend whose programs run in a device's memory. Upload
// copies a host buffer there once, for an argument that many calls share (a
// model's weights): passed to a program of the same backend it is used
// where it lies instead of being copied for every call.
type Uploader interface {
	Upload(b *Buffer) (*Buffer, error)
}

// ShardUploader is an Uploader that can also split a host buffer over the
// devices of a mesh as s says, each device receiving only its own piece
// (a model's weights split at load).
type ShardUploader interface {
	Uploader
	UploadSharded(b *Buffer, mesh *ir.Mesh, s *ir.Sharding) (*Buffer, error)
}

// deviceState is a device buffer's storage and its host copy, or why a
// donated buffer has none.
type deviceState struct {
	d       DeviceData
	once    sync.Once
	host    []byte
	err     error
	donated string
}

func (s *deviceState) bytes(t ir.Type) []byte {
	if s.donated != "" {
		panic(fmt.Sprintf("%s %s", t, s.donated))
	}
	s.once.Do(func() {
		var b []byte
		if b, s.err = s.d.ToHost(); s.err == nil {
			var v *Buffer
			if v, s.err = View(t, b); s.err == nil {
				s.host = v.data
			}
		}
	})
	if s.err != nil {
		panic(fmt.Sprintf("copying %s from its device: %v", t, s.err))
	}
	return s.host
}

// OnDevice returns a buffer of type t whose storage is d: it stays on the
// device until something reads it.
func OnDevice(t ir.Type, d DeviceData) *Buffer {
	return &Buffer{typ: t, dev: &deviceState{d: d}}
}

// Device returns b's device storage, nil for a host buffer or a donated one.
func (b *Buffer) Device() DeviceData {
	if s := b.dev; s != nil && s.donated == "" {
		return s.d
	}
	return nil
}

// ErrDonated is wrapped by the error of donating a buffer twice.
var ErrDonated = errors.New("donated")

// Donate marks b consumed by a call: its device storage, if any, is
// released, and reading it afterwards panics with "TYPE why" (why says to
// what it was donated). Donating a donated buffer is an error that says to
// what it was donated first. Donate must not run concurrently with any
// other use of b.
func (b *Buffer) Donate(why string) error {
	old := b.dev
	if old != nil && old.donated != "" {
		return fmt.Errorf("%s %s: %w", b.typ, old.donated, ErrDonated)
	}
	b.dev = &deviceState{donated: why}
	if old != nil && old.d != nil {
		return old.d.Close()
	}
	return nil
}

// Donated says to what b was donated, "" when it was not.
func (b *Buffer) Donated() string {
	if s := b.dev; s != nil {
		return s.donated
	}
	return ""
}
