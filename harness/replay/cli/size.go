package cli

import "github.com/dshsim/dshsim/harness/cmdline"

// byteSize is a flag value in bytes ([cmdline.ByteSize]).
type byteSize = cmdline.ByteSize
