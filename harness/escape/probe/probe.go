package probe

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exit codes of [Run].
const (
	// ExitOK means the operation succeeded.
	ExitOK = 0
	// ExitErrno means the operation failed with an errno (printed).
	ExitErrno = 1
	// ExitUsage means the arguments were wrong.
	ExitUsage = 2
)

// Payload is the bytes every writing operation writes.
const Payload = "escaped\n"

type op struct {
	args int
	help string
	run  func(a []string) error
}

var ops = map[string]op{
	"write":    {1, "PATH: open O_WRONLY|O_CREAT|O_TRUNC and write", func(a []string) error { return writeFile(a[0], os.O_WRONLY|os.O_CREATE|os.O_TRUNC) }},
	"append":   {1, "PATH: open O_WRONLY|O_APPEND and write", func(a []string) error { return writeFile(a[0], os.O_WRONLY|os.O_APPEND) }},
	"create":   {1, "PATH: open O_CREAT|O_EXCL and write", func(a []string) error { return writeFile(a[0], os.O_WRONLY|os.O_CREATE|os.O_EXCL) }},
	"truncate": {1, "PATH: truncate(2) to 0 bytes by path", func(a []string) error { return unix.Truncate(a[0], 0) }},
	"rename":   {2, "OLD NEW: rename(2), no copy fallback", func(a []string) error { return unix.Rename(a[0], a[1]) }},
	"link":     {2, "OLD NEW: link(2)", func(a []string) error { return unix.Link(a[0], a[1]) }},
	"symlink":  {2, "TARGET NEW: symlink(2)", func(a []string) error { return unix.Symlink(a[0], a[1]) }},
	"unlink":   {1, "PATH: unlink(2)", func(a []string) error { return unix.Unlink(a[0]) }},
	"mkdir":    {1, "PATH: mkdir(2)", func(a []string) error { return unix.Mkdir(a[0], 0o755) }},
	"rmdir":    {1, "PATH: rmdir(2)", func(a []string) error { return unix.Rmdir(a[0]) }},
	"mkfifo":   {1, "PATH: mknod(2) S_IFIFO", func(a []string) error { return unix.Mkfifo(a[0], 0o644) }},
	"mknod":    {1, "PATH: mknod(2) character device 1:3", func(a []string) error { return unix.Mknod(a[0], unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))) }},
	"chmod":    {1, "PATH: chmod(2) 0777", func(a []string) error { return unix.Chmod(a[0], 0o777) }},
	"chown":    {1, "PATH: chown(2) to uid/gid 4242", func(a []string) error { return unix.Chown(a[0], 4242, 4242) }},
	"utime": {1, "PATH: utimensat(2) mtime to the epoch", func(a []string) error {
		ts := []unix.Timespec{{Sec: 0}, {Sec: 0}}
		return unix.UtimesNano(a[0], ts)
	}},
	"setxattr":    {1, "PATH: setxattr(2) user.dshsim=1", func(a []string) error { return unix.Setxattr(a[0], "user.dshsim", []byte("1"), 0) }},
	"setxattr-as": {3, "PATH NAME VALUE: setxattr(2) NAME=VALUE (any namespace: user., trusted., security.)", func(a []string) error { return unix.Setxattr(a[0], a[1], []byte(a[2]), 0) }},
	"setflags":    {2, "PATH FLAGS: add inode flags with FS_IOC_SETFLAGS (chattr +FLAGS: i immutable, a append-only, d no-dump)", setFlags},
	"connect-abstract": {1, "NAME: connect(2) to the abstract unix socket @NAME", func(a []string) error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + a[0]})
	}},
	"ioctl":        {1, "DEVICE: open read-only and issue TCGETS (ENOTTY = reached the driver)", ioctlProbe},
	"tmpfile-link": {2, "DIR NEW: O_TMPFILE in DIR, then linkat it to NEW", tmpfileLink},
	"fd-write": {1, "FD: write to an already-open descriptor", func(a []string) error {
		n, err := strconv.Atoi(a[0])
		if err != nil {
			return fmt.Errorf("bad descriptor %q", a[0])
		}
		_, err = unix.Write(n, []byte(Payload))
		return err
	}},
	"proc-fds":     {1, "PID: open every /proc/PID/fd/N for append and write", procFds},
	"swap-race":    {3, "LINK INSIDE OUTSIDE: for 300ms swap symlink LINK between INSIDE and OUTSIDE while appending through it", swapRace},
	"handle-write": {2, "MOUNTDIR PATH: name_to_handle_at(PATH), then open_by_handle_at through the mount of MOUNTDIR for append, and write", handleWrite},
	"reexec":       {2, "N PATH: re-exec this program N times, then append to PATH", reexec},
	// Against another process's threads (the harness, standing in for the
	// agent that started the command): each tries every thread of PID and
	// succeeds when any attempt did.
	"agent-trace": {2, "PID ADDR: PTRACE_SEIZE every thread of PID, then PTRACE_POKEDATA the word at ADDR (hex) with the payload", agentTrace},
	"agent-vm":    {3, "PID ADDR LEN: process_vm_readv LEN bytes at ADDR of every thread (printed), then process_vm_writev the payload there", agentVM},
	"agent-mem":   {3, "PID ADDR LEN: read LEN bytes at ADDR through every /proc/PID/task/TID/mem (printed)", agentMem},
	"agent-fd":    {2, "PID FD: open /proc/PID/task/TID/fd/FD of every thread for writing and write the payload", agentFD},
	"tgkill":      {1, "PID: tgkill(2) SIGUSR1 to every thread of PID", tgkillAll},
}

// inodeFlags are the chattr letters setflags knows, as FS_IOC_SETFLAGS bits.
var inodeFlags = map[rune]int{'i': 0x10, 'a': 0x20, 'd': 0x40}

func setFlags(a []string) error {
	add := 0
	for _, c := range a[1] {
		f, ok := inodeFlags[c]
		if !ok {
			return fmt.Errorf("unknown flag %q (want i, a or d)", c)
		}
		add |= f
	}
	fd, err := unix.Open(a[0], unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	cur, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return fmt.Errorf("FS_IOC_GETFLAGS: %w", err)
	}
	return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, cur|add)
}

func writeFile(path string, flags int) error {
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(Payload)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func ioctlProbe(a []string) error {
	fd, err := unix.Open(a[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
		return nil // the driver answered: the ioctl was not blocked
	}
	return err
}

func tmpfileLink(a []string) error {
	fd, err := unix.Open(a[0], unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("open O_TMPFILE: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(Payload)); err != nil {
		return err
	}
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, a[1], unix.AT_SYMLINK_FOLLOW)
}

func procFds(a []string) error {
	dir := filepath.Join("/proc", a[0], "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var last error = unix.ENOENT
	for _, e := range ents {
		if err := writeFile(filepath.Join(dir, e.Name()), os.O_WRONLY|os.O_APPEND); err != nil {
			last = err
			continue
		}
		return nil
	}
	return last
}

func swapRace(a []string) error {
	link, targets := a[0], [2]string{a[1], a[2]}
	tmp := link + ".swap"
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			_ = unix.Unlink(tmp)
			if err := unix.Symlink(targets[i%2], tmp); err != nil {
				done <- err
				return
			}
			if err := unix.Rename(tmp, link); err != nil {
				done <- err
				return
			}
		}
	}()
	var wrote, tries int
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; tries++ {
		if writeFile(link, os.O_WRONLY|os.O_APPEND) == nil {
			wrote++
		}
	}
	close(stop)
	if err := <-done; err != nil {
		return fmt.Errorf("swapper: %w", err)
	}
	if wrote == 0 {
		return fmt.Errorf("no write of %d went through the link", tries)
	}
	return nil
}

func handleWrite(a []string) error {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, a[1], 0)
	if err != nil {
		return fmt.Errorf("name_to_handle_at: %w", err)
	}
	mfd, err := unix.Open(a[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open mount dir: %w", err)
	}
	defer unix.Close(mfd)
	fd, err := unix.OpenByHandleAt(mfd, h, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_by_handle_at: %w", err)
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(Payload))
	return err
}

func reexec(a []string) error {
	n, err := strconv.Atoi(a[0])
	if err != nil || n < 0 {
		return fmt.Errorf("bad count %q", a[0])
	}
	if n == 0 {
		return writeFile(a[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(self, []string{os.Args[0], "reexec", strconv.Itoa(n - 1), a[1]}, os.Environ())
}

// invocation is one escape-probe command line: the operation and its
// arguments, or a request for the help.
type invocation struct {
	op   string
	args []string
	help bool
}

// parseArgs parses and checks the command line; its error is a usage
// problem.
func parseArgs(args []string) (invocation, error) {
	if len(args) == 0 {
		return invocation{}, errors.New("no operation given")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		return invocation{help: true}, nil
	}
	o, ok := ops[args[0]]
	if !ok {
		return invocation{}, fmt.Errorf("unknown operation %q", args[0])
	}
	if len(args)-1 != o.args {
		return invocation{}, fmt.Errorf("%s takes %d argument(s), got %d (%s %s)", args[0], o.args, len(args)-1, args[0], o.help)
	}
	return invocation{op: args[0], args: args[1:]}, nil
}

// Run performs the operation named by args[0] on args[1:] and prints one line
// "<op>: ok" or "<op>: <ERRNO> (<text>)" to stdout. It returns [ExitOK],
// [ExitErrno] or [ExitUsage].
func Run(args []string, stdout, stderr io.Writer) int {
	inv, err := parseArgs(args)
	if err != nil {
		// The usage contract of every dshsim command (harness/cmdline, which
		// this leaf does not import): a bad argument is one line pointing at
		// -h, exit 2.
		fmt.Fprintf(stderr, "escape-probe: %v; run escape-probe -h for usage\n", err)
		return ExitUsage
	}
	if inv.help {
		usage(stdout)
		return ExitOK
	}
	if err := run(inv); err != nil {
		fmt.Fprintf(stdout, "%s: %s\n", inv.op, Describe(err))
		return ExitErrno
	}
	fmt.Fprintf(stdout, "%s: ok\n", inv.op)
	return ExitOK
}

// run performs the operation.
func run(inv invocation) error { return ops[inv.op].run(inv.args) }

// Describe renders err as "ERRNO (text)" when it wraps an errno, else its text.
func Describe(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if name := unix.ErrnoName(en); name != "" {
			return name + " (" + en.Error() + ")"
		}
	}
	return err.Error()
}

// Ops lists the operation names, for usage text and tests.
func Ops() []string {
	out := make([]string, 0, len(ops))
	for k := range ops {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: escape-probe OP ARGS...")
	fmt.Fprintln(w, "\nescape-probe performs one file operation and prints \"<op>: ok\" or \"<op>: <ERRNO> (<text>)\".")
	fmt.Fprintln(w, "Exit status: 0 ok; 1 the operation failed (errno printed); 2 usage error.\n\nOperations:")
	for _, k := range Ops() {
		fmt.Fprintf(w, "  %-16s %s\n", k, ops[k].help)
	}
}
