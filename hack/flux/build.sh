#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller (v1.9.6, the last
# releases that build with Go 1.26) from the Go module proxy, once, into a
# versioned cache, and prints the directory that holds them. Each controller
# has a tools module of its own (hack/flux/<controller>) carrying the replace
# directives of the controller's go.mod, so its dependency graph is the one
# it was released with. A stamp records what was built from what.
#
# hack/cluster.sh runs them on the real cluster (make e2e-cluster).
set -euo pipefail

FLUX_VERSION=1.9.6
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/runlore/flux-${FLUX_VERSION}"
stamp="${cache}/.stamp"
controllers=(source-controller kustomize-controller)

want="flux=${FLUX_VERSION} go=$(go env GOVERSION) sum=$(cat "${here}"/*/go.mod "${here}"/*/go.sum | sha256sum | cut -c1-16)"
# One build at a time: a caller that finds another build under way (.ci/run
# starts one early, in the background) waits for it and then finds the
# binaries in place.
mkdir -p "${cache}"
exec 9>"${cache}/.lock"
flock 9
built=true
for c in "${controllers[@]}"; do [[ -x "${cache}/${c}" ]] || built=false; done
if ${built} && [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]]; then
	echo "${cache}"
	exit 0
fi

tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
for c in "${controllers[@]}"; do
	echo ">> building ${c} v${FLUX_VERSION}" >&2
	(cd "${here}/${c}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${tmp}/${c}" "github.com/fluxcd/${c}") >&2
done
# Move into place only once both built.
(cd "${tmp}" && mv -f "${controllers[@]}" "${cache}/")
echo "${want}" >"${stamp}"
echo "${cache}"
