package engine

import "github.com/tpucc/tpucc/ir"

// Meshes and shardings in the binary module encoding. A module without
// them encodes as before; one with them appends, after its functions:
//
//	shardings = "S" nmeshes:uvar (name:str pos naxes:uvar (name:str size:svar)*)*
//	            (args:list results:list) per function
//	list      = 0 (none) | 1 n:uvar (0 | 1 sharding)*
//	sharding  = mesh:str ndims:uvar (naxes:uvar axis:str*)*
//
// and a sharding attribute value (kind ir.AttrSharding) is its sharding.
// A module of several replicas then appends
//
//	replicas = "R" count:uvar
//
// so that older entries, which have neither, decode as before.

func hasShardings(m *ir.Module) bool {
	if len(m.Meshes) > 0 {
		return true
	}
	for _, f := range m.Funcs {
		if f.ArgShardings != nil || f.ResultShardings != nil {
			return true
		}
	}
	return false
}

// shardingsMark starts the section, so that other trailing bytes stay an error.
const shardingsMark = 'S'

func (e *encoder) shardings(m *ir.Module) {
	e.buf = append(e.buf, shardingsMark)
	e.uvar(uint64(len(m.Meshes)))
	for _, x := range m.Meshes {
		e.str(x.Name)
		e.pos(x.Pos)
		e.uvar(uint64(len(x.Axes)))
		for _, a := range x.Axes {
			e.str(a.Name)
			e.svar(a.Size)
		}
	}
	for _, f := range m.Funcs {
		e.shardingList(f.ArgShardings)
		e.shardingList(f.ResultShardings)
	}
}

func (e *encoder) shardingList(ss []*ir.Sharding) {
	if ss == nil {
		e.buf = append(e.buf, 0)
		return
	}
	e.buf = append(e.buf, 1)
	e.uvar(uint64(len(ss)))
	for _, s := range ss {
		if s == nil {
			e.buf = append(e.buf, 0)
			continue
		}
		e.buf = append(e.buf, 1)
		e.sharding(s)
	}
}

func (e *encoder) sharding(s *ir.Sharding) {
	e.str(s.Mesh)
	e.uvar(uint64(len(s.Dims)))
	for _, axes := range s.Dims {
		e.uvar(uint64(len(axes)))
		for _, a := range axes {
			e.str(a)
		}
	}
}

// shardings reads the section when the rest of the input starts with it.
func (d *decoder) shardings(m *ir.Module) {
	if len(d.buf) == 0 || d.buf[0] != shardingsMark {
		return
	}
	d.byte()
	n := d.count(3)
	for i := 0; i < n && d.err == nil; i++ {
		x := &ir.Mesh{Name: d.str(), Pos: d.pos()}
		x.Axes = make([]ir.MeshAxis, d.count(2))
		for j := range x.Axes {
			x.Axes[j] = ir.MeshAxis{Name: d.str(), Size: d.svar()}
		}
		m.Meshes = append(m.Meshes, x)
	}
	for _, f := range m.Funcs {
		f.ArgShardings = d.shardingList()
		f.ResultShardings = d.shardingList()
	}
}

func (d *decoder) shardingList() []*ir.Sharding {
	switch d.byte() {
	case 0:
		return nil
	case 1:
	default:
		d.fail("bad sharding list")
		return nil
	}
	out := make([]*ir.Sharding, d.count(1))
	for i := range out {
		switch d.byte() {
		case 0:
		case 1:
			out[i] = d.sharding()
		default:
			d.fail("bad sharding")
		}
	}
	return out
}

func (d *decoder) sharding() *ir.Sharding {
	s := &ir.Sharding{Mesh: d.str()}
	s.Dims = make([][]string, d.count(1))
	for i := range s.Dims {
		s.Dims[i] = make([]string, d.count(1))
		for j := range s.Dims[i] {
			s.Dims[i][j] = d.str()
		}
	}
	return s
}

// replicasMark starts the replica count's section.
const replicasMark = 'R'

func (e *encoder) replicas(m *ir.Module) {
	if m.Replicas > 1 {
		e.buf = append(e.buf, replicasMark)
		e.uvar(uint64(m.Replicas))
	}
}

func (d *decoder) replicas(m *ir.Module) {
	if len(d.buf) == 0 || d.buf[0] != replicasMark {
		return
	}
	d.byte()
	n := d.uvar()
	if n < 2 || n > 1<<20 {
		d.fail("replica count %d", n)
		return
	}
	m.Replicas = int64(n)
}
