package landlock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Execvp replaces the process with argv, searching PATH like execvp(3): a name
// containing "/" is used as is; otherwise each PATH entry is tried (default
// "/bin:/usr/bin"), EACCES is remembered and reported if nothing else worked,
// and a file without a recognised format (ENOEXEC) is run by /bin/sh. The
// environment is passed unchanged. It returns only on failure.
func Execvp(argv []string) error {
	env := os.Environ()
	name := argv[0]
	if name == "" {
		return syscall.ENOENT
	}
	if strings.Contains(name, "/") {
		return execve(name, argv, env)
	}
	path, ok := os.LookupEnv("PATH")
	if !ok {
		path = "/bin:/usr/bin"
	}
	sawEACCES := false
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		err := execve(dir+"/"+name, argv, env)
		switch err {
		case syscall.EACCES:
			sawEACCES = true
		case syscall.ENOENT, syscall.ENOTDIR, syscall.ESTALE, syscall.ENODEV, syscall.ETIMEDOUT:
		default:
			return err
		}
	}
	if sawEACCES {
		return syscall.EACCES
	}
	return syscall.ENOENT
}

func execve(file string, argv, env []string) error {
	err := syscall.Exec(file, argv, env)
	if err == syscall.ENOEXEC {
		return syscall.Exec("/bin/sh", append([]string{"/bin/sh", file}, argv[1:]...), env)
	}
	return err
}
