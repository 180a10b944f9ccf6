package pjrt

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// An Artifact is an ahead-of-time compiled program as `tpucc build
// --emit=executable` writes it: a manifest that says what it was compiled
// from and for, and the plugin's serialized executable. docs/PJRT.md
// describes the file format.
type Artifact struct {
	Manifest   Manifest
	Executable []byte
	// MAC is the file's signature, HMAC-SHA256 with the user's key of every
	// byte before it (Sign, Verify); nil when the file is not signed.
	MAC []byte

	head []byte // the bytes read before the executable, for Verify
}

// Manifest describes an Artifact's executable.
type Manifest struct {
	Entry           Signature `json:"entry"`
	Target          string    `json:"target"`           // tpu-v6e
	Topology        string    `json:"topology"`         // v6e:2x2
	Platform        string    `json:"platform"`         // the plugin's platform name: tpu
	PlatformVersion string    `json:"platform_version"` // the plugin's own version (libtpu's build)
	DeviceKind      string    `json:"device_kind"`      // the devices' kind: TPU v6 lite, cpu
	PJRTAPI         string    `json:"pjrt_api"`         // the plugin's C API version, 0.112
	Tpucc           string    `json:"tpucc"`            // the tpucc version that built it
	StableHLOSHA256 string    `json:"stablehlo_sha256"`
	// Mesh is set for a program split over several devices.
	Mesh          *ManifestMesh `json:"mesh,omitempty"`
	ExecutableSHA string        `json:"executable_sha256"`
}

// ManifestMesh is the mesh a program is split over: its name and axes as
// the .tir declares them, the device assignment (partition p runs on the
// device with ID Devices[p]), and how the entry's parameters and results
// are split: for each, one list per dimension of the mesh axes that split
// it, major first (the .tir sharding's dimensions: [["dp"], []]).
type ManifestMesh struct {
	Name    string       `json:"name"`
	Axes    []MeshAxis   `json:"axes"`
	Devices []int        `json:"devices"`
	Params  [][][]string `json:"params"`
	Results [][][]string `json:"results"`
}

// MeshAxis is one named axis of a ManifestMesh.
type MeshAxis struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Signature is the entry function's name, its parameter and result types
// as .tir spells them (f32[4,8]) and its parameters' names (without %).
type Signature struct {
	Name       string   `json:"name"`
	Params     []string `json:"params"`
	Results    []string `json:"results"`
	ParamNames []string `json:"param_names,omitempty"`
	// DrawLimits are the bounds tpucc run draws each parameter's random
	// floats within (cpu.InputLimits of the .tir entry), so that the
	// executable and the .tir run on the same --seed get the same inputs.
	DrawLimits []float64 `json:"draw_limits,omitempty"`
}

// artifactMagic starts every artifact; the digit is the format version.
const artifactMagic = "tpucc-pjrt\x001\n"

// Bounds on what ReadArtifact accepts, so a corrupt length never allocates
// the machine's memory.
const (
	maxManifest   = 1 << 20
	maxExecutable = 4 << 30
)

// SHA256 is the hex SHA-256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sigMagic starts the signature that may follow the executable.
const sigMagic = "tpucc-hmac-sha256\n"

// encodeHead is the file up to the executable's bytes: the magic, the
// manifest (its executable hash set from the executable) and the lengths.
func (a *Artifact) encodeHead() ([]byte, error) {
	m := a.Manifest
	m.ExecutableSHA = SHA256(a.Executable)
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(artifactMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(len(js)))
	buf.Write(js)
	binary.Write(&buf, binary.LittleEndian, uint64(len(a.Executable)))
	return buf.Bytes(), nil
}

// WriteTo writes the artifact, and its MAC when it has one; the manifest's
// executable hash is set from the executable written.
func (a *Artifact) WriteTo(w io.Writer) (int64, error) {
	head, err := a.encodeHead()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range [][]byte{head, a.Executable, a.trailer()} {
		k, err := w.Write(b)
		if n += int64(k); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (a *Artifact) trailer() []byte {
	if a.MAC == nil {
		return nil
	}
	return append([]byte(sigMagic), a.MAC...)
}

// Sign sets a.MAC to the HMAC-SHA256 with key of the file WriteTo writes
// before it.
func (a *Artifact) Sign(key []byte) error {
	head, err := a.encodeHead()
	if err != nil {
		return err
	}
	a.MAC = mac(key, head, a.Executable)
	return nil
}

func mac(key, head, exe []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(head)
	h.Write(exe)
	return h.Sum(nil)
}

// ErrUnsigned is Verify's error for a file with no signature.
var ErrUnsigned = errors.New("not signed")

// Verify checks an artifact ReadArtifact read against key: the MAC must be
// the HMAC-SHA256 with key of every byte of the file before it.
func (a *Artifact) Verify(key []byte) error {
	if a.MAC == nil {
		return ErrUnsigned
	}
	head := a.head
	if head == nil { // made in memory, not read
		var err error
		if head, err = a.encodeHead(); err != nil {
			return err
		}
	}
	if !hmac.Equal(a.MAC, mac(key, head, a.Executable)) {
		return errors.New("signature does not match the key")
	}
	return nil
}

// ReadArtifact reads and checks an artifact: its magic, bounded lengths, a
// manifest that parses with no unknown fields, nothing after the
// executable, and the executable's hash.
func ReadArtifact(r io.Reader) (*Artifact, error) {
	magic := make([]byte, len(artifactMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != artifactMagic {
		return nil, errors.New("not a tpucc PJRT executable (bad magic)")
	}
	var mlen uint32
	if err := binary.Read(r, binary.LittleEndian, &mlen); err != nil {
		return nil, errors.New("truncated manifest length")
	}
	if mlen > maxManifest {
		return nil, fmt.Errorf("manifest of %d bytes exceeds %d", mlen, maxManifest)
	}
	js := make([]byte, mlen)
	if _, err := io.ReadFull(r, js); err != nil {
		return nil, errors.New("truncated manifest")
	}
	a := &Artifact{}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a.Manifest); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	var xlen uint64
	if err := binary.Read(r, binary.LittleEndian, &xlen); err != nil {
		return nil, errors.New("truncated executable length")
	}
	if xlen > maxExecutable {
		return nil, fmt.Errorf("executable of %d bytes exceeds %d", xlen, uint64(maxExecutable))
	}
	var exe bytes.Buffer
	if n, err := io.CopyN(&exe, r, int64(xlen)); err != nil {
		return nil, fmt.Errorf("truncated executable: %d of %d bytes", n, xlen)
	}
	a.Executable = exe.Bytes()
	if got := SHA256(a.Executable); got != a.Manifest.ExecutableSHA {
		return nil, fmt.Errorf("executable SHA-256 %s does not match the manifest's %s", got, a.Manifest.ExecutableSHA)
	}
	if err := a.readMAC(r); err != nil {
		return nil, err
	}
	var head bytes.Buffer
	head.WriteString(artifactMagic)
	binary.Write(&head, binary.LittleEndian, mlen)
	head.Write(js)
	binary.Write(&head, binary.LittleEndian, xlen)
	a.head = head.Bytes()
	return a, nil
}

// readMAC reads what follows the executable: nothing, or a signature and
// nothing after it.
func (a *Artifact) readMAC(r io.Reader) error {
	rest, err := io.ReadAll(io.LimitReader(r, int64(len(sigMagic)+sha256.Size+1)))
	switch {
	case err != nil:
		return err
	case len(rest) == 0:
		return nil
	case len(rest) != len(sigMagic)+sha256.Size || string(rest[:len(sigMagic)]) != sigMagic:
		return errors.New("trailing bytes after the executable")
	}
	a.MAC = rest[len(sigMagic):]
	return nil
}

// IsArtifact reports whether b starts like an artifact.
func IsArtifact(b []byte) bool { return bytes.HasPrefix(b, []byte(artifactMagic)) }
