package backend

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// fakeDevice counts copies to the host and closes.
type fakeDevice struct {
	data           []byte
	copies, closes atomic.Int32
}

func (d *fakeDevice) ToHost() ([]byte, error) {
	d.copies.Add(1)
	return append([]byte(nil), d.data...), nil
}

func (d *fakeDevice) Close() error { d.closes.Add(1); return nil }

func TestOnDevice(t *testing.T) {
	ty := ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(2)}}
	d := &fakeDevice{data: []byte{0, 0, 128, 63, 0, 0, 0, 64}} // 1, 2
	b := OnDevice(ty, d)
	if b.Len() != 2 || b.Device() != d || d.copies.Load() != 0 {
		t.Fatalf("Len %d, Device %v, %d copies before any read", b.Len(), b.Device(), d.copies.Load())
	}
	if got := b.String() + " " + b.WithType(ty).String(); got != "f32[2] [1.0, 2.0] f32[2] [1.0, 2.0]" || d.copies.Load() != 1 {
		t.Errorf("read %q with %d copies, want one", got, d.copies.Load())
	}
	if err := b.Donate("was donated to a call of f (argument 0)"); err != nil || d.closes.Load() != 1 || b.Device() != nil {
		t.Fatalf("Donate: %v, %d closes", err, d.closes.Load())
	}
	err := b.Donate("again")
	if want := "f32[2] was donated to a call of f (argument 0): donated"; err == nil || err.Error() != want || !errors.Is(err, ErrDonated) {
		t.Errorf("donating twice: %v, want %s", err, want)
	}
	if s := b.String(); s != "f32[2] <was donated to a call of f (argument 0)>" {
		t.Errorf("String of a donated buffer: %q", s)
	}
	defer func() {
		if p := fmt.Sprint(recover()); p != "f32[2] was donated to a call of f (argument 0)" {
			t.Errorf("reading a donated buffer panicked with %q", p)
		}
	}()
	b.Bytes()
}
