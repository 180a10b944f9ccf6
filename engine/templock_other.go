//go:build !unix

package engine

import (
	"os"
	"time"
)

// Without flock, a temporary file is taken to be a killed writer's once it
// is older than staleTemp: a live writer renames its file within moments.
const staleTemp = time.Minute

func lockTemp(*os.File) error { return nil }

func sweepAbandoned(path string, mod time.Time) bool {
	return time.Since(mod) > staleTemp && os.Remove(path) == nil
}
