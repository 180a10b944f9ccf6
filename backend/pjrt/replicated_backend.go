package pjrt

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// replicatedExecutable runs a program of several replicas through the
// backend.Executable interface, as JAX runs a pmap: each argument's leading
// axis is split over the replicas (replica r on the client's device r) and
// the results are stacked along a new one (backend.SplitReplicas).
type replicatedExecutable struct {
	r      *Replicated
	c      *Client
	params []ir.Type
	name   string
}

// compileReplicated compiles p for r replicas on r devices of the client
// forDevices gives. The executable is not persisted: the key of the
// StableHLO (whose mhlo.num_replicas says r) would need the device list
// as well, as a sharded one's does.
func (b *Backend) compileReplicated(p *backend.Program, r int, params, results []ir.Type) (backend.Executable, error) {
	c, err := b.forDevices(int64(r), fmt.Sprintf("%d replicas", r))
	if err != nil {
		return nil, err
	}
	x, err := c.CompileReplicated(p.HLO, r, params, results)
	if err != nil {
		return nil, err
	}
	b.compiles.Add(1)
	return &replicatedExecutable{r: x, c: c, params: params, name: p.Entry.Name}, nil
}

func (e *replicatedExecutable) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	per, err := backend.SplitReplicas(args, e.params, e.r.Replicas())
	if err != nil {
		return nil, fmt.Errorf("pjrt: @%s: %v", e.name, err)
	}
	in := make([][]*Buffer, len(per))
	defer func() {
		for _, bs := range in {
			for _, b := range bs {
				b.Close()
			}
		}
	}()
	for r, as := range per {
		for _, a := range as {
			b, err := e.c.FromHostOn(r, a.Type(), a.Bytes())
			if err != nil {
				return nil, fmt.Errorf("pjrt: replica %d: %w", r, err)
			}
			in[r] = append(in[r], b)
		}
	}
	outs, err := e.r.Execute(in)
	if err != nil {
		return nil, err
	}
	res := make([][]*backend.Buffer, len(outs))
	for r, bs := range outs {
		for _, b := range bs {
			var v *backend.Buffer
			data, terr := b.ToHost()
			if terr == nil {
				v, terr = backend.View(b.Type(), data)
			}
			b.Close()
			if err == nil {
				err = terr
			}
			res[r] = append(res[r], v)
		}
	}
	if err != nil {
		return nil, err
	}
	return backend.StackReplicas(res)
}
