#!/usr/bin/env bash
# Builds the control-plane programs RunLore's tests run against (kube-apiserver,
# etcd, kubectl) from the Go module proxy, once, into a versioned cache, and
# prints the directory that holds them (the value for KUBEBUILDER_ASSETS).
# A stamp records what was built from what; a matching stamp means no work.
#
# With --node it also builds, into the same directory under a stamp of their
# own, the programs of a real node that hack/cluster.sh runs: kubelet,
# kube-proxy, kube-controller-manager and kube-scheduler.
set -euo pipefail

node=false
case "${1:-}" in
--node) node=true ;;
"") ;;
*) echo "usage: $0 [--node]" >&2; exit 2 ;;
esac

K8S_VERSION=1.37.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${here}/tools"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/runlore/k8s-${K8S_VERSION}"
stamp="${cache}/.stamp"

want="k8s=${K8S_VERSION} go=$(go env GOVERSION) sum=$(cat "${tools}/go.mod" "${tools}/go.sum" | sha256sum | cut -c1-16)"
built() { # stamp program...
	local s="$1"; shift
	[[ -f "${s}" && "$(cat "${s}")" == "${want}" ]] || return 1
	for p in "$@"; do [[ -x "${cache}/${p}" ]] || return 1; done
}
control=(etcd kubectl kube-apiserver)
nodeprogs=(kubelet kube-proxy kube-controller-manager kube-scheduler)
if built "${stamp}" "${control[@]}" && { ! ${node} || built "${stamp}-node" "${nodeprogs[@]}"; }; then
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
# Move into place only once a whole set built, so an interrupted build never
# leaves a stamp over a partial set.
if ! built "${stamp}" "${control[@]}"; then
	build etcd go.etcd.io/etcd/server/v3
	build kubectl k8s.io/kubernetes/cmd/kubectl
	build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
	(cd "${tmp}" && mv -f "${control[@]}" "${cache}/")
	echo "${want}" > "${stamp}"
fi
if ${node} && ! built "${stamp}-node" "${nodeprogs[@]}"; then
	for p in "${nodeprogs[@]}"; do
		build "${p}" "k8s.io/kubernetes/cmd/${p}"
	done
	(cd "${tmp}" && mv -f "${nodeprogs[@]}" "${cache}/")
	echo "${want}" > "${stamp}-node"
fi
echo "${cache}"
