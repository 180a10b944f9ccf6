package llvm

// dedupeKernels keeps one function of each kernel body and points every
// step at it. The layers of a model generate the same kernels again (same
// shapes, same code under another name), and clang's time grows with the
// module: a 4-layer model's module held 96 kernels of which 26 differed.
// Two kernels are merged only when their LLVM text is identical but for the
// name, so a merged step runs exactly the code it generated.
func (p *plan) dedupeKernels() {
	stepKernels := p.kernelNames()
	kept := map[string]string{}   // body -> the name kept
	rename := map[string]string{} // dropped name -> kept name
	funcs := p.gen.m.Funcs[:0]
	for _, f := range p.gen.m.Funcs {
		name := f.Name()
		// Only whole kernels that steps call are candidates: a function
		// another one calls stays, so no call is left without its callee.
		if len(f.Blocks) == 0 || !stepKernels[name] {
			funcs = append(funcs, f)
			continue
		}
		f.SetName("kernel")
		body := f.LLString()
		f.SetName(name)
		if first, ok := kept[body]; ok {
			rename[name] = first
			continue
		}
		kept[body] = name
		p.gen.bodies[name] = body
		funcs = append(funcs, f)
	}
	p.gen.m.Funcs = funcs
	for i := range p.steps {
		if r, ok := rename[p.steps[i].name]; ok {
			p.steps[i].name = r
		}
	}
}

// kernelNames are the names of the kernels the plan's steps call.
func (p *plan) kernelNames() map[string]bool {
	names := map[string]bool{}
	for _, st := range p.steps {
		if st.kind == stepKernel {
			names[st.name] = true
		}
	}
	return names
}
