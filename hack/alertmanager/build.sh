#!/usr/bin/env bash
# Builds the real Alertmanager (v0.31.1, from the Go module proxy through this
# tools module) once into a versioned cache and prints the path of the binary.
# A stamp records what was built from what; a matching stamp means no work.
# v0.31.1 is pinned because later module releases lack the built web UI assets
# and do not compile from the module zip.
set -euo pipefail

AM_VERSION=0.31.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/runlore/alertmanager-${AM_VERSION}"
stamp="${cache}/.stamp"

want="alertmanager=${AM_VERSION} go=$(go env GOVERSION) sum=$(sha256sum "${here}/go.mod" "${here}/go.sum" | sha256sum | cut -c1-16)"
if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" && -x "${cache}/alertmanager" ]]; then
	echo "${cache}/alertmanager"
	exit 0
fi

mkdir -p "${cache}"
tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

pkg=github.com/prometheus/common/version
ldflags="-s -w -X ${pkg}.Version=${AM_VERSION} -X ${pkg}.Branch=HEAD -X ${pkg}.Revision=v${AM_VERSION}"
echo ">> building alertmanager v${AM_VERSION}" >&2
(cd "${here}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" \
	-o "${tmp}/alertmanager" github.com/prometheus/alertmanager/cmd/alertmanager) >&2

# Move into place only once built, so an interrupted build never leaves a
# stamp over a partial binary.
mv -f "${tmp}/alertmanager" "${cache}/alertmanager"
echo "${want}" > "${stamp}"
echo "${cache}/alertmanager"
