# Hookfan — one build entry. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO          ?= go
FUNCTIONS   := ingest deliver reconcile
# The functions with a cold-start budget or floor (infra/tools/coldstart/sdkfloor).
COLDSTART_FUNCTIONS := ingest deliver
BUILD_DIR   ?= build
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Reproducible Lambda binaries: no cgo, no paths, no build id, no VCS stamp.
LAMBDA_ENV   := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
LAMBDA_OPTS  := -trimpath -buildvcs=false -ldflags "-s -w -buildid="
LAMBDA_FLAGS := -tags lambda.norpc $(LAMBDA_OPTS)
FUZZTIME    ?= 60s
# A go list template naming a package when its non-test files import unsafe.
UNSAFE_IMPORTERS := {{range .Imports}}{{if eq . "unsafe"}}{{$$.ImportPath}}{{"\n"}}{{end}}{{end}}
BENCHTIME   ?= 1s
CDK_OUT     ?= cdk.out
# The CDK's jsii runtime warns on every run under Node 20 (this machine's); silence only that version.
JSII_ENV    := JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=20

.PHONY: help build test unit integration integration-bin chromium load lint receive send fuzz synth deploy dev dev-stop ops console bench coldstart clean $(FUNCTIONS:%=build-%)

help: ## list the targets
	@grep -E '^[a-z%-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sed -e 's|$$(CDK_OUT)|$(CDK_OUT)|g' | expand -t 16

build: $(FUNCTIONS:%=build-%) ## build every function as build/<name>/bootstrap (linux/arm64)

$(FUNCTIONS:%=build-%): build-%: ## build one function, e.g. make build-ingest
	@mkdir -p $(BUILD_DIR)/$*
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(BUILD_DIR)/$*/bootstrap ./functions/$*
	@printf '%-28s %8d bytes\n' "$(BUILD_DIR)/$*/bootstrap" "$$(stat -c %s $(BUILD_DIR)/$*/bootstrap)"

test: lint unit integration build synth ## everything CI runs (the README's test command)

unit: ## unit tests (with the race detector) and fuzz seed corpora
	@echo "unit tests with -race: compiles every package with the race detector first (minutes on a cold Go cache), then prints each package as it passes"
	@$(STILL) "unit tests" $(GO) test -race -count=1 ./...

# The Lambda RIE and the functions built for this machine (the RIE runs them
# here), with the Lambda flags, for the integration test of the built binaries.
INTEGRATION_BIN := $(BUILD_DIR)/integration

integration-bin: ## the Lambda RIE, the functions and the lambda targets' test function (infra/local/targetfn) built for this machine into build/integration (make integration does it first)
	@mkdir -p $(INTEGRATION_BIN)
	GOBIN=$(abspath $(INTEGRATION_BIN)) $(GO) install $(RIE_MODULE)@$(RIE_VERSION)
	for f in $(FUNCTIONS); do \
	  CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(INTEGRATION_BIN)/$$f/bootstrap ./functions/$$f; \
	done
	CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(INTEGRATION_BIN)/targetfn/bootstrap ./infra/local/targetfn

# Most integration tests spend their time waiting (retry schedules, long
# polls, the emulator), so more of them run at once than there are cores:
# on 2 cores the suite took 296 s at go test's default (-parallel 2),
# 180 s at 4, and 204 s at 8 with two CPU-bound processes beside it.
INTEGRATION_PARALLEL ?= 6

# The console's browser test (integration/console_test.go) drives Debian's
# chromium. make integration (and so make test) installs it with apt-get
# where it is missing, as root or through sudo, and stops with the reason
# when it cannot: the test never skips.
CHROMIUM ?= /usr/bin/chromium

chromium: ## make sure Debian's chromium is at CHROMIUM (/usr/bin/chromium) for the console's browser test: installs it with apt-get when missing, fails when it cannot
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $(CHROMIUM)"; exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
	  echo "chromium: $(CHROMIUM) is missing and this machine has no apt-get: install Chromium there (the console's browser test needs it; README: prerequisites)"; exit 1; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else \
	  echo "chromium: $(CHROMIUM) is missing; installing it needs root: run apt-get install chromium as root (README: prerequisites)"; exit 1; fi; \
	echo "chromium: $(CHROMIUM) is missing; installing Debian's chromium with apt-get (a minute or two)"; \
	$$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q chromium; \
	if [ ! -x "$(CHROMIUM)" ]; then echo "chromium: apt-get ran but $(CHROMIUM) is still missing"; exit 1; fi

integration: integration-bin chromium ## end-to-end tests against an AWS emulator (starts moto_server unless AWS_ENDPOINT_URL is set), the built functions among them under the Lambda RIE
	@echo "integration tests on moto_server (started here unless AWS_ENDPOINT_URL is set): several minutes"
	@$(STILL) "integration tests" env HOOKFAN_LAMBDA_BIN=$(abspath $(INTEGRATION_BIN)) $(GO) test -tags integration -count=1 -parallel $(INTEGRATION_PARALLEL) -timeout 20m ./integration/...

LOAD_EVENTS ?= 600
load: ## load run: LOAD_EVENTS events × 3 destinations through the local stack on moto; prints throughput and event age
	HOOKFAN_LOAD_EVENTS=$(LOAD_EVENTS) $(GO) test -tags integration -count=1 -run '^TestLoad$$' -v -timeout 30m ./integration/ 2>&1 | grep -E '^(load:|--- |ok|FAIL|PASS)'

lint: ## gofmt check, go mod tidy check, no unsafe outside tests, go vet, staticcheck
	@echo "lint: gofmt"
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	@echo "lint: go mod tidy -diff (downloads the modules on a cold cache)"
	@$(STILL) "go mod tidy" $(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	@echo "lint: no unsafe outside tests (go list)"
	@unsafe="$$( { $(GO) list -f '$(UNSAFE_IMPORTERS)' ./... ; $(GO) list -tags integration -f '$(UNSAFE_IMPORTERS)' ./integration/... ; } | sort -u)"; \
	if [ -n "$$unsafe" ]; then echo "unsafe is imported outside tests by:"; echo "$$unsafe"; exit 1; fi
	@echo "lint: go vet (type-checks every package: minutes on a cold Go cache, silent unless it finds something)"
	@$(STILL) "go vet" $(GO) vet ./...
	@$(STILL) "go vet (integration)" $(GO) vet -tags integration ./integration/...
	@echo "lint: staticcheck $(lastword $(subst @, ,$(STATICCHECK))) (built once through the module proxy, then silent unless it finds something)"
	@$(STILL) staticcheck $(GO) run $(STATICCHECK) ./...
	@$(STILL) "staticcheck (integration)" $(GO) run $(STATICCHECK) -tags integration ./integration/...

fuzz: ## run every fuzz target for FUZZTIME each (default 60s)
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

bench: ## benchmarks with allocations, one package at a time (parallel packages would skew each other's CPU figures)
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# CONFIG=path/to/hookfan.json synthesizes or deploys that configuration (-c hookfanConfig=…),
# instead of cdk.json's; outside the CDK CLI the app reads its context from CDK_CONTEXT_JSON.
CONFIG ?=
# cfn-lint's W3005 flags a DependsOn that a GetAtt already implies: the CDK writes one on each
# function (and its custom resource's) for the role whose policy must exist first. Redundant,
# never wrong, and not ours to change: ignored.
CFN_LINT_IGNORE := W3005

synth: ## synthesize the stack into $(CDK_OUT) (functions built on the way; CONFIG=file for another configuration) and cfn-lint every template
	rm -rf $(CDK_OUT)
	@echo "synthesizing: builds the functions, then runs the CDK app (jsii starts Node); about 30 s on a warm Go cache, several minutes on a cold one (it compiles the CDK's Go bindings)"
	$(STILL) synthesizing env $(JSII_ENV) CDK_OUTDIR=$(CDK_OUT) $(if $(CONFIG),CDK_CONTEXT_JSON='{"hookfanConfig":"$(CONFIG)"}') $(GO) run ./infra
	cfn-lint --non-zero-exit-code error --ignore-checks $(CFN_LINT_IGNORE) -- $(CDK_OUT)/*.template.json
	@for f in $(CDK_OUT)/*.template.json; do printf '%-60s %8d bytes\n' "$$f" "$$(stat -c %s $$f)"; done

deploy: ## deploy with the CDK CLI (needs AWS credentials and a bootstrapped account; see README)
	$(JSII_ENV) npx --yes aws-cdk@2 deploy --all $(if $(CONFIG),-c hookfanConfig=$(CONFIG)) $(CDK_ARGS)

DEV_CONFIG  ?= infra/local/dev.json
DEV_SECRETS ?= infra/local/dev-secrets.json
SOURCE      ?= stripe
# The dev tools, built once into $(BIN) and again only when a Go file, go.mod,
# go.sum or a sample changed (go run would compile them on every call).
BIN         := $(BUILD_DIR)/bin
DEV_TOOLS   := local=./infra/local ops=./infra/ops send=./events/send receive=./events/receive
GO_SOURCES  := go.mod go.sum $(shell find . -path ./build -prune -o -path ./cdk.out -prune -o -path ./node_modules -prune -o \( -name '*.go' -o -path './events/testdata/*' \) -type f -print)
# How the local subscriber misbehaves (make receive ANSWER=500; docs/local.md) and
# what make send sends (make send SOURCE=stripe BODY=captured.json).
RECEIVE_FLAGS = $(if $(ANSWER),--answer $(ANSWER)) $(if $(RETRY_AFTER),--retry-after $(RETRY_AFTER)) $(if $(DELAY),--delay $(DELAY)) $(if $(FAIL_FIRST),--fail-first $(FAIL_FIRST))
SEND_FLAGS    = $(if $(BODY),--body $(BODY)) $(if $(TYPE),--type $(TYPE)) $(if $(SAMPLE),--sample $(SAMPLE)) $(if $(COUNT),--count $(COUNT)) $(if $(ID),--id $(ID))

# STILL LABEL COMMAND… runs COMMAND and, every 20 s it is still running, says so
# with the time so far: a first build on a cold Go cache is never a silent wait.
# COMMAND runs in the foreground (Ctrl-C reaches it; a background job of a
# script would ignore it); the ticker beside it ends within a second of it.
STILL = bash -c 'label=$$1; shift; shell=$$$$; ( s=0; while sleep 1 && kill -0 $$shell 2>/dev/null; do s=$$((s+1)); if ((s % 20 == 0)); then echo "  $$label: still at it ($${s}s)"; fi; done ) & "$$@"' still

$(addprefix $(BIN)/,$(foreach t,$(DEV_TOOLS),$(firstword $(subst =, ,$(t))))): $(BIN)/%: $(GO_SOURCES)
	@mkdir -p $(BIN)
	@echo "building $@: once, and again only when a Go source changes (on a cold Go cache the first downloads the modules and compiles the AWS SDK: a minute or two, more on a busy machine)"
	@$(STILL) "building $@" $(GO) build -o $@ $(lastword $(subst =, ,$(filter $*=%,$(DEV_TOOLS))))

dev: $(BIN)/local ## run the whole stack locally on a persistent moto_server (reused across runs) or AWS_ENDPOINT_URL; DEV_CONFIG=… DEV_FLAGS="--call-timeout 30s"
	@$(BIN)/local --config $(DEV_CONFIG) --secrets $(DEV_SECRETS) $(DEV_FLAGS)

dev-stop: $(BIN)/local ## stop the persistent emulator make dev uses (everything it holds is gone; the next make dev starts clean)
	@$(BIN)/local --stop-emulator

ops: $(BIN)/ops ## the operator command against make dev, e.g. make ops ARGS="events --since 10m" (deployed: ARGS="--stack Hookfan …")
	@$(BIN)/ops --config $(DEV_CONFIG) $(ARGS)

console: $(BIN)/ops ## the web console against make dev: prints one URL (one-time token) to open in your browser; ARGS="--read-only" or ARGS="--listen 127.0.0.1:8081" (a deployed stack: make ops ARGS="--stack Hookfan console")
	@$(BIN)/ops --config $(DEV_CONFIG) console $(ARGS)

receive: $(BIN)/receive ## a local subscriber that verifies and prints deliveries (second terminal); ANSWER=500|410|429 RETRY_AFTER=30 DELAY=2s FAIL_FIRST=3 make it misbehave
	@$(BIN)/receive --secrets $(DEV_SECRETS) --secret-name hookfan/dev/destinations/receiver $(RECEIVE_FLAGS)

send: $(BIN)/send ## sign a sample event as SOURCE (default stripe) and POST it to the local stack (third terminal); BODY=file sends your own payload (TYPE=… where the provider sends the type in a header)
	@$(BIN)/send --config $(DEV_CONFIG) --secrets $(DEV_SECRETS) --source $(SOURCE) $(SEND_FLAGS)

# The Lambda Runtime Interface Emulator, installed through the module proxy.
RIE_MODULE     := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
RIE_VERSION    ?= v0.0.0-20261030222936-bef5c4ba774d
COLDSTART_DIR  := $(BUILD_DIR)/coldstart
# 31 cold starts of each: the median of 15 moved between 1.86x and 2.14x of
# hello's across runs of the same binaries on 2026-12-02; of 31, 1.86-2.02x.
COLDSTART_RUNS ?= 31
# Ingest's init may be at most this many times hello's (deliver's has no budget).
COLDSTART_BUDGET ?= 2

coldstart: ## cold start of both functions and a hello-world baseline under the Lambda RIE (median of COLDSTART_RUNS, default 31); fails when ingest's init exceeds COLDSTART_BUDGET× hello's
	@mkdir -p $(COLDSTART_DIR)
	GOBIN=$(abspath $(COLDSTART_DIR)) $(GO) install $(RIE_MODULE)@$(RIE_VERSION)
	@# This machine's architecture: the emulator runs the functions here.
	CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(COLDSTART_DIR)/hello ./infra/tools/coldstart/hello
	for f in $(COLDSTART_FUNCTIONS); do \
	  CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(COLDSTART_DIR)/$$f ./functions/$$f; \
	  CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(COLDSTART_DIR)/sdk-$$f ./infra/tools/coldstart/sdkfloor/$$f; \
	done
	$(GO) run ./infra/tools/coldstart -rie $(COLDSTART_DIR)/aws-lambda-rie -dir $(COLDSTART_DIR) -runs $(COLDSTART_RUNS) -budget $(COLDSTART_BUDGET)

clean: ## remove build outputs
	rm -rf $(BUILD_DIR) cdk.out
