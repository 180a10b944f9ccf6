package pjrt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tpucc/tpucc/internal/regfile"
)

// EnvKeyFile names the file of the key that signs and verifies executable
// files (Artifact.Sign, Artifact.Verify). Unset, the key is
// $XDG_CONFIG_HOME/tpucc/pjrt.key (~/.config/tpucc/pjrt.key) when that
// file exists.
const EnvKeyFile = "TPUCC_PJRT_KEY_FILE"

// Bounds on a key file's size: at least 128 bits of key.
const (
	minKey = 16
	maxKey = 4096
)

// KeyFile is the path of the signing key: $TPUCC_PJRT_KEY_FILE when set,
// else pjrt.key in the user's tpucc configuration directory.
func KeyFile() (string, error) {
	if p := os.Getenv(EnvKeyFile); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "tpucc", "pjrt.key"), nil
}

// KeyError is a key file UserKey refuses, and why.
type KeyError struct {
	Path, Reason string
}

func (e *KeyError) Error() string { return "key file " + e.Path + ": " + e.Reason }

// UserKey reads the signing key: the bytes of KeyFile, as they are. It
// returns no key and no error when $TPUCC_PJRT_KEY_FILE is unset and the
// default file does not exist (executable files are then not signed nor
// checked). The file must be a regular file of this user's that no one
// else may read or write (mode 0600 or 0400), of 16 to 4096 bytes.
func UserKey() (key []byte, path string, err error) {
	path, err = KeyFile()
	if err != nil {
		if os.Getenv(EnvKeyFile) == "" {
			return nil, "", nil // no configuration directory: no key
		}
		return nil, "", err
	}
	// regfile: opening a FIFO named as the key would block forever.
	f, st, err := regfile.Open(path, regfile.Follow)
	switch {
	case errors.Is(err, fs.ErrNotExist) && os.Getenv(EnvKeyFile) == "":
		return nil, "", nil
	case errors.Is(err, regfile.ErrNotRegular):
		return nil, path, &KeyError{path, "not a regular file"}
	case err != nil:
		return nil, path, &KeyError{path, errors.Unwrap(err).Error()}
	}
	defer f.Close()
	if err := checkKey(st); err != nil {
		return nil, path, &KeyError{path, err.Error()}
	}
	key, err = io.ReadAll(io.LimitReader(f, maxKey+1))
	if err == nil && (len(key) < minKey || len(key) > maxKey) {
		err = fmt.Errorf("%d bytes, want %d to %d", len(key), minKey, maxKey)
	}
	if err != nil {
		return nil, path, &KeyError{path, err.Error()}
	}
	return key, path, nil
}

// checkKey refuses a key file (a regular file) that is not this user's or
// that others may read or write.
func checkKey(st os.FileInfo) error {
	if uid := int(st.Sys().(*syscall.Stat_t).Uid); uid != os.Getuid() {
		return fmt.Errorf("owned by user %d, not by this user (%d)", uid, os.Getuid())
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %#o lets others read or write it; want 0600 (chmod 600 it)", st.Mode().Perm())
	}
	return nil
}
