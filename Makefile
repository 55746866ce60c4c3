# agentgate's build and test entry points.
#
# `sam build` (BuildMethod: makefile in template.yaml) runs
# `make build-<LogicalId>` in a scratch copy of the repository, with
# ARTIFACTS_DIR set to where the function's bootstrap must land.

# Each Lambda function's LogicalId in template.yaml and its main package under
# functions/. pkg/app.Functions is the source of truth; pkg/deploy's tests fail
# if this list, the template and the code disagree.
dir.McpFunction       := mcp
dir.AgentCardFunction := agentcard
dir.ConnectorFunction := connector
dir.AskProxyFunction  := askproxy
LOGICAL_IDS := McpFunction AgentCardFunction ConnectorFunction AskProxyFunction
NAMES       := $(foreach id,$(LOGICAL_IDS),$(dir.$(id)))

# provided.al2023 runs a static `bootstrap`; lambda.norpc drops the legacy RPC
# mode that provided.* runtimes never use.
GOBUILD := CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w'
LAMBDA  := GOOS=linux GOARCH=arm64 $(GOBUILD)

RIE := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d

.PHONY: build build-host deps test bench run FORCE $(LOGICAL_IDS:%=build-%)

build: $(NAMES:%=dist/%/bootstrap)

build-host: $(NAMES:%=dist/host/%/bootstrap)

# Static pattern rules: build-<unknown> is "no rule", not a broken go build.
$(LOGICAL_IDS:%=build-%): build-%:
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set (sam build sets it)))
	$(LAMBDA) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(dir.$*)

# Always rebuilt (FORCE): go's build cache decides what is stale.
$(NAMES:%=dist/%/bootstrap): dist/%/bootstrap: FORCE
	$(LAMBDA) -o $@ ./functions/$*

$(NAMES:%=dist/host/%/bootstrap): dist/host/%/bootstrap: FORCE
	$(GOBUILD) -o $@ ./functions/$*

# Test peers: dynalite (npm) and the Lambda Runtime Interface Emulator. npm ci
# runs only when the lockfile changed (npm rewrites node_modules/.package-lock.json);
# go install is a cache hit when the RIE is already built.
deps: node_modules/.package-lock.json
	go install $(RIE)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

test: deps
	go vet ./...
	go test -race -count=1 ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

run:
	go run ./cmd/agentgate serve
