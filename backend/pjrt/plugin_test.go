package pjrt

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// fakeAPI lays out a PJRT_Api header with n function slots in Go memory.
func fakeAPI(major, minor int32, n int) []uintptr {
	t := make([]uintptr, 5+n)
	t[0] = uintptr(apiHeaderSize + 8*n)
	ver := (*[2]int32)(unsafe.Pointer(&t[4]))
	ver[0], ver[1] = major, minor
	return t
}

func TestOtherMajorVersionRefused(t *testing.T) {
	api := fakeAPI(1, 0, 130)
	_, err := newPlugin("fake.so", uintptr(unsafe.Pointer(&api[0])))
	if err == nil || err.Error() != "PJRT API version 1.0, this client speaks 0.x" {
		t.Errorf("major 1: %v", err)
	}
}

func TestCallPastTableRefused(t *testing.T) {
	api := fakeAPI(0, 20, 3) // only the three error functions
	p, err := newPlugin("/x/old.so", uintptr(unsafe.Pointer(&api[0])))
	if err != nil {
		t.Fatal(err)
	}
	err = p.call(fnCompile, nil)
	want := "pjrt: PJRT_Compile: not provided by plugin old.so (API 0.20, 3 functions)"
	if err == nil || err.Error() != want {
		t.Errorf("call past the table: %v, want %s", err, want)
	}
}

// evilLibrary builds a shared object whose constructor creates the file
// $EVIL_MARK, exporting GetPjrtApi (returning no table) when export is set.
func evilLibrary(t *testing.T, dir, name string, export bool) string {
	t.Helper()
	src := "#include <fcntl.h>\n#include <stdlib.h>\n" +
		"__attribute__((constructor)) static void init(void) { const char *m = getenv(\"EVIL_MARK\"); if (m) creat(m, 0600); }\n"
	if export {
		src += "void *GetPjrtApi(void) { return 0; }\n"
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, name)
	if out, err := exec.Command("clang", "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	return so
}

// TestLoadChecksBeforeOpening: a file that is no PJRT plugin is refused
// before it is opened, so its constructor never runs; the file is checked
// in a copy in the private directory, and one writable by others, of
// another hash than $TPUCC_PJRT_PLUGIN_SHA256 or not a file (a directory,
// a FIFO) is refused.
func TestLoadChecksBeforeOpening(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("TPUCC_PJRT_CACHE", cache)
	mark := filepath.Join(dir, "constructor-ran")
	t.Setenv("EVIL_MARK", mark)
	evil := evilLibrary(t, dir, "evil.so", false)
	notSO := filepath.Join(dir, "plugin.so")
	os.WriteFile(notSO, []byte("not an ELF file"), 0o600)
	exe := filepath.Join(dir, "exe")
	os.WriteFile(exe+".c", []byte("int main(void) { return 0; }\n"), 0o600)
	if out, err := exec.Command("clang", "-no-pie", "-o", exe, exe+".c").CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	shared := filepath.Join(dir, "shared.so")
	os.WriteFile(shared, []byte("x"), 0o600)
	os.Chmod(shared, 0o666)
	fifo := filepath.Join(dir, "fifo.so") // opening it to copy it blocked Load forever
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{evil, "pjrt: plugin " + evil + ": exports no function GetPjrtApi: not a PJRT plugin"},
		{notSO, "pjrt: plugin " + notSO + ": not an ELF file"},
		{exe, "pjrt: plugin " + exe + ": an ELF file of type ET_EXEC, not a shared object"},
		{filepath.Join(dir, "missing.so"), "pjrt: plugin " + filepath.Join(dir, "missing.so") + ": no such file or directory"},
		{dir, "pjrt: plugin " + dir + ": not a regular file"},
		{fifo, "pjrt: plugin " + fifo + ": not a regular file"},
		{shared, "pjrt: plugin " + shared + ": writable by others (mode 0666)"},
	} {
		if _, err := Load(c.path); err == nil || err.Error() != c.want {
			t.Errorf("Load(%s) = %v,\nwant %s", c.path, err, c.want)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the constructor of a library with no GetPjrtApi ran")
	}
	copies, _ := filepath.Glob(filepath.Join(cache, "plugins", "*.so"))
	copies = slices.DeleteFunc(copies, func(c string) bool { return strings.Contains(c, "sha256-") })
	if len(copies) != 3 { // evil.so, plugin.so, exe
		t.Errorf("private copies %v, want 3", copies)
	}
	if st, err := os.Stat(filepath.Join(cache, "plugins")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("private directory: %v, %v; want mode 0700", st, err)
	}

	// A library that exports GetPjrtApi passes the checks: pinned to
	// another hash it is refused unopened, and opened it is refused for
	// its empty table.
	lib := evilLibrary(t, dir, "lib.so", true)
	t.Setenv(EnvPluginSHA256, strings.Repeat("0", 64))
	if _, err := Load(lib); err == nil || !strings.HasSuffix(err.Error(), ", $TPUCC_PJRT_PLUGIN_SHA256 wants "+strings.Repeat("0", 64)+": refusing to load it") {
		t.Errorf("Load of another hash than pinned: %v", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the constructor of a library of another hash than pinned ran")
	}
	t.Setenv(EnvPluginSHA256, "")
	if _, err := Load(lib); err == nil || err.Error() != "pjrt: plugin "+lib+": GetPjrtApi returned no table" {
		t.Errorf("Load of a library whose GetPjrtApi returns no table: %v", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the library that passed the checks was not opened: %v", err)
	}
}

// TestPrivateCopy: a plugin is copied once into the private directory, by
// its real path (a link to it shares the copy); once changed it is copied
// afresh and its older copy removed, with its content file.
func TestPrivateCopy(t *testing.T) {
	defer func(d time.Duration) { collectAfter = d }(collectAfter)
	collectAfter = 0
	dir := t.TempDir()
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Join(t.TempDir(), "cache"))
	src := filepath.Join(dir, "p.so")
	os.WriteFile(src, []byte("first"), 0o644)
	link := filepath.Join(dir, "link.so")
	os.Symlink(src, link)
	first, sum, err := privateCopy(src)
	if err != nil || sum != SHA256([]byte("first")) {
		t.Fatalf("privateCopy = %s, %s, %v", first, sum, err)
	}
	if got, _, err := privateCopy(link); err != nil || got != first {
		t.Errorf("privateCopy of a link = %s, %v; want the copy %s", got, err, first)
	}
	os.WriteFile(src, []byte("second, longer"), 0o644)
	second, sum, err := privateCopy(src)
	if err != nil || second == first || sum != SHA256([]byte("second, longer")) {
		t.Fatalf("privateCopy of the changed file = %s, %s, %v", second, sum, err)
	}
	if b, err := os.ReadFile(second); err != nil || string(b) != "second, longer" {
		t.Errorf("the copy holds %q, %v", b, err)
	}
	if left := privateFiles(t, filepath.Dir(first)); len(left) != 4 {
		t.Errorf("private directory holds %v, want the new copy, its hash, its source and its content", left)
	}
}

// privateFiles lists dir's file names.
func privateFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestPrivateCopiesShared: two sources with the same bytes (a plugin in
// two virtual environments) share one private file; once a source is gone
// its copy is collected at the next copy, and the content with it when no
// copy links it any more.
func TestPrivateCopiesShared(t *testing.T) {
	defer func(d time.Duration) { collectAfter = d }(collectAfter)
	collectAfter = 0
	dir := t.TempDir()
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Join(t.TempDir(), "cache"))
	a, b, c := filepath.Join(dir, "a.so"), filepath.Join(dir, "b.so"), filepath.Join(dir, "c.so")
	for _, p := range []string{a, b} {
		os.WriteFile(p, []byte("libtpu"), 0o644)
	}
	os.WriteFile(c, []byte("another plugin"), 0o644)
	ca, _, err := privateCopy(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, sum, err := privateCopy(b)
	if err != nil || ca == cb || sum != SHA256([]byte("libtpu")) {
		t.Fatalf("privateCopy(b) = %s, %s, %v (a's copy %s)", cb, sum, err, ca)
	}
	sa, _ := os.Stat(ca)
	sb, _ := os.Stat(cb)
	if !os.SameFile(sa, sb) {
		t.Errorf("the copies of two equal sources are two files, want one shared")
	}
	os.Remove(a)
	if _, _, err := privateCopy(c); err != nil {
		t.Fatal(err)
	}
	priv := filepath.Dir(ca)
	if _, err := os.Stat(ca); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy of a removed source survives (%v)", err)
	}
	if got, err := os.ReadFile(cb); err != nil || string(got) != "libtpu" {
		t.Errorf("b's copy holds %q, %v", got, err)
	}
	os.Remove(b)
	os.WriteFile(c, []byte("another plugin, changed"), 0o644)
	if _, _, err := privateCopy(c); err != nil {
		t.Fatal(err)
	}
	// What copies killed an hour ago left (a partial copy, its hash, its
	// link) is collected at the next copy; one being written now is not.
	hour := time.Now().Add(-time.Hour)
	for _, name := range []string{".copy-1", ".copy-1.sha256", ".copy-2.so", ".copy-3"} {
		os.WriteFile(filepath.Join(priv, name), []byte("partial"), 0o600)
		if name != ".copy-3" {
			os.Chtimes(filepath.Join(priv, name), hour, hour)
		}
	}
	old := filepath.Join(priv, "sha256-"+SHA256([]byte("another plugin, changed"))+".so")
	os.Chtimes(old, hour, hour) // the content of c's copy, unlinked by the next copy
	collectAfter = time.Minute
	os.WriteFile(c, []byte("another plugin, changed again"), 0o644)
	if _, _, err := privateCopy(c); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(priv, ".copy-3")); err != nil {
		t.Errorf("the copy being written was removed: %v", err)
	}
	left := privateFiles(t, priv)
	want := 4 // c's copy, its hash, its source, its content
	if len(left) != want || slices.Contains(left, "sha256-"+SHA256([]byte("libtpu"))+".so") {
		t.Errorf("private directory holds %v, want only c's %d files", left, want)
	}
}
