package pjrt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// ParseType reads a static type as a manifest spells it: f32[4,8], i1[].
func ParseType(s string) (ir.Type, error) {
	ds, rest, ok := strings.Cut(s, "[")
	dims, closed := strings.CutSuffix(rest, "]")
	dt, known := ir.ParseDType(ds)
	if !ok || !closed || !known {
		return ir.Type{}, fmt.Errorf("type %q: want a dtype and static dimensions, as f32[4,8]", s)
	}
	t := ir.Type{DType: dt, Shape: []ir.Dim{}}
	if dims == "" {
		return t, nil
	}
	for d := range strings.SplitSeq(dims, ",") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return ir.Type{}, fmt.Errorf("type %q: dimension %q is not a static size", s, d)
		}
		t.Shape = append(t.Shape, ir.D(n))
	}
	if n, ok := t.NumElements(); !ok || n > 1<<40 {
		return ir.Type{}, fmt.Errorf("type %q: too many elements", s)
	}
	return t, nil
}

// Types parses the entry's parameter and result types.
func (s *Signature) Types() (params, results []ir.Type, err error) {
	if s.ParamNames != nil && len(s.ParamNames) != len(s.Params) {
		return nil, nil, fmt.Errorf("manifest entry: %d param_names for %d params", len(s.ParamNames), len(s.Params))
	}
	if s.DrawLimits != nil && len(s.DrawLimits) != len(s.Params) {
		return nil, nil, fmt.Errorf("manifest entry: %d draw_limits for %d params", len(s.DrawLimits), len(s.Params))
	}
	for i, l := range s.DrawLimits {
		if !(l > 0 && l <= 2) { // cpu's draws are within [-2, 2) at most; also refuses NaN
			return nil, nil, fmt.Errorf("manifest entry draw_limits[%d]: %v is not in (0, 2]", i, l)
		}
	}
	for i, p := range s.Params {
		t, err := ParseType(p)
		if err != nil {
			return nil, nil, fmt.Errorf("manifest entry params[%d]: %v", i, err)
		}
		params = append(params, t)
	}
	for i, r := range s.Results {
		t, err := ParseType(r)
		if err != nil {
			return nil, nil, fmt.Errorf("manifest entry results[%d]: %v", i, err)
		}
		results = append(results, t)
	}
	return params, results, nil
}

// Check refuses a manifest written for another plugin or device than c's:
// an executable is only loadable by the plugin build that compiled it, on
// the same kind of device. The manifest's target and topology must be of
// its platform and device kind. The error names the manifest's field.
func (m *Manifest) Check(c *Client) error {
	if err := m.checkTarget(); err != nil {
		return err
	}
	for _, f := range []struct{ field, manifest, plugin string }{
		{"platform", m.Platform, c.Platform()},
		{"platform_version", m.PlatformVersion, c.PlatformVersion()},
		{"pjrt_api", m.PJRTAPI, c.p.Version()},
		{"device_kind", m.DeviceKind, c.devices[0].Kind},
	} {
		if f.manifest != f.plugin {
			return fmt.Errorf("manifest %s %q does not match the plugin's %q (%s)", f.field, f.manifest, f.plugin, c.p.Path)
		}
	}
	return nil
}

// checkTarget refuses a target that is not one of the platform's (a
// manifest that says tpu-v6e on a CPU executable), a topology of another
// generation than the target's, and a device kind other than the target's.
func (m *Manifest) checkTarget() error {
	switch m.Platform {
	case "cpu":
		if m.Target != "cpu" || m.Topology != "" {
			return fmt.Errorf("manifest target %q, topology %q: platform cpu has target cpu and no topology", m.Target, m.Topology)
		}
	case "tpu":
		g, ok := Generation(m.Target)
		if !ok {
			return fmt.Errorf("manifest target %q is not a TPU target of platform tpu", m.Target)
		}
		if p, _, _ := strings.Cut(m.Topology, ":"); p != g.Prefix {
			return fmt.Errorf("manifest topology %q is not a %s topology (%s:...)", m.Topology, g.Target, g.Prefix)
		}
		if m.DeviceKind != g.DeviceKind {
			return fmt.Errorf("manifest device_kind %q is not %s's %q", m.DeviceKind, g.Target, g.DeviceKind)
		}
	default:
		if m.Target == "cpu" || strings.HasPrefix(m.Target, "tpu-") {
			return fmt.Errorf("manifest target %q is not a target of platform %s", m.Target, m.Platform)
		}
	}
	return nil
}

// LoadArtifact checks a's manifest against c and loads its executable,
// whose arguments are then checked against the manifest's signature.
func (c *Client) LoadArtifact(a *Artifact) (*LoadedExecutable, []ir.Type, error) {
	if err := a.Manifest.Check(c); err != nil {
		return nil, nil, err
	}
	params, results, err := a.Manifest.Entry.Types()
	if err != nil {
		return nil, nil, err
	}
	exe, err := c.Deserialize(a.Executable, params)
	if err != nil {
		return nil, nil, err
	}
	if exe.NumOutputs() != len(results) {
		exe.Close()
		return nil, nil, fmt.Errorf("the executable returns %d results, the manifest's entry %d", exe.NumOutputs(), len(results))
	}
	kinds, err := exe.DeviceKinds()
	for _, k := range kinds {
		if err == nil && k != a.Manifest.DeviceKind {
			err = fmt.Errorf("the executable runs on %q devices, its manifest says %q", k, a.Manifest.DeviceKind)
		}
	}
	if err == nil && len(kinds) == 0 {
		err = errors.New("the executable was loaded on no device")
	}
	if err != nil {
		exe.Close()
		return nil, nil, err
	}
	return exe, results, nil
}

// Load is LoadArtifact on the backend's client, as a backend.Executable.
// An executable split over a mesh (a manifest with a mesh) is loaded on the
// client with the mesh's devices (made for it on XLA:CPU, as for a
// compile), runs on all of them, splits its host arguments and gathers its
// results as its manifest's shardings say.
func (b *Backend) Load(a *Artifact) (backend.Executable, error) {
	if a.Manifest.Mesh != nil {
		return b.loadSharded(a)
	}
	exe, results, err := b.c.LoadArtifact(a)
	if err != nil {
		return nil, err
	}
	return &executable{exe: exe, results: results}, nil
}

func (b *Backend) loadSharded(a *Artifact) (backend.Executable, error) {
	params, results, err := a.Manifest.Entry.Types()
	if err != nil {
		return nil, err
	}
	mesh, args, res, err := a.Manifest.Mesh.shardings(params, results)
	if err != nil {
		return nil, err
	}
	c, err := b.forMesh(mesh)
	if err != nil {
		return nil, err
	}
	if err := a.Manifest.Check(c); err != nil {
		return nil, err
	}
	if n := len(a.Manifest.Mesh.Devices); n <= len(c.devices) {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = c.devices[i].ID
		}
		if !slices.Equal(ids, a.Manifest.Mesh.Devices) {
			return nil, fmt.Errorf("manifest mesh devices %v: the client runs mesh @%s on devices %v", a.Manifest.Mesh.Devices, mesh.Name, ids)
		}
	}
	s, err := c.LoadSharded(a.Executable, mesh, params, results, args, res)
	if err != nil {
		return nil, err
	}
	if err := checkLoadedSharded(s, len(results), a.Manifest.DeviceKind); err != nil {
		s.Close()
		return nil, err
	}
	return &shardedExecutable{s: s, c: c}, nil
}

// checkLoadedSharded checks what a loaded sharded executable says of
// itself against its manifest: its number of results and its devices' kind.
func checkLoadedSharded(s *Sharded, results int, kind string) error {
	if s.exe.NumOutputs() != results {
		return fmt.Errorf("the executable returns %d results, the manifest's entry %d", s.exe.NumOutputs(), results)
	}
	kinds, err := s.exe.DeviceKinds()
	if err != nil {
		return err
	}
	if len(kinds) == 0 {
		return errors.New("the executable was loaded on no device")
	}
	for _, k := range kinds {
		if k != kind {
			return fmt.Errorf("the executable runs on %q devices, its manifest says %q", k, kind)
		}
	}
	return nil
}

// maxMeshDevices bounds a manifest's mesh, so that a corrupt size never
// overflows or allocates the machine's memory.
const maxMeshDevices = 1 << 16

// shardings reads the manifest's mesh and the entry's shardings, checked as
// the verifier checks a .tir's: axes of sizes at least 1 with distinct
// names, the device assignment one ID per device, one sharding per
// parameter and result with one list per dimension, naming axes of the
// mesh, each at most once per tensor.
func (m *ManifestMesh) shardings(params, results []ir.Type) (*ir.Mesh, []*ir.Sharding, []*ir.Sharding, error) {
	mesh := &ir.Mesh{Name: m.Name}
	n := int64(1)
	for i, x := range m.Axes {
		if x.Name == "" || x.Size < 1 || mesh.Axis(x.Name) >= 0 {
			return nil, nil, nil, fmt.Errorf("manifest mesh axes[%d]: want a new name and a size of at least 1, have %q=%d", i, x.Name, x.Size)
		}
		if n *= x.Size; n > maxMeshDevices {
			return nil, nil, nil, fmt.Errorf("manifest mesh: more than %d devices", maxMeshDevices)
		}
		mesh.Axes = append(mesh.Axes, ir.MeshAxis{Name: x.Name, Size: x.Size})
	}
	if m.Name == "" || int64(len(m.Devices)) != n {
		return nil, nil, nil, fmt.Errorf("manifest mesh @%s: %d devices assigned to a mesh of %d", m.Name, len(m.Devices), n)
	}
	args, err := manifestShardings("params", m.Params, params, mesh)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := manifestShardings("results", m.Results, results, mesh)
	if err != nil {
		return nil, nil, nil, err
	}
	return mesh, args, res, nil
}

func manifestShardings(field string, dims [][][]string, types []ir.Type, mesh *ir.Mesh) ([]*ir.Sharding, error) {
	if len(dims) != len(types) {
		return nil, fmt.Errorf("manifest mesh %s: %d shardings for %d tensors", field, len(dims), len(types))
	}
	out := make([]*ir.Sharding, len(dims))
	for i, d := range dims {
		if len(d) != types[i].Rank() {
			return nil, fmt.Errorf("manifest mesh %s[%d]: %d dimensions for %s", field, i, len(d), types[i])
		}
		seen := map[string]bool{}
		s := &ir.Sharding{Mesh: mesh.Name, Dims: make([][]string, len(d))}
		for k, axes := range d {
			for _, a := range axes {
				if mesh.Axis(a) < 0 || seen[a] {
					return nil, fmt.Errorf("manifest mesh %s[%d]: axis %q is not the mesh's or is used twice", field, i, a)
				}
				seen[a] = true
			}
			s.Dims[k] = append([]string{}, axes...)
		}
		out[i] = s
	}
	return out, nil
}
