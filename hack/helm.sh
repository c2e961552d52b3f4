#!/usr/bin/env bash
# Builds helm from the Go module proxy, once, into a versioned cache, and
# prints the binary's path. The chart tests lint and render with it.
set -euo pipefail

HELM_VERSION=3.22.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="${here}/helm"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/runlore/helm-${HELM_VERSION}"
stamp="${cache}/.stamp"
want="helm=${HELM_VERSION} go=$(go env GOVERSION) sum=$(cat "${mod}/go.mod" "${mod}/go.sum" | sha256sum | cut -c1-16)"
if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" && -x "${cache}/helm" ]]; then
	echo "${cache}/helm"
	exit 0
fi
mkdir -p "${cache}"
tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
echo ">> building helm v${HELM_VERSION}" >&2
(cd "${mod}" && CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}" \
	-o "${tmp}/helm" helm.sh/helm/v3/cmd/helm) >&2
mv -f "${tmp}/helm" "${cache}/helm"
echo "${want}" > "${stamp}"
echo "${cache}/helm"
