package landlock

import "strconv"

// Filesystem access rights, bit for bit as the kernel numbers them.
const (
	AccessExecute    uint64 = 1 << 0
	AccessWriteFile  uint64 = 1 << 1
	AccessReadFile   uint64 = 1 << 2
	AccessReadDir    uint64 = 1 << 3
	AccessRemoveDir  uint64 = 1 << 4
	AccessRemoveFile uint64 = 1 << 5
	AccessMakeChar   uint64 = 1 << 6
	AccessMakeDir    uint64 = 1 << 7
	AccessMakeReg    uint64 = 1 << 8
	AccessMakeSock   uint64 = 1 << 9
	AccessMakeFifo   uint64 = 1 << 10
	AccessMakeBlock  uint64 = 1 << 11
	AccessMakeSym    uint64 = 1 << 12
	AccessRefer      uint64 = 1 << 13
	AccessTruncate   uint64 = 1 << 14
	AccessIoctlDev   uint64 = 1 << 15
)

// Scopes (ABI 6): what a domain may not reach outside itself.
const (
	// ScopeAbstractUnixSocket keeps the domain from connecting to an abstract
	// unix socket that a process outside it listens on.
	ScopeAbstractUnixSocket uint64 = 1 << 0
	// ScopeSignal keeps the domain from signalling a process outside it.
	ScopeSignal uint64 = 1 << 1
	// ScopeABI is the first ABI with scopes.
	ScopeABI = 6
)

// MaxABI is the newest ABI whose filesystem rights the runner governs in full.
// ABI 6 and 7 add no filesystem rights and are handled as 5.
const MaxABI = 5

// abiRights is the filesystem rights each ABI adds, one row per ABI (index 0
// unused). ABI 4 adds only TCP rights, which the runner does not use.
var abiRights = [MaxABI + 1]uint64{
	0,
	AccessExecute | AccessWriteFile | AccessReadFile | AccessReadDir | AccessRemoveDir | AccessRemoveFile |
		AccessMakeChar | AccessMakeDir | AccessMakeReg | AccessMakeSock | AccessMakeFifo | AccessMakeBlock | AccessMakeSym,
	AccessRefer,
	AccessTruncate,
	0,
	AccessIoctlDev,
}

// Handled returns every filesystem right ABI abi governs (abi above [MaxABI]
// counts as MaxABI, below 1 governs nothing).
func Handled(abi int) uint64 {
	var h uint64
	for v := 1; v <= abi && v <= MaxABI; v++ {
		h |= abiRights[v]
	}
	return h
}

// ReadOnlyRights is what a --ro grant allows: read and execute, within handled.
func ReadOnlyRights(handled uint64) uint64 {
	return (AccessExecute | AccessReadFile | AccessReadDir) & handled
}

// ReadWriteRights is what a --rw grant allows: everything handled except
// making character and block device nodes. Upstream grants every handled
// right; ours keeps MAKE_CHAR and MAKE_BLOCK handled but never granted, because
// a root command could otherwise mknod the host's disk inside the workspace and
// write any file through it (the escape corpus's device-mknod-workspace got
// through). Ordinary work never needs a device node in a workspace.
func ReadWriteRights(handled uint64) uint64 {
	return handled &^ (AccessMakeChar | AccessMakeBlock)
}

// fileRights is the subset of rights the kernel accepts on a non-directory.
const fileRights = AccessExecute | AccessWriteFile | AccessReadFile | AccessTruncate | AccessIoctlDev

// ForFile reduces rights to the subset valid on a non-directory rule path
// (this is how --rw /dev/null works).
func ForFile(rights uint64) uint64 { return rights & fileRights }

// Partial reports whether ABI abi leaves part of the write promise ungoverned.
func Partial(abi int) bool { return abi < MaxABI }

// EffectiveABI is the ABI the runner uses: the kernel's, narrowed by a cap
// (0 = no cap) and by [MaxABI].
func EffectiveABI(kernel, abiCap int) int {
	abi := kernel
	if abiCap > 0 && abiCap < abi {
		abi = abiCap
	}
	if abi > MaxABI {
		abi = MaxABI
	}
	return abi
}

var rightNames = []string{"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
	"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer",
	"truncate", "ioctl_dev"}

// RightsString renders a rights mask as {name,...}; ∅ when empty.
func RightsString(r uint64) string {
	if r == 0 {
		return "∅"
	}
	s := "{"
	for i, n := range rightNames {
		if r&(1<<i) != 0 {
			if len(s) > 1 {
				s += ","
			}
			s += n
		}
	}
	if extra := r &^ (1<<len(rightNames) - 1); extra != 0 {
		if len(s) > 1 {
			s += ","
		}
		s += "0x" + strconv.FormatUint(extra, 16)
	}
	return s + "}"
}

// ScopeAvailable says whether a kernel of ABI kernel, capped at abiCap (0 =
// no cap), can scope signals and abstract unix sockets: a [*Fatal] naming
// the ABI in use when it cannot (a caller that asked for scoping must not
// run the command without it).
func ScopeAvailable(kernel, abiCap int) error {
	abi := kernel
	if abiCap > 0 && abiCap < abi {
		abi = abiCap
	}
	if abi < ScopeABI {
		return &Fatal{"--scope needs Landlock ABI " + strconv.Itoa(ScopeABI) + " (signal and abstract unix socket scoping); the ABI in use is " + strconv.Itoa(abi)}
	}
	return nil
}
