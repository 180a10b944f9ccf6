package pjrt

import (
	"errors"
	"fmt"
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
func (b *Backend) Load(a *Artifact) (backend.Executable, error) {
	exe, results, err := b.c.LoadArtifact(a)
	if err != nil {
		return nil, err
	}
	return &executable{exe: exe, results: results}, nil
}
