package backend

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// A program of several replicas (ir.Module.Replicas, StableHLO's
// mhlo.num_replicas) is run as JAX runs a pmap: each argument has a leading
// axis of the replicas, replica r taking slice r, and each result is the
// replicas' results stacked along a new leading axis. The entry's types are
// one replica's.

// Replicas is how many replicas p runs as.
func Replicas(p *Program) int { return int(p.Module.NumReplicas()) }

// ReplicaType is t with a leading axis of r: what a program of r replicas
// takes or gives for one replica's t.
func ReplicaType(t ir.Type, r int) ir.Type {
	return t.WithShape(append([]ir.Dim{ir.D(int64(r))}, t.Shape...))
}

// SplitReplicas splits each argument's leading axis over r replicas:
// out[k][i] is argument i's slice k, a view of its storage. params are one
// replica's types; an argument of another dtype or shape is an error
// naming it.
func SplitReplicas(args []*Buffer, params []ir.Type, r int) ([][]*Buffer, error) {
	if len(args) != len(params) {
		return nil, fmt.Errorf("%d arguments for %d parameters", len(args), len(params))
	}
	out := make([][]*Buffer, r)
	for k := range out {
		out[k] = make([]*Buffer, len(args))
	}
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("argument %d is nil", i)
		}
		want := ReplicaType(params[i], r)
		if t := a.Type(); t.DType != want.DType || !t.SameShape(want) {
			return nil, fmt.Errorf("argument %d is %s, but a program of %d replicas takes %s (%s for each replica)", i, t, r, want, params[i].WithShape(params[i].Shape))
		}
		data := a.Bytes()
		n := len(data) / r
		for k := range out {
			v, err := View(params[i].WithShape(params[i].Shape), data[k*n:(k+1)*n:(k+1)*n])
			if err != nil {
				return nil, fmt.Errorf("argument %d, replica %d: %v", i, k, err)
			}
			out[k][i] = v
		}
	}
	return out, nil
}

// StackReplicas stacks the replicas' results: result i is every replica's
// result i along a new leading axis.
func StackReplicas(res [][]*Buffer) ([]*Buffer, error) {
	if len(res) == 0 {
		return nil, fmt.Errorf("no replicas")
	}
	out := make([]*Buffer, len(res[0]))
	for i := range out {
		t := res[0][i].Type()
		t = t.WithShape(t.Shape)
		b := New(ReplicaType(t, len(res)))
		dst := b.Bytes()
		n := len(dst) / len(res)
		for k, rs := range res {
			if len(rs) != len(out) || !rs[i].Type().SameShape(t) || rs[i].Type().DType != t.DType {
				return nil, fmt.Errorf("replica %d's results differ from replica 0's", k)
			}
			copy(dst[k*n:(k+1)*n], rs[i].Bytes())
		}
		out[i] = b
	}
	return out, nil
}
