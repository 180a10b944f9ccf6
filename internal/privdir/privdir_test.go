//go:build unix

package privdir

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestEnsureCreatesAPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "cache")
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		info, err := os.Stat(d)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", d, info.Mode().Perm(), err)
		}
	}
	if err := Ensure(dir); err != nil { // an existing good directory
		t.Errorf("second Ensure: %v", err)
	}
}

func TestEnsureRefusesUnsafeDirectories(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	world := mk("world", 0o777)
	group := mk("group", 0o770)
	readable := mk("readable", 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(readable, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{world, world + " is writable by others (mode 0777)"},
		{group, group + " is writable by others (mode 0770)"},
		{link, link + " is a symbolic link"},
		{file, file + " is not a directory"},
		{readable, ""}, // readable by others is the user's choice; writable is not
	} {
		err := Ensure(tc.dir)
		if got := errText(err); got != tc.want {
			t.Errorf("Ensure(%s) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

func TestEnsureRefusesAnotherUsersDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	other := 65534 // nobody
	if os.Getuid() != 0 {
		dir, other = "/", 0 // root's, seen by another user
	} else if err := os.Chown(dir, other, other); err != nil {
		t.Skipf("cannot give the directory away: %v", err)
	}
	want := dir + " is owned by uid " + itoa(other) + ", not by this user (uid " + itoa(os.Getuid()) + ")"
	if got := errText(Ensure(dir)); got != want {
		t.Errorf("Ensure(%s) = %q, want %q", dir, got, want)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestEnsureOwnerOnly: the stricter rule refuses any access by group or
// others, and applies Ensure's rules first.
func TestEnsureOwnerOnly(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want string
	}{
		{0o700, ""},
		{0o755, " is open to others (mode 0755, want 0700: chmod 700 it)"},
		{0o750, " is open to others (mode 0750, want 0700: chmod 700 it)"},
		{0o701, " is open to others (mode 0701, want 0700: chmod 700 it)"},
		{0o777, " is writable by others (mode 0777)"},
	} {
		dir := filepath.Join(base, tc.mode.String())
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tc.mode); err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want != "" {
			want = dir + want
		}
		if got := errText(EnsureOwnerOnly(dir)); got != want {
			t.Errorf("EnsureOwnerOnly(%s) = %q, want %q", dir, got, want)
		}
	}
	created := filepath.Join(base, "new", "cache")
	if err := EnsureOwnerOnly(created); err != nil {
		t.Errorf("a created directory: %v", err)
	}
}
