//go:build !(linux && amd64)

package execstop

import (
	"fmt"
	"runtime"
)

func restrictSelf(pid, fd int) error {
	return fmt.Errorf("not supported on %s/%s", runtime.GOOS, runtime.GOARCH)
}
