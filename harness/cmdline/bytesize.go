package cmdline

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a flag value in bytes: a decimal integer, optionally followed
// by K, M or G (powers of 1024).
type ByteSize int64

// String is the value in the largest unit that divides it (1G, 512M, 4K, 1000).
func (b *ByteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Set parses s; a value that is not a non-negative integer with an optional
// suffix, or that overflows, is an error.
func (b *ByteSize) Set(s string) error {
	num, shift := s, 0
	switch {
	case strings.HasSuffix(s, "K"):
		num, shift = s[:len(s)-1], 10
	case strings.HasSuffix(s, "M"):
		num, shift = s[:len(s)-1], 20
	case strings.HasSuffix(s, "G"):
		num, shift = s[:len(s)-1], 30
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || strings.HasPrefix(num, "+") {
		return fmt.Errorf("want bytes: a number, optionally followed by K, M or G")
	}
	if n > (1<<63-1)>>shift {
		return fmt.Errorf("%s is too large", s)
	}
	*b = ByteSize(n << shift)
	return nil
}
