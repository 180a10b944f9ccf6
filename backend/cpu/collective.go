package cpu

import (
	"fmt"
	"sync"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// A process grid runs one program per process, replicas × partitions of
// them, each on its own goroutine. A collective is a rendezvous of its
// process group: every member deposits its operands under the group and
// the collective's sequence number in the process, waits until the whole
// group has, and computes its own results from the group's operands in the
// group's order, so the results never depend on which goroutine came first.
// A program run alone (Run, Eval) is the 1 × 1 grid.

// RunGrid runs fs[r][p] of m on process (replica r, partition p) with
// args[r][p], all concurrently, and returns each process's results. Every
// row of fs has the same length (the partitions). An error of a process is
// returned with the process named; the others stop at their next
// collective. Which error that is does not depend on timing: the
// first, in process order, of the processes that failed on their own.
func RunGrid(m *ir.Module, fs [][]*ir.Func, args [][][]*backend.Buffer) ([][][]*backend.Buffer, error) {
	if len(fs) == 0 || len(fs[0]) == 0 || len(args) != len(fs) {
		return nil, fmt.Errorf("cpu.RunGrid: %d rows of programs and %d of arguments: want as many, at least one", len(fs), len(args))
	}
	// Every process must start: one left out would keep its group waiting.
	for r := range fs {
		if len(fs[r]) != len(fs[0]) || len(args[r]) != len(fs[0]) {
			return nil, fmt.Errorf("cpu.RunGrid: replica %d has %d programs and %d argument lists, want %d", r, len(fs[r]), len(args[r]), len(fs[0]))
		}
	}
	g := &grid{replicas: len(fs), partitions: len(fs[0]), slots: map[slotKey]*slot{}, waiting: map[int]*slot{}}
	g.cond = sync.NewCond(&g.mu)
	g.ended = make([]bool, g.replicas*g.partitions)
	g.errs = make([]error, g.replicas*g.partitions)
	out := make([][][]*backend.Buffer, len(fs))
	var wg sync.WaitGroup
	for r := range fs {
		out[r] = make([][]*backend.Buffer, g.partitions)
		for p := range fs[r] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pr := &process{g: g, replica: r, partition: p}
				res, err := run(m, fs[r][p], args[r][p], pr)
				g.end(pr, err)
				out[r][p] = res
			}()
		}
	}
	wg.Wait()
	for _, err := range g.errs { // the first process's own error, whichever failed first
		if err != nil {
			return nil, err
		}
	}
	if g.err != nil {
		return nil, g.err
	}
	return out, nil
}

// grid is the shared state of one RunGrid.
type grid struct {
	replicas, partitions int
	mu                   sync.Mutex
	cond                 *sync.Cond
	slots                map[slotKey]*slot
	ended                []bool        // the process's program returned or failed
	err                  error         // the first process error
	errs                 []error       // each process's own error (not "stopped" by another's)
	waiting              map[int]*slot // the slot each waiting process waits in
	deadlock             bool
}

// slotKey names one collective of one group: the sequence number of the
// collective in each member and the group's first process.
type slotKey struct{ seq, first int }

type slot struct {
	op   ir.Op
	vals map[int][]*backend.Buffer // by process id
	need int                       // the group's size
	left int                       // members that have not read the slot yet
}

// deadlocked reports whether every process still running waits in a slot
// that lacks a member: processes that run different collectives (another
// program, another group) would otherwise wait for each other forever.
func (g *grid) deadlocked() bool {
	for id, ended := range g.ended {
		s := g.waiting[id]
		if !ended && (s == nil || len(s.vals) >= s.need) {
			return false
		}
	}
	return true
}

// process is one process of a grid; nil g is a program run alone.
type process struct {
	g                  *grid
	replica, partition int
	seq                int  // collectives this process has run
	stopped            bool // it stopped because another process failed
}

func (pr *process) id() int { return pr.replica*pr.partitions() + pr.partition }

func (pr *process) partitions() int {
	if pr.g == nil {
		return 1
	}
	return pr.g.partitions
}

func (pr *process) String() string {
	return fmt.Sprintf("process (replica %d, partition %d)", pr.replica, pr.partition)
}

// end records that pr's program finished, with err when it failed.
func (g *grid) end(pr *process, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended[pr.id()] = true
	if err == nil {
		g.cond.Broadcast()
		return
	}
	err = fmt.Errorf("%s: %w", pr, err)
	if g.err == nil {
		g.err = err
	}
	if !pr.stopped {
		g.errs[pr.id()] = err
	}
	g.cond.Broadcast()
}

// exchange deposits pr's operands for its collective in of group and
// returns every member's, once all have come.
func (pr *process) exchange(in *ir.Instr, group []int, vals []*backend.Buffer) (map[int][]*backend.Buffer, error) {
	pr.seq++
	if pr.g == nil {
		return map[int][]*backend.Buffer{0: vals}, nil
	}
	g := pr.g
	g.mu.Lock()
	defer g.mu.Unlock()
	key := slotKey{pr.seq, group[0]}
	s := g.slots[key]
	if s == nil {
		s = &slot{op: in.Op, vals: map[int][]*backend.Buffer{}, left: len(group)}
		g.slots[key] = s
	}
	if s.op != in.Op {
		return nil, fmt.Errorf("%s reached %s where another process of its group ran %s", pr, in.Op, s.op)
	}
	s.vals[pr.id()] = vals
	s.need = len(group)
	g.cond.Broadcast()
	g.waiting[pr.id()] = s
	defer delete(g.waiting, pr.id())
	for len(s.vals) < len(group) {
		// A deadlock is every waiting process's own error (not one
		// process's, the others stopped), so the error RunGrid returns
		// does not depend on which noticed it first.
		if g.deadlock {
			return nil, pr.deadlockError(in)
		}
		if g.err != nil {
			pr.stopped = true
			return nil, fmt.Errorf("stopped: %v", g.err)
		}
		for _, m := range group {
			if g.ended[m] && s.vals[m] == nil {
				return nil, fmt.Errorf("process (replica %d, partition %d) ended without reaching this %s", m/g.partitions, m%g.partitions, in.Op)
			}
		}
		if g.deadlocked() {
			g.deadlock = true
			g.cond.Broadcast()
			return nil, pr.deadlockError(in)
		}
		g.cond.Wait()
	}
	if s.left--; s.left == 0 {
		delete(g.slots, key)
	}
	return s.vals, nil
}

func (pr *process) deadlockError(in *ir.Instr) error {
	return fmt.Errorf("every running process waits in a collective that a process of its group does not reach (%s: sequence %d)", in.Op, pr.seq)
}

// size is the grid's replicas and partitions.
func (pr *process) size() (replicas, partitions int) {
	if pr.g == nil {
		return 1, 1
	}
	return pr.g.replicas, pr.g.partitions
}
