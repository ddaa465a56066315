# maestro: durable, receipted tool calls for AI agents.
export GOTOOLCHAIN := go1.27.3
# Tests run against PostgreSQL; dev mode uses SQLite unless DATABASE_URL is set.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable

GO ?= go
PKGS := ./...

.PHONY: demo run test vet build fmt bench help crashtest loadtest cluster chaos

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# DEMO_FLAGS=--hold leaves a refund for you to decide in the console.
DEMO_FLAGS ?=
demo: ## run everything embedded, drive a scripted scenario through the API, exit 0 (DEMO_FLAGS=--hold: then decide a refund in the console)
	$(GO) run ./cmd/demo $(DEMO_FLAGS)

run: ## start the long-running dev service (embedded Temporal, SQLite ledger, stand-ins)
	$(GO) run ./cmd/worker --dev

test: vet ## vet, then every test with the race detector against PostgreSQL
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" $(GO) test -race -count=1 -timeout 30m $(PKGS)

crashtest: ## kill the worker between provider and ledger, restart it, count effects at the receivers
	$(GO) vet -tags crashtest,failpoint ./internal/failpoint ./activities ./test/crashtest
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" $(GO) test -tags crashtest -count=1 -timeout 8m -v -run 'TestCrashAtTheSeam|TestCrashMidSaga|TestCrashBetweenThePartsOfAPage' ./test/crashtest

loadtest: ## 200 concurrent sessions x 10 mixed calls against one dev process; prove outcomes, effects, approvals, audit
	$(GO) vet -tags loadtest ./test/loadtest
	$(GO) test -tags loadtest -count=1 -timeout 5m -v -run TestLoad ./test/loadtest

# make cluster keeps Temporal's state in databases temporal and
# temporal_visibility on this server, created on first start.
TEMPORAL_DATABASE_URL ?= $(TEST_DATABASE_URL)
CLUSTER_FLAGS ?= --shards 4 --port 7233
cluster: ## run a Temporal server on PostgreSQL as its own process (4 history shards, port 7233) for production rehearsals
	$(GO) run ./cmd/worker temporal --database-url "$(TEMPORAL_DATABASE_URL)" -v $(CLUSTER_FLAGS)

# CHAOS_PROFILE=ci runs the shorter profile CI runs; smoke checks the harness.
CHAOS_PROFILE ?= full
chaos: ## Temporal on PostgreSQL (4 shards), stand-ins, 2 APIs behind a round-robin proxy and 3 workers as processes; 10,000 calls while workers, APIs, PostgreSQL and Temporal are killed or restarted and providers fail; writes results/chaos.json
	$(GO) vet -tags chaos ./test/chaos
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" CHAOS_PROFILE=$(CHAOS_PROFILE) $(GO) test -tags chaos -count=1 -timeout 50m -v -run TestChaos ./test/chaos

vet: ## go vet
	$(GO) vet $(PKGS)

# Release builds are static and carry no local paths; the Dockerfile runs
# this same target, so the image holds exactly what make build produces.
BUILD_FLAGS := -trimpath -ldflags="-s -w"
build: ## build the binaries into bin/ (the Dockerfile runs this target)
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o bin/ ./cmd/...

fmt: ## gofmt the tree
	gofmt -w $$(git ls-files '*.go')

# Flags for make bench, e.g. BENCH_FLAGS="-concurrency 1,16 -calls 30,96 -only maestro".
BENCH_FLAGS ?=
bench: ## measure direct, bare-Temporal and maestro calls side by side; writes results/bench
	$(GO) run ./cmd/bench $(BENCH_FLAGS)

.PHONY: reality
reality: ## fire every real-sync tool at independent references (npm: SES emulator, Prism with Twilio's spec) and read each effect back
	.ci/reality/run.sh

.PHONY: mcp
mcp: ## run the official MCP conformance suite and the MCP Inspector CLI against a dev server's /mcp (npm, Node 22)
	.ci/mcp/run.sh
