# dshsim: the commands a newcomer and CI run. `make help` lists them.
GO        ?= go
BIN       := bin
DSHSIM    := $(BIN)/dsh-sim
BENCHTIME ?= 300ms
FUZZTIME  ?= 20s
# Packages with benchmarks (found, so new ones join automatically).
BENCH_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' . | grep -v '/testdata/')))
# Go files gofmt must accept (fixtures under testdata included only if they are Go sources of the tree).
GOFILES    = $(shell find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*')

.PHONY: help sim test check bench bench-spawn fuzz docs kernels build $(DSHSIM)

help:
	@echo 'make sim      regenerate snapshots/ with dsh-sim, then dsh-sim -check'
	@echo 'make test     go test -count=1 ./...   (DSHSIM_UPDATE=1 make test updates every golden)'
	@echo 'make check    gofmt -l (must be empty), go vet ./..., dsh-sim -check (effect files and docs page)'
	@echo 'make bench    benchmarks of the packages that have them (BENCHTIME=$(BENCHTIME))'
	@echo 'make bench-spawn  the spawn-ratio benchmark (bare, in-process, runner, bwrap), 300 rounds'
	@echo 'make fuzz     every fuzz target for FUZZTIME=$(FUZZTIME) each'
	@echo 'make docs     write docs/tools.md with every include expanded to build/tools.md'
	@echo 'make kernels  the Landlock kernel matrix: capped ABIs here, real kernels under qemu (KERNELS_FLAGS=-layer1: no qemu)'

build:
	$(GO) build ./...

$(DSHSIM):
	$(GO) build -o $@ ./cmd/dsh-sim

sim: $(DSHSIM)
	$(DSHSIM)
	$(DSHSIM) -check

test:
	$(GO) test -count=1 ./...

check: $(DSHSIM)
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt -l reports:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	$(DSHSIM) -check

bench:
	@if [ -z "$(BENCH_PKGS)" ]; then echo 'no benchmarks in the tree'; exit 1; fi
	$(GO) test -count=1 -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(addprefix ./,$(patsubst ./%,%,$(BENCH_PKGS)))

bench-spawn:
	$(GO) test -count=1 ./sandbox/inproc -run '^$$' -bench SpawnRatios -benchtime 300x -v

fuzz:
	@set -e; files=$$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '/testdata/' | sort); \
	if [ -z "$$files" ]; then echo 'no fuzz targets in the tree'; exit 1; fi; \
	for f in $$files; do \
		for fn in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "$(GO) test -run '^$$' -fuzz '^$$fn\$$' -fuzztime $(FUZZTIME) ./$$(dirname $${f#./})"; \
			$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$(dirname $${f#./}); \
		done; \
	done

docs: $(DSHSIM)
	@mkdir -p build
	$(DSHSIM) -render docs/tools.md -o build/tools.md
	@echo 'wrote build/tools.md'

# DSHSIM_UPDATE=1 make kernels rewrites snapshots/kernel-matrix.txt (the one update switch);
# KERNELS_FLAGS=-layer1 skips the qemu boots.
kernels:
	$(GO) run ./cmd/kernel-matrix $(if $(filter 1,$(DSHSIM_UPDATE)),-update) $(KERNELS_FLAGS)
