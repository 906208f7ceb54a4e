# dshsim: the commands a newcomer and CI run. `make help` lists them.
GO        ?= go
BIN       := bin
DSHSIM    := $(BIN)/dsh-sim
BENCHTIME ?= 300ms
SPAWN_ROUNDS ?= 300
CALL_ROUNDS ?= 5
FUZZTIME  ?= 20s
# Extra go test flags for make test (.ci/run's unprivileged pass: -short).
TESTFLAGS ?=
# Test binaries make test runs at once: twice the CPUs. Most of the suite
# waits (replays, child processes, qemu boots beside them), so go test's
# default of one per CPU left the CPUs half idle (docs/ci.md).
TEST_P ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
# Upstream's C Landlock runner on npm (a static musl binary), measured beside ours by bench-spawn-c.
C_RUNNER_PKG ?= @deepseek-ai/node-addon-landlock-run-linux-x64@0.1.1
# make oracle-diff: N generated scripts from SEED (START: the first case), through upstream and ours.
N         ?= 50
SEED      ?= 1
START     ?= 0
ORACLE_ROUNDS ?= 3
# Packages with benchmarks (found, so new ones join automatically).
BENCH_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' . | grep -v '/testdata/')))
# Packages whose code runs goroutines (pipelines, approvals, jobs, spawned
# processes, run_code's runtime, hooks, the session log, the harness's
# replays, oracle runs, escape corpus and bounded waits): make race runs
# their tests under the race detector (-short: the long corpora and the
# sweeps that replay every recording again are left out; the scenarios,
# testscript over the stack whose packages are here, too).
RACE_PKGS ?= ./pipeline/... ./sandbox/... ./tools/... ./hooks ./fsobserve ./spill ./stack ./escalation/... ./internal/waittest ./harness/...
# Test binaries make race runs at once. Those tests mostly wait (replays,
# child processes, bounded waits): on two cores, four at once took 5 min
# where two took 7.
RACE_P ?= 4
# staticcheck, pinned: make check runs it through go run (fetched once through
# the module proxy into the module cache); STATICCHECK names an installed one
# instead (.ci/run installs this version into its own directory).
STATICCHECK_VERSION = v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
# Go files gofmt must accept (fixtures under testdata included only if they are Go sources of the tree).
GOFILES    = $(shell find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*')

.PHONY: help sim test race check bench bench-spawn bench-spawn-c bench-oracle fuzz docs kernels oracle-diff build $(DSHSIM)

help:
	@echo 'make sim      regenerate snapshots/ with dsh-sim, then dsh-sim -check'
	@echo 'make test     go test -count=1 -p TEST_P ./...   (TEST_P: twice the CPUs; DSHSIM_UPDATE=1 make test updates every golden)'
	@echo 'make race     go test -race -short -timeout 40m over the packages that run goroutines (RACE_PKGS)'
	@echo 'make check    gofmt -l (must be empty), go vet ./..., staticcheck ./... ($(STATICCHECK_VERSION)), dsh-sim -check (effect files and docs page)'
	@echo 'make bench    benchmarks of the packages that have them (BENCHTIME=$(BENCHTIME))'
	@echo 'make bench-spawn  the spawn-ratio benchmark (bare, in-process, the stack, runners, bwrap), SPAWN_ROUNDS=$(SPAWN_ROUNDS) rounds;'
	@echo '                  DSHSIM_C_RUNNER=<path of upstream'"'"'s C landlock-run> adds its rows and stack-landlock/c-runner;'
	@echo '                  then a whole bash call and run_code'"'"'s first call beside upstream'"'"'s, CALL_ROUNDS=$(CALL_ROUNDS) rounds (needs DSHSIM_ORACLE)'
	@echo 'make bench-spawn-c  bench-spawn with DSHSIM_C_RUNNER = $(C_RUNNER_PKG) (npm pack into a temp dir, removed after)'
	@echo 'make oracle-diff  differential testing (DSHSIM_ORACLE): N=$(N) generated scripts of SEED=$(SEED) from START=$(START)'
	@echo '                  through upstream and dsh-replay, mismatches shrunk; ORACLE_DIFF_FLAGS=-keep keeps them in the tree'
	@echo 'make bench-oracle replay speed on transcripts/: ours and upstream'"'"'s suite side by side, ORACLE_ROUNDS=$(ORACLE_ROUNDS) rounds'
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
	$(GO) test -count=1 -timeout 40m -p $(TEST_P) $(TESTFLAGS) ./...

race:
	$(GO) test -race -short -count=1 -timeout 40m -p $(RACE_P) $(RACE_PKGS)

check: $(DSHSIM)
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt -l reports:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(DSHSIM) -check

bench:
	@if [ -z "$(BENCH_PKGS)" ]; then echo 'no benchmarks in the tree'; exit 1; fi
	$(GO) test -count=1 -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(addprefix ./,$(patsubst ./%,%,$(BENCH_PKGS)))

bench-spawn:
	$(GO) test -count=1 ./sandbox/chain -run '^$$' -bench SpawnRatios -benchtime $(SPAWN_ROUNDS)x -v
	$(GO) test -count=1 ./harness/callbench -run '^$$' -bench . -benchtime $(CALL_ROUNDS)x -v

# npm pack fetches the tarball (integrity-checked by npm) with its cache inside the temp dir; the trap removes both.
bench-spawn-c:
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	( cd "$$d" && npm_config_cache="$$d/npm-cache" npm pack --silent '$(C_RUNNER_PKG)' >/dev/null && tar -xzf ./*.tgz package/bin/landlock-run ); \
	DSHSIM_C_RUNNER="$$d/package/bin/landlock-run" $(MAKE) --no-print-directory bench-spawn

oracle-diff:
	$(GO) run ./harness/oracle/cmd/dsh-oracle diff -n $(N) -seed $(SEED) -start $(START) $(ORACLE_DIFF_FLAGS)

bench-oracle:
	$(GO) run ./harness/oracle/cmd/dsh-oracle bench -rounds $(ORACLE_ROUNDS)

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
