# RunLore's build. `make test` and `make demo` build everything they need,
# including the control-plane binaries the tests run against (cached).

GO            ?= go
CONTROLLER_GEN = $(GO) tool controller-gen
BIN           ?= bin
TEST_FLAGS    ?= -race -count=1 -timeout 30m
PKGS          ?= ./...

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: ## Generate deepcopy code and the API reference.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(GO) run ./hack/apidocs api/v1alpha1 docs/reference/api.md

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook manifests, and the chart's CRDs.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths=./... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac \
		output:webhook:artifacts:config=config/webhook
	hack/chart-crds.sh
	$(CONTROLLER_GEN) crd paths=github.com/fluxcd/source-controller/api/v1 \
		paths=github.com/fluxcd/kustomize-controller/api/v1 paths=github.com/fluxcd/helm-controller/api/v2 \
		output:crd:artifacts:config=test/crds/flux

.PHONY: fmt
fmt:
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet:
	$(GO) vet ./...

.PHONY: build
build: ## Build the lore binary.
	$(GO) build -trimpath -o $(BIN)/lore ./cmd/lore

IMAGE_REPOSITORY ?= ghcr.io/runlore/runlore
IMAGE_TAG        ?= $(shell sed -n 's/^appVersion: *"*\([^"]*\)"*/\1/p' charts/runlore/Chart.yaml)
IMAGE_ARCH       ?= $(shell $(GO) env GOARCH)

.PHONY: image
image: ## Build the operator's image, reproducibly and without a container engine, as bin/runlore-image.tar (docker load, ctr import, crane push).
	$(GO) run ./hack/image -out $(BIN)/runlore-image.tar -repository $(IMAGE_REPOSITORY) -tag $(IMAGE_TAG) -arch $(IMAGE_ARCH)

.PHONY: control-plane
control-plane: ## Build (once) and print the kube-apiserver, etcd and kubectl directory.
	@hack/control-plane.sh

.PHONY: alertmanager
alertmanager: ## Build (once) the Alertmanager the e2e test runs.
	@hack/alertmanager/build.sh

.PHONY: test
test: ## Run unit, envtest and chart suites with the race detector.
	@assets="$$(hack/control-plane.sh)" && helm="$$(hack/helm.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" RUNLORE_HELM="$$helm" $(GO) test $(TEST_FLAGS) $(PKGS)

.PHONY: e2e-cluster
e2e-cluster: ## Bring up a real one-node cluster (hack/cluster.sh), run real faults through RunLore, take it down.
	@hack/control-plane.sh --node >/dev/null && helm="$$(hack/helm.sh)" && \
	RUNLORE_HELM="$$helm" $(GO) test -tags cluster -count=1 -timeout 40m -run '^TestRealCluster$$' -v ./test/e2e/

.PHONY: demo-cluster
demo-cluster: ## The demo on a real one-node cluster (hack/cluster.sh, root): a fleet commit, a real OOM kill, its finding and its recall.
	@hack/control-plane.sh --node >/dev/null && helm="$$(hack/helm.sh)" && \
	$(GO) test -tags cluster -c -o bin/e2e-cluster.test ./test/e2e/ && \
	cd test/e2e && trap '../../hack/cluster.sh down >/dev/null 2>&1' INT TERM && \
	RUNLORE_HELM="$$helm" RUNLORE_CLUSTER_STORY=1 ../../bin/e2e-cluster.test -test.run '^TestRealClusterDemo$$' -test.timeout 40m

.PHONY: bench
bench: ## Run the benchmarks.
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

.PHONY: scale
scale: ## Measure lore serve's memory and an investigation's duration at 1k, 5k and 20k Pods (SCALE_SIZES=...).
	@assets="$$(hack/control-plane.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -tags scale -count=1 -timeout 90m -run TestScale -v ./test/scale/

.PHONY: storm
storm: ## Post an alert storm at the receiver and the manager on the local control plane; then 300-alert storms of one cause, through the reconcilers and through lore serve as installed.
	@assets="$$(hack/control-plane.sh)" && helm="$$(hack/helm.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test ./controllers -run '^$$' -bench '^BenchmarkStorm$$' -benchtime 1x && \
	RUNLORE_STORM_FULL=1 KUBEBUILDER_ASSETS="$$assets" $(GO) test ./controllers -count=1 -v -run '^TestStormOfOneNode$$' && \
	RUNLORE_STORM_FULL=1 KUBEBUILDER_ASSETS="$$assets" RUNLORE_HELM="$$helm" $(GO) test ./test/e2e -count=1 -v -timeout 60m -run '^TestInstalledStorm'

.PHONY: verify
verify: generate manifests ## Regenerate everything and fail if the tree moved.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff
	cd hack/tools && $(GO) mod tidy -diff
	cd hack/helm && $(GO) mod tidy -diff
	cd hack/alertmanager && $(GO) mod tidy -diff
	@git diff --exit-code -- . || { echo "verify: generated files are out of date; run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all)" || { git status --porcelain --untracked-files=all; echo "verify: untracked generated files"; exit 1; }

.PHONY: demo
demo: ## Run RunLore against a local control plane with a seeded fault.
	@assets="$$(hack/control-plane.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) run ./cmd/lore demo

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
