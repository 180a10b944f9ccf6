package ir

// verifyShardings checks the module's meshes and every sharding written on
// a parameter, a result or a sharding_constraint: the mesh exists, the
// sharding has one entry per dimension, and each axis exists and splits at
// most one dimension, once.
func verifyShardings(m *Module) []*Error {
	errs := verifyMeshes(m)
	for _, f := range m.Funcs {
		errs = append(errs, verifyFuncShardings(m, f)...)
	}
	return errs
}

func verifyMeshes(m *Module) []*Error {
	var errs []*Error
	seen := map[string]*Mesh{}
	for _, x := range m.Meshes {
		if prev, dup := seen[x.Name]; dup {
			errs = append(errs, Errorf(x.Pos, "mesh @%s is already defined at %s", x.Name, prev.Pos))
			continue
		}
		seen[x.Name] = x
		if len(x.Axes) == 0 {
			errs = append(errs, Errorf(x.Pos, "mesh @%s has no axes", x.Name))
		}
		axes, sized := map[string]bool{}, true
		for _, a := range x.Axes {
			if axes[a.Name] {
				errs = append(errs, Errorf(x.Pos, "mesh @%s has axis %q twice", x.Name, a.Name))
			}
			axes[a.Name] = true
			if a.Size < 1 {
				sized = false
				errs = append(errs, Errorf(x.Pos, "axis %q of mesh @%s has size %d; sizes are at least 1", a.Name, x.Name, a.Size))
			}
		}
		// XLA compiles a module for one number of devices.
		if first := m.Meshes[0]; sized && x != first && x.Devices() != first.Devices() {
			errs = append(errs, Errorf(x.Pos, "mesh @%s has %d devices, but mesh @%s has %d; all meshes of a module must have the same number of devices",
				x.Name, x.Devices(), first.Name, first.Devices()))
		}
	}
	return errs
}

func verifyFuncShardings(m *Module, f *Func) []*Error {
	var errs []*Error
	if f.ArgShardings != nil && len(f.ArgShardings) != len(f.Params) {
		errs = append(errs, Errorf(f.Pos, "internal: @%s has %d parameter shardings for %d parameters", f.Name, len(f.ArgShardings), len(f.Params)))
	} else {
		for i, s := range f.ArgShardings {
			errs = append(errs, checkSharding(m, s, f.Params[i].Type, f.Params[i].Pos)...)
		}
	}
	if f.ResultShardings != nil && len(f.ResultShardings) != len(f.Results) {
		errs = append(errs, Errorf(f.Pos, "internal: @%s has %d result shardings for %d results", f.Name, len(f.ResultShardings), len(f.Results)))
	} else {
		for i, s := range f.ResultShardings {
			errs = append(errs, checkSharding(m, s, f.Results[i], f.Pos)...)
		}
	}
	f.Body.Walk(func(in *Instr) {
		if a, ok := in.Attr.(*ShardingAttr); ok && len(in.Args) == 1 && in.Args[0] != nil {
			errs = append(errs, checkSharding(m, a.Sharding, in.Args[0].Type, in.Pos)...)
		}
	})
	return errs
}

// checkSharding checks s against the tensor type t; pos stands in where s
// carries no position. A nil s (unannotated) is fine.
func checkSharding(m *Module, s *Sharding, t Type, pos Pos) []*Error {
	if s == nil {
		return nil
	}
	if s.Pos.Known() {
		pos = s.Pos
	}
	mesh := m.Mesh(s.Mesh)
	if mesh == nil {
		return []*Error{Errorf(pos, "sharding names undefined mesh @%s", s.Mesh)}
	}
	var errs []*Error
	if len(s.Dims) != t.Rank() {
		errs = append(errs, Errorf(pos, "sharding %s has %s, but %s has rank %d", s, plural(len(s.Dims), "dimension"), t, t.Rank()))
	}
	used := map[string]bool{}
	for _, axes := range s.Dims {
		for _, a := range axes {
			switch {
			case mesh.Axis(a) < 0:
				errs = append(errs, Errorf(pos, "sharding %s uses axis %q, which mesh @%s does not have", s, a, mesh.Name))
			case used[a]:
				errs = append(errs, Errorf(pos, "sharding %s uses axis %q more than once; an axis splits at most one dimension of a tensor, once", s, a))
			}
			used[a] = true
		}
	}
	return errs
}
