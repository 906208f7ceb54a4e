package main

import (
	"os"

	"github.com/dshsim/dshsim/internal/landlockrun"
)

func main() {
	os.Exit(landlockrun.Main(os.Args[1:], os.Stdout, os.Stderr))
}
