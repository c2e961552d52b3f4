#!/usr/bin/env bash
# Builds the control-plane programs RunLore's tests run against (kube-apiserver,
# etcd, kubectl) from the Go module proxy, once, into a versioned cache, and
# prints the directory that holds them (the value for KUBEBUILDER_ASSETS).
# A stamp records what was built from what; a matching stamp means no work.
set -euo pipefail

K8S_VERSION=1.37.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${here}/tools"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/runlore/k8s-${K8S_VERSION}"
stamp="${cache}/.stamp"

want="k8s=${K8S_VERSION} go=$(go env GOVERSION) sum=$(cat "${tools}/go.mod" "${tools}/go.sum" | sha256sum | cut -c1-16)"
if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" ]] \
	&& [[ -x "${cache}/kube-apiserver" && -x "${cache}/etcd" && -x "${cache}/kubectl" ]]; then
	echo "${cache}"
	exit 0
fi

mkdir -p "${cache}"
tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

pkg=k8s.io/component-base/version
ldflags="-s -w -X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=${K8S_VERSION%%.*}"
minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
ldflags="${ldflags} -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean"

build() { # name package
	echo ">> building $1 ($2)" >&2
	(cd "${tools}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${tmp}/$1" "$2") >&2
}
build etcd go.etcd.io/etcd/server/v3
build kubectl k8s.io/kubernetes/cmd/kubectl
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

# Move into place only once all three built, so an interrupted build never
# leaves a stamp over a partial set.
mv -f "${tmp}/etcd" "${tmp}/kubectl" "${tmp}/kube-apiserver" "${cache}/"
echo "${want}" > "${stamp}"
echo "${cache}"
