# maestro: durable, receipted tool calls for AI agents.
export GOTOOLCHAIN := go1.27.3
# Tests run against PostgreSQL; dev mode uses SQLite unless DATABASE_URL is set.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable

GO ?= go
PKGS := ./...

.PHONY: demo run test vet build fmt bench help crashtest loadtest

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

demo: ## run everything embedded, drive a scripted scenario through the API, exit 0
	$(GO) run ./cmd/demo

run: ## start the long-running dev service (embedded Temporal, SQLite ledger, stand-ins)
	$(GO) run ./cmd/worker --dev

test: vet ## vet, then every test with the race detector against PostgreSQL
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" $(GO) test -race -count=1 -timeout 20m $(PKGS)

crashtest: ## kill the worker between provider and ledger, restart it, count effects at the receivers
	$(GO) vet -tags crashtest,failpoint ./internal/failpoint ./activities ./crashtest
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" $(GO) test -tags crashtest -count=1 -timeout 5m -v -run 'TestCrashAtTheSeam|TestCrashMidSaga' ./crashtest

loadtest: ## 200 concurrent sessions x 10 mixed calls against one dev process; prove outcomes, effects, approvals, audit
	$(GO) vet -tags loadtest ./loadtest
	$(GO) test -tags loadtest -count=1 -timeout 5m -v -run TestLoad ./loadtest

vet: ## go vet
	$(GO) vet $(PKGS)

build: ## build the binaries into bin/
	$(GO) build -o bin/ ./cmd/...

fmt: ## gofmt the tree
	gofmt -w $$(git ls-files '*.go')

# Flags for make bench, e.g. BENCH_FLAGS="-concurrency 1,16 -calls 30,96 -only maestro".
BENCH_FLAGS ?=
bench: ## measure direct, bare-Temporal and maestro calls side by side; writes results/bench
	$(GO) run ./cmd/bench $(BENCH_FLAGS)

.PHONY: reality
reality: ## fire every real-sync tool at independent references (npm: SES emulator, Prism with Twilio's spec) and read each effect back
	.ci/reality/run.sh
