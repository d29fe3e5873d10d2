# Quita's developer and CI entry points. `make` alone lists them.
#
# Tools (wire, moq, staticcheck) are pinned in go.mod with `go get -tool` and
# run with `go tool`, so nothing needs installing beyond Go itself.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# -race needs cgo.
export CGO_ENABLED := 1

GO ?= go
FUZZTIME ?= 20s
ARTIFACTS := artifacts

.PHONY: help services run build test chaos bench fuzz generate lint check pixsim-certs \
	cluster cluster-down cluster-status cluster-smoke cluster-bench chaos-cluster seed-large

help: ## List the targets
	@echo 'Quita make targets:'
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo 'Variables: FUZZTIME (default $(FUZZTIME)).'

services: ## Start PostgreSQL and Redis on localhost if they are not up
	@bash scripts/services.sh

run: ## Serve with the embedded defaults (SQLite, in-process Redis stand-in)
	$(GO) run ./cmd/quitad

# A throwaway CA and the certificates of a local quitad <-> pixsim setup
# with mutual TLS both ways (docs/bcbpix.md, "Running pixsim with mTLS").
pixsim-certs: ## Write test certificates for pixsim and quitad to artifacts/pixsim-certs
	$(GO) run ./cmd/pixsim certs -dir $(ARTIFACTS)/pixsim-certs

build: ## Build bin/quitad
	$(GO) build -o bin/quitad ./cmd/quitad

# -v is only for counting: the console hides the RUN/PASS chatter, the full
# log stays in $(ARTIFACTS)/test.log, and the last line is the plain
# "N passed, N failed, N skipped" tally.
test: services ## Run every test with -race against the local services
	@mkdir -p $(ARTIFACTS)
	@set +e; \
	$(GO) test -race -count=1 -timeout 25m -v ./... 2>&1 \
		| tee $(ARTIFACTS)/test.log \
		| grep --line-buffered -vE '^ *(=== (RUN|PAUSE|CONT|NAME)|--- PASS: )'; \
	status=$${PIPESTATUS[0]}; \
	set -e; \
	awk ' \
		/^ *--- PASS: / { pass++ } \
		/^ *--- FAIL: / { fail++ } \
		/^ *--- SKIP: / { skip++ } \
		/^ok  \t/ { okp++ } \
		/^FAIL\t/ { split($$0, f, /[ \t]/); badp = badp " " f[2]; nbad++ } \
		/\[no test files\]$$/ { nop++ } \
		END { \
			printf "\n== packages: %d ok, %d failed, %d without tests\n", okp, nbad, nop; \
			if (nbad) printf "== failed packages:%s\n", badp; \
			printf "== full log: $(ARTIFACTS)/test.log\n"; \
			printf "test: %d passed, %d failed, %d skipped\n", pass, fail, skip; \
		}' $(ARTIFACTS)/test.log; \
	exit $$status

# The fault-injection run (e2e/chaos, build tag chaos): quitad processes on
# PostgreSQL + Redis are killed, cut off and flushed under load, then the
# invariants are checked. About 4 minutes; CHAOS_SEED replays a schedule.
# quitad's logs stay in $(ARTIFACTS)/chaos.
chaos: services ## Fault-injection run (CHAOS_SEED, CHAOS_DURATION; see e2e/chaos)
	@mkdir -p $(ARTIFACTS)/chaos
	CHAOS_LOG_DIR=$(CURDIR)/$(ARTIFACTS)/chaos $(GO) test -tags chaos -count=1 -v -timeout 10m -run '^TestChaos$$' ./e2e/chaos

# The local highly available cluster (docs/cluster.md): etcd, three
# PostgreSQL members under Patroni, HAProxy, Redis with Sentinel and three
# quitad processes, on their own loopback ports and data under
# $(QUITA_CLUSTER_DIR) (default .cluster). Nothing touches the machine's
# own PostgreSQL (5432) or Redis (6379).
cluster: ## Start the local HA cluster (Patroni, HAProxy, Sentinel, 3 quitad)
	@bash scripts/cluster/up.sh

cluster-down: ## Stop the HA cluster by its recorded PIDs (CLUSTER_WIPE=1 deletes its data)
	@bash scripts/cluster/down.sh $(if $(CLUSTER_WIPE),--wipe)

cluster-status: ## The HA cluster's primary, replication lag and Sentinel master
	@bash scripts/cluster/status.sh

cluster-smoke: ## Write, read and create a charge through the HA cluster
	@bash scripts/cluster/smoke.sh

cluster-bench: cluster ## Create rate with 3 and 1 quitad through HAProxy; list rate on replicas vs the primary
	@bash scripts/cluster/bench.sh

# The chaos suite's cluster mode (TestChaosCluster): starts or completes
# the cluster, then kills its Postgres primary, a quitad and its Redis
# master under load through HAProxy, restarting each, and checks the
# invariants (scripts/cluster/chaos.sh; CHAOS_DURATION, default 180s).
chaos-cluster: cluster ## Fault injection on the HA cluster (runs make cluster first)
	@bash scripts/cluster/chaos.sh

bench: ## Run the benchmarks (and cmd/quitabench when it exists)
	@bash scripts/services.sh --bench
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./...
	@if [[ -d cmd/quitabench ]]; then $(GO) run ./cmd/quitabench; \
	else echo 'bench: no cmd/quitabench yet, skipped'; fi

SEED_CHARGES ?= 10000000
seed-large: ## Fill a new Postgres database with SEED_CHARGES charges of history (quitabench -seed)
	@bash scripts/services.sh
	$(GO) run ./cmd/quitabench -seed -seed-charges $(SEED_CHARGES)

# go test -fuzz takes one package and one target at a time, hence the loop.
fuzz: ## Run each Fuzz* test for FUZZTIME
	@found=0; \
	while IFS= read -r file; do \
		dir=$$(dirname "$$file"); \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
			found=$$((found + 1)); \
			echo "== fuzz $$dir $$name for $(FUZZTIME)"; \
			$(GO) test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) "./$$dir"; \
		done; \
	done < <(git ls-files --cached --others --exclude-standard -- '*_test.go' \
		| grep -v '/testdata/' | xargs -r grep -lE '^func Fuzz[A-Za-z0-9_]*\(' | sort); \
	echo "fuzz: $$found target(s) fuzzed for $(FUZZTIME) each"

generate: ## Regenerate wire_gen.go and mocks (go generate)
	$(GO) generate ./...

# filecheck: Go files over 400 lines without a `// long-file: <reason>`
# comment, and comments or docs that narrate history (issue numbers, dates,
# work sessions) instead of stating what holds; scripts/filecheck.allow
# lists files it skips for now.
lint: ## gofmt, go vet, layer check, file check, staticcheck, OpenAPI document check
	@unformatted=$$(gofmt -l .); \
	if [[ -n $$unformatted ]]; then echo "gofmt: needs formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	bash scripts/layercheck.sh
	$(GO) run ./scripts/filecheck
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -run '^(TestDocumentIsValid|TestJSONMatchesYAML)$$' ./api

# The "dirty tree" gate: generated code and go.mod/go.sum must be committed
# exactly as the tools produce them.
check: generate ## Fail if generate + go mod tidy change the tree
	$(GO) mod tidy
	@dirty=$$(git status --porcelain --untracked-files=all); \
	if [[ -n $$dirty ]]; then \
		echo 'check: generate + go mod tidy left the tree dirty:'; echo "$$dirty"; \
		git --no-pager diff; \
		exit 1; \
	fi; \
	echo 'check: tree clean'
