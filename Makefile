# Splash worker protocol v5: specification, reference implementation and conformance suite.
GO        ?= go
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
STATICCHECK_VERSION ?= v0.8.2
# Where make conform writes the suites' reports and the implementation report that merges them.
REPORTS   ?= reports
# The packages that run goroutines or processes concurrently, for the race detector. The etcd
# backend is left out to keep CI within its budget: building the etcd client and gRPC with -race
# takes about two minutes from a cold cache (its tests pass under -race in about 17 s).
RACE_PKGS ?= ./impl/worker/... ./impl/transport/... ./impl/host/... ./impl/storage \
	./impl/storage/boltstore/... ./impl/storage/sqlitestore/... ./impl/storage/storagetest/... \
	./impl/workflow/... ./conformance/... ./impl/canonjson/... ./impl/protocol/... ./e2e/... ./cmd/splash-worker \
	./cmd/splash-host-driver
# The mutation harness runs the whole suite once per fault; it runs in make test, and under the
# race detector it would only repeat the runner paths the other conformance tests take.
RACE_SKIP ?= ^(TestMutationHarness|TestProxyMutants|TestHostMutationHarness|TestSlowDriverPassesPacedChecks)$$

.PHONY: all conform test mutation race fuzz bench vectors vectors-check lint soak etcd-current

all: test

## conform: the main job: run the worker suite against the bundled reference worker, then the
## host suite against the bundled reference host driver, then the bundled interop matrix (the
## reference host driver with the reference worker in both number models); fails when one fails.
## Every suite writes its JSON and HTML reports into REPORTS, and splash-conform report merges
## them into one implementation report there.
conform:
	@mkdir -p $(REPORTS); \
	$(GO) build -o $(REPORTS)/.splash-conform ./cmd/splash-conform || exit 2; \
	$(REPORTS)/.splash-conform -json $(REPORTS)/worker.json -html $(REPORTS)/worker.html; worker=$$?; \
	echo; $(REPORTS)/.splash-conform host -json $(REPORTS)/host.json -html $(REPORTS)/host.html; host=$$?; \
	echo; $(REPORTS)/.splash-conform interop -matrix conformance/interop/implementations.json \
	  -json $(REPORTS)/interop.json -html $(REPORTS)/interop.html; interop=$$?; \
	echo; $(REPORTS)/.splash-conform report -json $(REPORTS)/implementation-report.json \
	  -html $(REPORTS)/implementation-report.html splash-worker=$(REPORTS)/worker.json \
	  splash-host-driver=$(REPORTS)/host.json $(REPORTS)/interop.json; report=$$?; \
	echo "reports: $(REPORTS)/ (implementation-report.html merges them)"; \
	test $$worker -eq 0 && test $$host -eq 0 && test $$interop -eq 0 && test $$report -eq 0

## test: vet, then every test (vector replay, fuzz seed corpora, property and model tests),
## then the in-process tests of the faulty build (build tag splashfaults).
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) vet -tags splashfaults ./impl/worker/ ./cmd/splash-worker/ ./cmd/splash-host-driver/
	$(GO) test -count=1 -tags splashfaults ./impl/worker/ ./cmd/splash-worker/

## mutation: the worker and host suites' mutation harnesses alone, printing their scores (go test
## keeps a passing package's output to itself, so make test does not show them).
mutation:
	@out=$$(mktemp); \
	$(GO) test -count=1 -v -run '^(TestMutationHarness|TestHostMutationHarness)$$' ./conformance/worker/ ./conformance/host/ >"$$out" 2>&1; \
	status=$$?; grep -E 'mutation score|^(--- FAIL|FAIL|ok)' "$$out"; rm -f "$$out"; exit $$status

## race: the concurrent packages' tests under the race detector. A race-built program sleeps a
## second before it exits (GORACE atexit_sleep_ms); the suites' tests run the test binary as
## relays and peers whose exits are timed against exchange deadlines, so the sleep is turned off.
race:
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -skip '$(RACE_SKIP)' $(RACE_PKGS)

## fuzz: each native fuzz target for FUZZTIME, one after another.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## bench: every benchmark, with allocations.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

## vectors: regenerate the golden vectors in vectors/.
vectors:
	$(GO) run ./cmd/splash-vectors -out vectors

## vectors-check: regenerate into a scratch folder and fail if the committed files differ.
vectors-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) run ./cmd/splash-vectors -out "$$tmp" && \
	for f in "$$tmp"/*.json "$$tmp"/VERSION "$$tmp"/SHA256SUMS; do cmp "$$f" "vectors/$$(basename "$$f")" || exit 1; done && \
	for f in vectors/*.json; do [ -f "$$tmp/$$(basename "$$f")" ] || { echo "stale vector file $$f"; exit 1; }; done && \
	echo "vectors are up to date"

## lint: gofmt, go vet and staticcheck must all be clean, also on the build with the etcd
## journal (tag splashetcd).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags splashetcd ./cmd/splash-worker/ ./impl/storage/etcdstore/...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags splashetcd ./cmd/splash-worker/ ./impl/storage/etcdstore/...

## soak: long property, linearizability and crash runs, and the etcd quota runs (10,000
## dispatches by long-lived workers, then by 10,000 one-dispatch worker processes, on a 24 MiB
## quota; about ten minutes each).
soak:
	SPLASH_SOAK=1 $(GO) test -count=1 -timeout 90m ./...

## etcd-current: the etcd tests against a current etcd server release, built from
## go.etcd.io/etcd/server/v3 by a module of its own (so the server stays out of the main module
## and its builds) into ETCD_CURRENT_DIR. Not part of CI: the build takes minutes.
ETCD_CURRENT_DIR ?= $(shell $(GO) env GOCACHE)/splash-etcd-current
etcd-current:
	cd impl/storage/etcdstore/etcdstoretest/current && $(GO) build -o $(ETCD_CURRENT_DIR)/etcd .
	cp $(ETCD_CURRENT_DIR)/etcd $(ETCD_CURRENT_DIR)/etcdutl
	SPLASH_ETCD=$(ETCD_CURRENT_DIR)/etcd $(GO) test -count=1 ./impl/storage/etcdstore/... ./cmd/splash-worker/ \
		-run 'Etcd|Anchored|Recovery|EveryStorage'
