package landlock

import (
	"strings"
	"syscall"
)

// Execvp replaces the process with argv, searching PATH like execvp(3) (see
// [searchPath]); a file without a recognised format (ENOEXEC) is run by
// /bin/sh. The environment is passed unchanged. It returns only on failure.
func Execvp(argv []string) error {
	env := syscall.Environ()
	return searchPath(argv[0], syscall.Getenv, func(file string) error { return execve(file, argv, env) })
}

// searchPath tries exec on the file name names, the way execvp(3) searches:
// an empty name is ENOENT; a name containing "/" is used as is; otherwise
// each entry of PATH from getenv is tried (default "/bin:/usr/bin" when PATH
// is unset; an empty PATH has no entries, and an empty entry is "."),
// continuing past ENOENT, ENOTDIR, ESTALE, ENODEV and ETIMEDOUT and past
// EACCES, which is remembered and reported if nothing else worked; any other
// error stops the search. exec returns only on failure.
func searchPath(name string, getenv func(string) (string, bool), exec func(file string) error) error {
	if name == "" {
		return syscall.ENOENT
	}
	if strings.Contains(name, "/") {
		return exec(name)
	}
	path, ok := getenv("PATH")
	if !ok {
		path = "/bin:/usr/bin"
	}
	if path == "" {
		return syscall.ENOENT
	}
	sawEACCES := false
	for dir := range strings.SplitSeq(path, ":") {
		if dir == "" {
			dir = "."
		}
		err := exec(dir + "/" + name)
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
