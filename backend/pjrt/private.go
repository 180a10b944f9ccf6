package pjrt

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tpucc/tpucc/internal/regfile"
)

// EnvPluginSHA256 pins the SHA-256 of the plugin Load loads: when it is
// set, a plugin with another hash is refused before it is opened.
const EnvPluginSHA256 = "TPUCC_PJRT_PLUGIN_SHA256"

// maxPlugin bounds the size of a plugin file (libtpu is 0.7 GB).
const maxPlugin = 4 << 30

// cacheBase is $TPUCC_PJRT_CACHE, else $XDG_CACHE_HOME/tpucc-pjrt, else
// ~/.cache/tpucc-pjrt: the private directory of plugins.
func cacheBase() (string, error) {
	if base := os.Getenv("TPUCC_PJRT_CACHE"); base != "" {
		return base, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("pjrt: no cache directory for plugins: %v", err)
	}
	return filepath.Join(c, "tpucc-pjrt"), nil
}

// privateDir makes (mode 0700) and checks cacheBase/plugins.
func privateDir() (string, error) {
	base, err := cacheBase()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, d := range []string{base, dir} {
		if err := checkPrivate(d, true); err != nil {
			return "", fmt.Errorf("private plugin directory %w", err)
		}
	}
	return dir, nil
}

// privateCopy returns the copy of the plugin file at src in the private
// directory and the SHA-256 it had when it was copied. The copy is named
// by src's real path (links resolved) and identity (device, inode, size,
// modification time), so an unchanged source is not read again; a changed one is copied
// afresh and its path's older copies removed. src must be a regular file
// owned by this user or root and writable by no one else: anyone else who
// can write it decides what runs.
func privateCopy(src string) (path, sum string, err error) {
	// regfile: opening a FIFO named as the plugin would block forever.
	f, st, err := regfile.Open(src, regfile.Follow)
	switch {
	case errors.Is(err, regfile.ErrNotRegular):
		return "", "", errors.New("not a regular file")
	case err != nil:
		return "", "", errors.Unwrap(err)
	}
	defer f.Close()
	if err := checkSource(st); err != nil {
		return "", "", err
	}
	dir, err := privateDir()
	if err != nil {
		return "", "", err
	}
	abs, err := filepath.EvalSymlinks(src) // one copy for every link to a file
	if err != nil {
		return "", "", err
	}
	abs, _ = filepath.Abs(abs)
	sys := st.Sys().(*syscall.Stat_t)
	id := fmt.Sprintf("%d %d %d %d", sys.Dev, sys.Ino, st.Size(), st.ModTime().UnixNano())
	prefix := SHA256([]byte(abs))[:16] + "-"
	path = filepath.Join(dir, prefix+SHA256([]byte(id))[:16]+".so")
	if b, err := regfile.Read(path+".sha256", 64, regfile.NoFollow); err == nil && len(b) == 64 && checkPrivate(path, false) == nil {
		return path, string(b), nil
	}
	if sum, err = copyHashed(f, dir, path); err != nil {
		return "", "", err
	}
	// Best effort: the source's path is only a hint for collecting.
	os.WriteFile(path+".src", []byte(abs), 0o400)
	old, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	for _, o := range old {
		if o != path && o != path+".sha256" && o != path+".src" {
			os.Remove(o)
		}
	}
	collect(dir)
	return path, sum, nil
}

// collect removes the copies whose source file is gone, the content
// files (sha256-*.so) no copy links any more, and what a process killed
// while copying left (.copy-*: a partial copy of up to 0.7 GB, its hash).
// Without it every checkout or virtual environment that ever loaded libtpu
// would keep its 0.7 GB copy for ever. A copy from before sources were
// recorded (no .src) is removed too: it is copied again if its source is
// loaded. Removing a file another process has opened is harmless: the
// open file lives on; a copy being written is recent (its writes keep its
// time fresh).
func collect(dir string) {
	partial, _ := filepath.Glob(filepath.Join(dir, ".copy-*"))
	for _, p := range partial {
		if !recent(p) {
			os.Remove(p)
		}
	}
	copies, _ := filepath.Glob(filepath.Join(dir, "*-*.so"))
	for _, c := range copies {
		if strings.HasPrefix(filepath.Base(c), "sha256-") || recent(c) {
			continue
		}
		src, err := regfile.Read(c+".src", 1<<16, regfile.NoFollow)
		if err == nil {
			if _, err := os.Stat(string(src)); !errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		for _, ext := range []string{"", ".sha256", ".src"} {
			os.Remove(c + ext)
		}
	}
	contents, _ := filepath.Glob(filepath.Join(dir, "sha256-*.so"))
	for _, c := range contents {
		if st, err := os.Lstat(c); err == nil && st.Sys().(*syscall.Stat_t).Nlink == 1 && !recent(c) {
			os.Remove(c)
		}
	}
}

// recent: a file changed in the last minutes may belong to a copy another
// process is still making (its link or its .src not yet written).
func recent(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && time.Since(st.ModTime()) < collectAfter
}

// collectAfter is how old a private file must be before collect may
// remove it; a variable so that tests need not wait.
var collectAfter = 10 * time.Minute

// checkSource refuses a regular file that is not of a plausible size, owned
// by this user or root and writable by no one else (writableByOthers).
func checkSource(st os.FileInfo) error {
	if st.Size() > maxPlugin {
		return fmt.Errorf("%d bytes, more than a plugin's %d", st.Size(), int64(maxPlugin))
	}
	if uid := int(st.Sys().(*syscall.Stat_t).Uid); uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("owned by user %d, neither this user (%d) nor root", uid, os.Getuid())
	}
	if writableByOthers(st) {
		return fmt.Errorf("writable by others (mode %#o)", st.Mode().Perm())
	}
	return nil
}

// writableByOthers: others may write the file, or a group other than this
// user's primary group (with a private group per user, as Debian and
// Ubuntu make them, files are group-writable by default).
func writableByOthers(st os.FileInfo) bool {
	perm := st.Mode().Perm()
	gid := int(st.Sys().(*syscall.Stat_t).Gid)
	return perm&0o002 != 0 || (perm&0o020 != 0 && gid != os.Getgid())
}

// copyHashed copies f to path (mode 0500) through a temporary file in dir,
// and writes the SHA-256 of the bytes copied beside it (path.sha256).
func copyHashed(f *os.File, dir, path string) (string, error) {
	tmp, err := os.CreateTemp(dir, ".copy-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), f)
	if err == nil {
		err = tmp.Chmod(0o500)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying it into %s: %v", dir, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if err := os.WriteFile(tmp.Name()+".sha256", []byte(sum), 0o400); err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name() + ".sha256")
	content, err := shareContent(tmp.Name(), dir, sum)
	if err != nil {
		return "", err
	}
	// Linked under a temporary name and renamed: a concurrent copy of the
	// same plugin may be putting its own link at path.
	if err := os.Link(content, tmp.Name()+".so"); err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name() + ".so")
	if err := os.Rename(tmp.Name()+".so", path); err != nil {
		return "", err
	}
	return sum, os.Rename(tmp.Name()+".sha256", path+".sha256")
}

// shareContent stores the copied file tmp as dir/sha256-SUM.so, or drops
// it when a private file with those bytes is there already: the copies of
// one plugin reached through several checkouts or environments are hard
// links to one file instead of 0.7 GB each.
func shareContent(tmp, dir, sum string) (string, error) {
	content := filepath.Join(dir, "sha256-"+sum+".so")
	if checkPrivate(content, false) == nil {
		return content, nil
	}
	os.Remove(content)
	if err := os.Rename(tmp, content); err != nil {
		return "", err
	}
	return content, nil
}

// elfMachines are the ELF machines of the architectures Go runs on here.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkELF refuses a file that is not an ELF shared object for this
// machine exporting a function GetPjrtApi, read from its headers and
// dynamic symbol table before anything opens it: opening a library runs
// its constructors, so a file that is no plugin must never get that far.
func checkELF(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("not an ELF shared object (%v)", r)
		}
	}()
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	magic := make([]byte, len(elf.ELFMAG))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != elf.ELFMAG {
		return errors.New("not an ELF file")
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("not an ELF shared object (%v)", strings.TrimPrefix(err.Error(), "elf: "))
	}
	if f.Type != elf.ET_DYN {
		return fmt.Errorf("an ELF file of type %s, not a shared object", f.Type)
	}
	if want, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != want {
		return fmt.Errorf("an ELF shared object for %s, not for %s", f.Machine, want)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("no dynamic symbol table (%v): not a PJRT plugin", err)
	}
	for _, s := range syms {
		if s.Name == "GetPjrtApi" && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF &&
			elf.ST_BIND(s.Info) != elf.STB_LOCAL {
			return nil
		}
	}
	return errors.New("exports no function GetPjrtApi: not a PJRT plugin")
}
