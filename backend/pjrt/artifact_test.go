package pjrt

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sampleArtifact() *Artifact {
	return &Artifact{
		Manifest: Manifest{
			Entry:  Signature{Name: "main", Params: []string{"f32[4]", "f32[4]"}, Results: []string{"f32[4]"}},
			Target: "tpu-v6e", Topology: "v6e:2x2", Platform: "tpu", PlatformVersion: "libtpu 0.0.42.1",
			PJRTAPI: "0.112", Tpucc: "tpucc-test", StableHLOSHA256: SHA256([]byte("module")),
		},
		Executable: []byte("serialized executable bytes"),
	}
}

func TestArtifactRoundTrip(t *testing.T) {
	a := sampleArtifact()
	var buf bytes.Buffer
	if _, err := a.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadArtifact(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	a.Manifest.ExecutableSHA = SHA256(a.Executable)
	if diff := cmp.Diff(a, got, cmpopts.IgnoreUnexported(Artifact{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestArtifactRejects(t *testing.T) {
	var buf bytes.Buffer
	sampleArtifact().WriteTo(&buf)
	good := buf.Bytes()
	flip := append([]byte(nil), good...)
	flip[len(flip)-1] ^= 1
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a tpucc PJRT executable (bad magic)"},
		{"truncated", good[:len(good)-3], "truncated executable: 24 of 27 bytes"},
		{"trailing", append(append([]byte(nil), good...), 0), "trailing bytes after the executable"},
		{"corrupt", flip, "executable SHA-256 "},
		{"huge manifest", []byte(artifactMagic + "\xff\xff\xff\xff"), "manifest of 4294967295 bytes exceeds 1048576"},
	} {
		_, err := ReadArtifact(bytes.NewReader(c.data))
		if err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// TestArtifactSignature: a signed artifact reads back with its MAC, which
// verifies with its key only, and not once any byte before it changed; a
// signature of the wrong length is trailing bytes.
func TestArtifactSignature(t *testing.T) {
	key := []byte("0123456789abcdef")
	a := sampleArtifact()
	if err := a.Verify(key); err != ErrUnsigned {
		t.Errorf("Verify of an unsigned artifact: %v, want %v", err, ErrUnsigned)
	}
	if err := a.Sign(key); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	a.WriteTo(&buf)
	good := buf.Bytes()
	if !bytes.HasSuffix(good, append([]byte(sigMagic), a.MAC...)) || len(a.MAC) != 32 {
		t.Fatalf("signed file ends % x, want the signature % x", good[len(good)-50:], a.MAC)
	}
	got, err := ReadArtifact(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Verify(key); err != nil {
		t.Errorf("Verify with the key: %v", err)
	}
	if err := got.Verify([]byte("fedcba9876543210")); err == nil || err.Error() != "signature does not match the key" {
		t.Errorf("Verify with another key: %v", err)
	}
	for i := 0; i < len(good)-50; i++ {
		bad := append([]byte(nil), good...)
		bad[i] ^= 1
		if a, err := ReadArtifact(bytes.NewReader(bad)); err == nil && a.Verify(key) == nil {
			t.Fatalf("byte %d flipped: the artifact still verifies", i)
		}
	}
	if _, err := ReadArtifact(bytes.NewReader(good[:len(good)-1])); err == nil || err.Error() != "trailing bytes after the executable" {
		t.Errorf("a short signature: %v", err)
	}
}

// TestManifestTarget: a manifest's target, topology and device kind must
// belong to its platform.
func TestManifestTarget(t *testing.T) {
	for _, c := range []struct {
		edit func(*Manifest)
		want string
	}{
		{func(m *Manifest) {}, ""},
		{func(m *Manifest) { m.Target, m.Topology, m.DeviceKind = "tpu-v7x", "tpu7x:2x2x1", "TPU7x" }, ""},
		{func(m *Manifest) { m.Topology = "v5e:2x2" }, `manifest topology "v5e:2x2" is not a tpu-v6e topology (v6e:...)`},
		{func(m *Manifest) { m.DeviceKind = "TPU v5 lite" }, `manifest device_kind "TPU v5 lite" is not tpu-v6e's "TPU v6 lite"`},
		{func(m *Manifest) { m.Target = "cpu" }, `manifest target "cpu" is not a TPU target of platform tpu`},
		{func(m *Manifest) { m.Platform = "cpu" }, `manifest target "tpu-v6e", topology "v6e:2x2": platform cpu has target cpu and no topology`},
		{func(m *Manifest) { m.Platform = "cuda" }, `manifest target "tpu-v6e" is not a target of platform cuda`},
	} {
		m := sampleArtifact().Manifest
		m.DeviceKind = "TPU v6 lite"
		c.edit(&m)
		if err := m.checkTarget(); (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v: %v, want %q", m, err, c.want)
		}
	}
}

func FuzzReadArtifact(f *testing.F) {
	var buf bytes.Buffer
	sampleArtifact().WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(artifactMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadArtifact(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		a.WriteTo(&out)
		if _, err := ReadArtifact(&out); err != nil {
			t.Fatalf("rewritten artifact does not read back: %v", err)
		}
	})
}
