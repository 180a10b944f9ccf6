package ir

// Uses is a function's use-list: for every value, the instructions whose
// operands read it, indexed by value ID (dense, so a lookup is a slice index).
// An instruction appears once per operand that reads the value, so Count
// agrees with Func.UseCounts; instructions inside regions are included.
//
// It is a snapshot: Func.Uses computes it in one walk, O(instructions +
// operands), and it stays right only through the changes made with it:
// Replace instead of Func.ReplaceUses, a Builder whose Uses field is set for
// new instructions, Add and Drop for instructions made or removed by hand.
// A pass that edits operands directly computes it again.
type Uses struct {
	users [][]*Instr
}

// Uses computes f's use-list.
func (f *Func) Uses() *Uses {
	u := &Uses{users: make([][]*Instr, f.NumValues())}
	f.Body.Walk(u.Add)
	return u
}

// Users lists the instructions reading v, in the order they were recorded
// (program order for a fresh use-list). The slice belongs to u: read it, do
// not keep it across changes.
func (u *Uses) Users(v *Value) []*Instr {
	if v.ID < len(u.users) {
		return u.users[v.ID]
	}
	return nil
}

// Count is the number of operands that read v.
func (u *Uses) Count(v *Value) int { return len(u.Users(v)) }

// Add records the operands of in, a new instruction.
func (u *Uses) Add(in *Instr) {
	for _, a := range in.Args {
		u.grow(a.ID)
		u.users[a.ID] = append(u.users[a.ID], in)
	}
}

// Drop forgets the operands of in, an instruction being removed (its
// regions are not walked: their operands are the region's own values).
func (u *Uses) Drop(in *Instr) {
	for _, a := range in.Args {
		u.forget(a, in)
	}
}

// forget removes one record of in reading v.
func (u *Uses) forget(v *Value, in *Instr) {
	list := u.Users(v)
	for i, x := range list {
		if x == in {
			u.users[v.ID] = append(list[:i], list[i+1:]...)
			return
		}
	}
}

// Replace makes every operand that reads old read new instead, as
// Func.ReplaceUses does, in time proportional to old's uses rather than to
// the function's size.
func (u *Uses) Replace(old, new *Value) {
	if old == new {
		return
	}
	list := u.Users(old)
	if len(list) == 0 {
		return
	}
	u.grow(new.ID)
	for _, in := range list {
		// An instruction listed twice finds nothing left to rewrite the second time.
		for i, a := range in.Args {
			if a == old {
				in.Args[i] = new
			}
		}
	}
	u.users[new.ID] = append(u.users[new.ID], list...)
	u.users[old.ID] = nil
}

func (u *Uses) grow(id int) {
	if id >= len(u.users) {
		u.users = append(u.users, make([][]*Instr, id+1-len(u.users))...)
	}
}
