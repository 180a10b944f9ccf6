//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// replaceEntry compiles mlp at 32 rows into dir, then lets make put
// something else at the entry's path (data is the entry); it returns the path.
func replaceEntry(t *testing.T, dir string, make func(path string, data []byte) error) string {
	t.Helper()
	f, _ := fresh(t, dir)
	call(t, f, mlpProgram, mlpArgs(32, 1))
	path := entryFiles(t, dir)[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := make(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEntriesThatAreNotRegularFilesAreRefused(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "entry.tpucc")
	for _, tc := range []struct {
		name, why string
		make      func(path string, data []byte) error
	}{
		{"fifo", "it is not a regular file (mode prw-------)", func(p string, _ []byte) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink to /dev/zero", "it is a symbolic link", func(p string, _ []byte) error { return os.Symlink("/dev/zero", p) }},
		// A good entry outside the private directory is refused too.
		{"symlink to an entry", "it is a symbolic link", func(p string, data []byte) error {
			if err := os.WriteFile(elsewhere, data, 0o600); err != nil {
				return err
			}
			return os.Symlink(elsewhere, p)
		}},
		{"directory", "it is not a regular file (mode drwx------)", func(p string, _ []byte) error { return os.Mkdir(p, 0o700) }},
		{"directory with files", "it is not a regular file (mode drwx------)", func(p string, _ []byte) error {
			return os.MkdirAll(filepath.Join(p, "sub"), 0o700)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := cacheDir(t)
			path := replaceEntry(t, dir, tc.make)
			g, warn := fresh(t, dir)
			done := make(chan struct{})
			go func() {
				defer close(done)
				call(t, g, mlpProgram, mlpArgs(32, 2))
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // a guard against the old hang, not a timing
				t.Fatal("the lookup blocked")
			}
			want := "tpucc: warning: dropped corrupt cache entry " + path + " (" + tc.why + "); recompiling\n"
			if s := g.Stats(); s.Compiles != 1 || s.Corrupt != 1 || warn.String() != want {
				t.Errorf("stats %s, warning\n%q\nwant\n%q", s, warn, want)
			}
			if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
				t.Errorf("the entry was not rewritten as a file: %v", err)
			}
		})
	}
}

func TestUnsafeDirectoriesAreNotUsed(t *testing.T) {
	base := t.TempDir()
	world := filepath.Join(base, "world")
	if err := os.Mkdir(world, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(world, 0o777); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	// Readable by others: entries hold programs with their constants.
	readable := filepath.Join(base, "readable")
	if err := os.Mkdir(readable, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(readable, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ dir, why string }{
		{world, world + " is writable by others (mode 0777)"},
		{link, link + " is a symbolic link"},
		{readable, readable + " is open to others (mode 0755, want 0700: chmod 700 it)"},
	}
	if os.Getuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ dir, why string }{theirs, theirs + " is owned by uid 65534, not by this user (uid 0)"})
	}
	for _, tc := range cases {
		warn := &syncBuffer{}
		c := NewCache(tc.dir, CacheOptions{Warn: warn})
		f, _, _ := newFunc(t, mlpProgram, Options{Cache: c})
		call(t, f, mlpProgram, mlpArgs(32, 1))
		call(t, f, mlpProgram, mlpArgs(64, 1))
		want := "tpucc: warning: not using the persistent cache: " + tc.why + "; compiled programs are kept in memory only\n"
		if warn.String() != want || c.Dir() != "" || c.Stats().Writes != 0 || len(entryFiles(t, tc.dir)) != 0 {
			t.Errorf("%s: warning %q (want %q), dir %q, %+v", tc.dir, warn, want, c.Dir(), c.Stats())
		}
		if s := f.Stats(); s.Compiles != 2 {
			t.Errorf("%s: %s", tc.dir, s)
		}
	}
}

func TestTheDirectoryIsCreatedPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "cache")
	f, _ := fresh(t, dir)
	call(t, f, mlpProgram, mlpArgs(32, 1))
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 || len(entryFiles(t, dir)) != 1 {
		t.Fatalf("mode %v (%v), entries %v", info.Mode().Perm(), err, entryFiles(t, dir))
	}
	entry, err := os.Stat(entryFiles(t, dir)[0])
	if err != nil || entry.Mode().Perm() != 0o600 {
		t.Errorf("entry mode %v (%v)", entry.Mode().Perm(), err)
	}
}

// temp writes a temporary file of n bytes, modified age ago.
func temp(t *testing.T, dir, name string, n int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStaleTemporariesAreSwept(t *testing.T) {
	// A writer killed between creating its temporary file and renaming it
	// leaves the file behind, unlocked; the next Cache to open the
	// directory removes every such file, however young, and leaves those
	// a live writer holds locked, however old.
	dir := cacheDir(t)
	var dead []string
	for i := range 3 {
		dead = append(dead, temp(t, dir, ".tmp-"+strconv.Itoa(100+i), 1000, 2*time.Minute))
	}
	dead = append(dead, temp(t, dir, ".tmp-200", 1000, 0))
	live := temp(t, dir, ".tmp-201", 1000, 2*time.Minute)
	hold(t, live)
	c := NewCache(dir, CacheOptions{})
	f, _, _ := newFunc(t, mlpProgram, Options{Cache: c})
	call(t, f, mlpProgram, mlpArgs(32, 1))
	for _, p := range dead {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was not swept (%v)", p, err)
		}
	}
	if _, err := os.Lstat(live); err != nil || c.Stats().Swept != 4 {
		t.Errorf("a live writer's temporary: %v; %+v", err, c.Stats())
	}
	// A temporary this Cache is writing is its own, locked or not.
	mine := temp(t, dir, ".tmp-300", 10, time.Hour)
	c.ours[mine] = true
	c.scan()
	if _, err := os.Lstat(mine); err != nil {
		t.Errorf("our own temporary was swept: %v", err)
	}
}

func TestTemporariesCountInTheSizeBudget(t *testing.T) {
	dir := cacheDir(t)
	f, _ := fresh(t, dir)
	call(t, f, mlpProgram, mlpArgs(32, 1))
	old := entryFiles(t, dir)[0]
	at := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, at, at); err != nil {
		t.Fatal(err)
	}
	// Another writer's temporary fills the budget: the next write evicts
	// the old entry to make room, and leaves the temporary alone.
	const budget = 100_000
	young := temp(t, dir, ".tmp-1", budget, 0)
	hold(t, young)
	c := NewCache(dir, CacheOptions{MaxBytes: budget})
	g, _, _ := newFunc(t, mlpProgram, Options{Cache: c, NoAutoDynamic: true})
	call(t, g, mlpProgram, mlpArgs(8, 1))
	files := entryFiles(t, dir)
	if len(files) != 1 || files[0] == old || c.Stats().Evictions != 1 {
		t.Errorf("entries %v (old %s), %+v", files, old, c.Stats())
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("young temporary: %v", err)
	}
	if strings.Contains(strings.Join(files, " "), ".tmp-") {
		t.Errorf("a temporary counted as an entry: %v", files)
	}
}
