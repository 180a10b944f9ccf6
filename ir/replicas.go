package ir

// NumReplicas is the number of replicas m runs as: its declared count, or
// one when it declares none.
func (m *Module) NumReplicas() int64 {
	if m == nil || m.Replicas < 1 {
		return 1
	}
	return m.Replicas
}

// verifyReplicas checks the module's replica count (at least one) and,
// when it has several, that every collective's groups name processes the
// module has: replicas below the count, or, for the groups the spec takes
// over partitions (a channel on an op without cross_replica_and_partition),
// the module's single partition. Replicas do not combine with a mesh yet.
// A module that declares no count is left to the grid it runs on
// (cpu.RunGrid, the interpreter suite's run_parallel), as before.
func verifyReplicas(m *Module) []*Error {
	if m.Replicas < 0 || (m.Replicas == 0 && m.ReplicasPos.Known()) {
		return []*Error{Errorf(m.ReplicasPos, "module declares %d replicas; a module has at least 1", m.Replicas)}
	}
	if m.Replicas <= 1 {
		return nil
	}
	if len(m.Meshes) > 0 {
		return []*Error{Errorf(m.ReplicasPos, "module declares %d replicas and mesh @%s: replicas do not combine with a mesh", m.Replicas, m.Meshes[0].Name)}
	}
	var errs []*Error
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *Instr) {
			if e := checkReplicaIDs(in, m.Replicas); e != nil {
				errs = append(errs, e)
			}
		})
	}
	return errs
}

// checkReplicaIDs checks one collective's ids against r replicas of one
// partition, returning the first that names a process the module lacks.
func checkReplicaIDs(in *Instr, r int64) *Error {
	var groups [][]int64
	var channel int64
	global, replicaAndPartition := false, false
	switch a := in.Attr.(type) {
	case *PermuteAttr:
		groups, channel = a.Pairs, a.Channel
	case Collectiver:
		c := a.Collective()
		groups, channel, global = c.Groups, c.Channel, c.GlobalIDs
		replicaAndPartition = in.Op == OpAllReduce || in.Op == OpAllGather || in.Op == OpReduceScatter
	default:
		return nil
	}
	what, limit := "replica", r
	if channel > 0 && !global && !replicaAndPartition {
		what, limit = "partition", 1 // cross_partition: the ids are partitions
	}
	for _, g := range groups {
		for _, id := range g {
			if id >= limit {
				return Errorf(in.Pos, "%s names %s %d, but the module has %s", in.Op, what, id, plural(int(limit), what))
			}
		}
	}
	return nil
}
