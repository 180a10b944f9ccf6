package main

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
)

// runArtifact runs a compiled executable (tpucc build --emit=executable) on
// the device its manifest names. The manifest must match the plugin that
// loads it and the inputs must match its entry; nothing is written unless
// the whole run succeeds.
func runArtifact(e *env, p *parsed, name string, src []byte, o runOutput) error {
	for _, flag := range []string{"dim", "backend"} {
		if p.has(flag) {
			return usagef("--%s applies to .tir programs; %s is a compiled executable", flag, name)
		}
	}
	a, err := pjrt.ReadArtifact(bytes.NewReader(src))
	if err != nil {
		return fileErrorf(name, "%v", err)
	}
	if err := checkSigned(name, a); err != nil {
		return err
	}
	sig := a.Manifest.Entry
	if flag := p.value("entry", ""); flag != "" && flag != sig.Name && flag != "@"+sig.Name {
		return usagef("--entry %s: %s holds @%s only", flag, name, sig.Name)
	}
	f, err := artifactFunc(sig)
	if err != nil {
		return fileErrorf(name, "%v", err)
	}
	exe, err := loadArtifact(name, a, p.value("device", ""))
	if err != nil {
		return err
	}
	given, arrays, err := readInputs(f.Module, f, name, o.ins, nil)
	if err != nil {
		return err
	}
	args := make([]*backend.Buffer, len(f.Params))
	random := cpu.RandomInputsWithin(drawOnly(f, given), o.seed, sig.DrawLimits)
	for k, prm := range f.Params {
		switch {
		case arrays[k] != nil:
			if args[k], err = inputTensor(arrays[k], given[k].file, prm); err != nil {
				return err
			}
		case random[k] != nil:
			args[k] = random[k]
		default:
			return fileErrorf(name, "parameter %%%s (%s) is too large to draw at random", prm.Name, prm.Type)
		}
	}
	results, err := exe.Run(args)
	if err != nil {
		return fileErrorf(name, "%v", err)
	}
	return writeResults(e, o, results, args)
}

// checkSigned refuses an executable file that is not signed with the
// user's key when one is configured: the file is native code the plugin
// runs, so with a key only files built with it are run.
func checkSigned(name string, a *pjrt.Artifact) error {
	key, path, err := signingKey()
	if err != nil || key == nil {
		return err
	}
	switch err := a.Verify(key); {
	case errors.Is(err, pjrt.ErrUnsigned):
		return fileErrorf(name, "not signed, and the key %s is set: refusing to run it (rebuild it with tpucc build --emit=executable)", path)
	case err != nil:
		return fileErrorf(name, "%v in %s: refusing to run it", err, path)
	}
	return nil
}

// artifactFunc is a body-less function of the manifest's signature, for
// reading and drawing inputs by parameter name (arg0, arg1, ... when the
// manifest has no names).
func artifactFunc(sig pjrt.Signature) (*ir.Func, error) {
	params, results, err := sig.Types()
	if err != nil {
		return nil, err
	}
	f := &ir.Func{Name: sig.Name, Results: results}
	for i, t := range params {
		n := "arg" + strconv.Itoa(i)
		if sig.ParamNames != nil {
			n = sig.ParamNames[i]
		}
		f.Params = append(f.Params, &ir.Value{Type: t, Index: i, Name: n})
	}
	f.Module = &ir.Module{Funcs: []*ir.Func{f}}
	return f, nil
}

// loadArtifact opens the PJRT backend of the manifest's platform, which
// --device, when given, must name, and loads the executable on it.
func loadArtifact(name string, a *pjrt.Artifact, device string) (backend.Executable, error) {
	bname, err := pjrt.ForPlatform(a.Manifest.Platform)
	if err != nil {
		return nil, fileErrorf(name, "manifest platform: %v", err)
	}
	if device != "" {
		want, err := engine.DeviceBackend(device)
		if err != nil {
			return nil, usagef("--device: %v", err)
		}
		if want != bname {
			return nil, fileErrorf(name, "manifest platform %s runs on the %s backend, --device %s on %s", a.Manifest.Platform, bname, device, want)
		}
	}
	b, err := pjrt.Open(bname)
	if err != nil {
		return nil, fileErrorf(name, "%s: %v", bname, err)
	}
	exe, err := b.Load(a)
	if err != nil {
		return nil, fileErrorf(name, "%v", err)
	}
	return exe, nil
}
