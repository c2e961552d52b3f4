#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for RunLore's
# e2e-cluster tests: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, containerd (Debian's, with runc and the CNI plugins), a
# kubelet registered as a Ready node, running the test images built from
# test/images, kube-proxy (iptables mode) so that Services route, and Flux's
# source-controller and kustomize-controller (hack/flux/build.sh) with their
# CRDs and the flux-system namespace. Every address is on this machine: the
# API server and the node on an interface of their own, the pods on a bridge
# of their own, Flux's metrics, health and artifact ports on loopback.
#
#   hack/cluster.sh up     build what is missing, start, wait for the node;
#                          prints the admin kubeconfig's path
#   hack/cluster.sh down   stop exactly the processes `up` started and
#                          restore every sysctl, mount, interface, cgroup
#                          and path it changed
#   hack/cluster.sh env    print the variables a test reads (KUBECONFIG, ...)
#   hack/cluster.sh import TARBALL...
#                          import docker-archive images into the node's
#                          containerd (e.g. make image's)
#
# State lives in $RUNLORE_CLUSTER_DIR (default /var/lib/runlore-cluster). One
# such cluster runs per machine: the kubelet's ports and /kubepods are fixed.
# `up` that fails halfway takes down what it started.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/.." && pwd)"
state="${RUNLORE_CLUSTER_DIR:-/var/lib/runlore-cluster}"

node_name=runlore-node
node_if=runlore0                # a port-less bridge holding the node address
node_ip=10.213.0.1              # the node's and the API server's address
bridge=runlore-br0              # the pods' bridge
pod_cidr=10.213.1.0/24
service_cidr=10.213.2.0/24
cluster_net=10.213.0.0/16       # the node, pods and Services: the only route a pod has
service_ip=10.213.2.1           # the kubernetes Service, routed by kube-proxy
cluster_dns=10.213.2.10         # written into pods; nothing answers there
etcd_port=12379
etcd_peer_port=12380
api_port=16443
registry=runlore.test           # test images' registry; pulls from it fail locally
# Flux's ports, on loopback: the artifact server kustomize-controller
# downloads from, and each controller's metrics and health endpoints.
flux_storage_port=19090

# Host settings the kubelet, the bridge plugin and the runtime change, which
# `down` puts back.
sysctls=(net.ipv4.ip_forward kernel.panic kernel.panic_on_oops vm.overcommit_memory
	vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet
	net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
	net.netfilter.nf_conntrack_tcp_timeout_close_wait)
# Fixed host paths the kubelet, containerd and the CNI plugins write outside
# the state directory.
host_paths=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/containerd /run/mount
	/etc/cni /opt/cni)

log() { echo ">> $*" >&2; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

# --- processes -------------------------------------------------------------

# start NAME BINARY ARGS... runs a program in its own session and records
# its PID with the binary it must be, so `down` stops exactly that process.
start() {
	local name="$1" bin="$2"; shift 2
	setsid "${bin}" "$@" >"${state}/logs/${name}.log" 2>&1 </dev/null &
	echo "$! ${bin}" >"${state}/pids/${name}"
}

# alive NAME: the recorded process still runs the recorded binary.
alive() {
	local pid bin
	[[ -f "${state}/pids/$1" ]] || return 1
	read -r pid bin <"${state}/pids/$1"
	[[ "$(readlink "/proc/${pid}/exe" 2>/dev/null)" == "$(readlink -f "${bin}")" ]]
}

stop() { # NAME
	local name="$1" pid bin i
	[[ -f "${state}/pids/${name}" ]] || return 0
	read -r pid bin <"${state}/pids/${name}"
	if alive "${name}"; then
		kill -TERM "${pid}" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do alive "${name}" || break; sleep 0.1; done
		if alive "${name}"; then kill -KILL "${pid}" 2>/dev/null || true; fi
		for ((i = 0; i < 50; i++)); do alive "${name}" || break; sleep 0.1; done
	fi
	rm -f "${state}/pids/${name}"
}

# wait_for DESCRIPTION SECONDS COMMAND...: polls until COMMAND succeeds.
wait_for() {
	local what="$1" secs="$2" end=$((SECONDS + $2)); shift 2
	while ((SECONDS < end)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.25
	done
	die "timed out after ${secs}s waiting for ${what} (logs: ${state}/logs)"
}

# --- host state ------------------------------------------------------------

snapshot_host() {
	local s p top
	mkdir -p "${state}/host"
	for s in "${sysctls[@]}"; do
		p="/proc/sys/${s//.//}"
		[[ -r "${p}" ]] && echo "${s} $(cat "${p}")"
	done >"${state}/host/sysctls"
	# The top-most missing ancestor of each fixed path is what `down` removes.
	for p in "${host_paths[@]}"; do
		top=""
		while [[ ! -e "${p}" && "${p}" != / ]]; do top="${p}"; p="$(dirname "${p}")"; done
		[[ -n "${top}" ]] && echo "${top}"
	done | sort -u >"${state}/host/created-paths"
	local f
	for f in iptables ip6tables; do
		"${f}-save" 2>/dev/null | sed -n 's/^\*//p' | sort >"${state}/host/${f}-tables" || true
	done
}

restore_sysctls() {
	local s v
	[[ -f "${state}/host/sysctls" ]] || return 0
	while read -r s v; do
		[[ "$(cat "/proc/sys/${s//.//}")" == "${v}" ]] || sysctl -qw "${s}=${v}" || echo "cluster.sh: could not restore ${s}=${v}" >&2
	done <"${state}/host/sysctls"
}

# mounts_under PREFIX...: mount points under the prefixes, deepest first.
mounts_under() {
	awk '{print $5}' /proc/self/mountinfo | while read -r m; do
		m="$(printf '%b' "${m}")"
		for p in "$@"; do
			[[ "${m}" == "${p}" || "${m}" == "${p}/"* ]] && echo "${m}"
		done
	done | sort -ru
}

unmount_all() {
	local pass m
	for ((pass = 0; pass < 5; pass++)); do
		mapfile -t ms < <(mounts_under "${state}" "${host_paths[@]}")
		((${#ms[@]})) || return 0
		for m in "${ms[@]}"; do umount "${m}" 2>/dev/null || umount -l "${m}" 2>/dev/null || true; done
	done
	mapfile -t ms < <(mounts_under "${state}" "${host_paths[@]}")
	((${#ms[@]} == 0)) || echo "cluster.sh: still mounted: ${ms[*]}" >&2
}

remove_cgroups() {
	local d
	for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[[ -d "${d}" ]] || continue
		find "${d}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		[[ ! -d "${d}" ]] || echo "cluster.sh: could not remove ${d}" >&2
	done
}

remove_interfaces() {
	local v
	# Veths left on the bridge (their netns gone, they usually go with it).
	for v in $(ip -o link show master "${bridge}" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
		ip link delete "${v}" 2>/dev/null || true
	done
	ip link delete "${bridge}" 2>/dev/null || true
	ip link delete "${node_if}" 2>/dev/null || true
}

# remove_iptables_tables drops the IPv4 and IPv6 tables that did not exist
# before `up` (kube-proxy's chains and rules are removed by its --cleanup
# first; tables the host had are left as they were).
remove_iptables_tables() {
	local f t family
	for f in iptables ip6tables; do
		[[ -f "${state}/host/${f}-tables" ]] || continue
		family=ip; [[ "${f}" == ip6tables ]] && family=ip6
		for t in $("${f}-save" 2>/dev/null | sed -n 's/^\*//p' | sort | comm -13 "${state}/host/${f}-tables" -); do
			"${f}" -t "${t}" -F 2>/dev/null || true
			"${f}" -t "${t}" -X 2>/dev/null || true
			# iptables-nft leaves the emptied table; only nft removes it.
			if command -v nft >/dev/null; then nft delete table "${family}" "${t}" 2>/dev/null || true; fi
		done
	done
}

# --- certificates ----------------------------------------------------------

# cert NAME SUBJECT [SANS]: a key and a certificate signed by the cluster CA.
cert() {
	local name="$1" subj="$2" sans="${3:-}" pki="${state}/pki"
	openssl genrsa -out "${pki}/${name}.key" 2048 2>/dev/null
	openssl req -new -key "${pki}/${name}.key" -subj "${subj}" -out "${pki}/${name}.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[[ -z "${sans}" ]] || echo "subjectAltName=${sans}"
	} >"${pki}/${name}.ext"
	openssl x509 -req -in "${pki}/${name}.csr" -CA "${pki}/ca.crt" -CAkey "${pki}/ca.key" -CAcreateserial \
		-days 2 -sha256 -extfile "${pki}/${name}.ext" -out "${pki}/${name}.crt" 2>/dev/null
}

kubeconfig() { # NAME CERT
	local pki="${state}/pki"
	cat >"${state}/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: runlore
  cluster:
    server: https://${node_ip}:${api_port}
    certificate-authority: ${pki}/ca.crt
users:
- name: $1
  user:
    client-certificate: ${pki}/$2.crt
    client-key: ${pki}/$2.key
contexts:
- name: runlore
  context: {cluster: runlore, user: $1}
current-context: runlore
EOF
}

make_pki() {
	local pki="${state}/pki"
	mkdir -p "${pki}"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "${pki}/ca.key" -out "${pki}/ca.crt" -days 2 \
		-subj "/CN=runlore-cluster-ca" 2>/dev/null
	cert apiserver "/CN=kube-apiserver" \
		"IP:127.0.0.1,IP:${service_ip},IP:${node_ip},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	cert admin "/O=system:masters/CN=runlore-admin"
	cert controller-manager "/CN=system:kube-controller-manager"
	cert scheduler "/CN=system:kube-scheduler"
	cert node "/O=system:nodes/CN=system:node:${node_name}"
	cert kube-proxy "/CN=system:kube-proxy"
	# Flux's controllers run with cluster-admin, as its install binds them.
	cert source-controller "/O=system:masters/CN=system:serviceaccount:flux-system:source-controller"
	cert kustomize-controller "/O=system:masters/CN=system:serviceaccount:flux-system:kustomize-controller"
	cert kubelet "/CN=${node_name}" "IP:${node_ip},IP:127.0.0.1,DNS:${node_name}"
	openssl genrsa -out "${pki}/sa.key" 2048 2>/dev/null
	openssl rsa -in "${pki}/sa.key" -pubout -out "${pki}/sa.pub" 2>/dev/null
	kubeconfig admin admin
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig node node
	kubeconfig kube-proxy kube-proxy
	kubeconfig source-controller source-controller
	kubeconfig kustomize-controller kustomize-controller
}

# --- configuration files ---------------------------------------------------

write_containerd_config() {
	local c="${state}/containerd"
	mkdir -p "${c}/certs.d/${registry}"
	# Pulls from the test registry go to a closed loopback port: an absent
	# image fails as ErrImagePull on this machine and never reaches a network.
	cat >"${c}/certs.d/${registry}/hosts.toml" <<EOF
server = "http://127.0.0.1:9"
[host."http://127.0.0.1:9"]
  capabilities = ["pull", "resolve"]
EOF
	cat >"${c}/config.toml" <<EOF
version = 2
root = "${c}/root"
state = "${c}/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${c}/containerd.sock"
[ttrpc]
  address = "${c}/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${registry}/pause:e2e"
  # runc cannot lower oom_score_adj where CAP_SYS_RESOURCE is withheld.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${c}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${state}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${c}/certs.d"
EOF
	mkdir -p "${state}/cni/net.d"
	cat >"${state}/cni/net.d/10-runlore.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "runlore",
  "plugins": [{
    "type": "bridge",
    "bridge": "${bridge}",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "${state}/cni/ipam",
      "ranges": [[{"subnet": "${pod_cidr}"}]],
      "routes": [{"dst": "${cluster_net}"}]
    }
  }]
}
EOF
}

write_kubelet_config() {
	local k="${state}/kubelet" pki="${state}/pki"
	mkdir -p "${k}/root" "${k}/pod-logs" "${k}/volume-plugins" "${k}/pki"
	cat >"${k}/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${node_ip}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${pki}/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: ${pki}/kubelet.crt
tlsPrivateKeyFile: ${pki}/kubelet.key
containerRuntimeEndpoint: unix://${state}/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
syncFrequency: 10s
clusterDomain: cluster.local
clusterDNS: [${cluster_dns}]
podLogsDir: ${k}/pod-logs
volumePluginDir: ${k}/volume-plugins
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
serializeImagePulls: false
EOF
}

# kube-proxy in iptables mode: the API server reaches the admission webhook,
# pods reach the API server, and the host reaches a Service, by ClusterIP.
write_kube_proxy_config() {
	mkdir -p "${state}/kube-proxy"
	cat >"${state}/kube-proxy/config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${state}/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: ${node_name}
bindAddress: ${node_ip}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: ${pod_cidr}
detectLocalMode: ClusterCIDR
# NodePorts answer on the node address only, never on the host's others.
nodePortAddresses: [${node_ip}/32]
iptables:
  # Pods on one bridge reach each other's Services without br_netfilter:
  # every Service connection is masqueraded, so replies come back through
  # the host. No localhost NodePorts: they need route_localnet.
  masqueradeAll: true
  localhostNodePorts: false
  syncPeriod: 30s
  minSyncPeriod: 0s
# Zero leaves the host's conntrack settings as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# --- up and down -----------------------------------------------------------

need_packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	# iptables-nft cannot delete a table it emptied; nft can.
	command -v nft >/dev/null || missing+=(nftables)
	command -v openssl >/dev/null || missing+=(openssl)
	command -v curl >/dev/null || missing+=(curl)
	((${#missing[@]})) || return 0
	log "installing ${missing[*]} (Debian packages)"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# start_flux installs Flux's CRDs (test/crds/flux, generated from the API
# modules the controllers are built from) and the flux-system namespace, and
# starts source-controller and kustomize-controller as host processes: each
# with a kubeconfig of its own, no leader election, every listener on
# loopback, and its temporary files under the state directory.
start_flux() {
	kubectl_ apply --server-side -f "${root}/test/crds/flux" >&2
	kubectl_ wait --for=condition=Established --timeout=60s -f "${root}/test/crds/flux" >&2
	kubectl_ create namespace flux-system >&2
	local f="${state}/flux"
	mkdir -p "${f}/storage" "${f}/tmp"
	TMPDIR="${f}/tmp" RUNTIME_NAMESPACE=flux-system KUBECONFIG="${state}/source-controller.kubeconfig" \
		start source-controller "${flux}/source-controller" \
		--storage-path "${f}/storage" --storage-addr "127.0.0.1:${flux_storage_port}" \
		--storage-adv-addr "127.0.0.1:${flux_storage_port}" \
		--metrics-addr 127.0.0.1:18080 --health-addr 127.0.0.1:19440 --log-encoding console
	TMPDIR="${f}/tmp" RUNTIME_NAMESPACE=flux-system KUBECONFIG="${state}/kustomize-controller.kubeconfig" \
		start kustomize-controller "${flux}/kustomize-controller" \
		--metrics-addr 127.0.0.1:18081 --health-addr 127.0.0.1:19441 --log-encoding console
	wait_for "source-controller" 120 curl -fsS http://127.0.0.1:19440/readyz
	wait_for "kustomize-controller" 120 curl -fsS http://127.0.0.1:19441/readyz
}

ctr_() { ctr --address "${state}/containerd/containerd.sock" -n k8s.io "$@"; }
kubectl_() { "${bin}/kubectl" --kubeconfig "${state}/admin.kubeconfig" --request-timeout 10s "$@"; }

up() {
	[[ ! -e "${state}" ]] || die "${state} exists: a cluster is up, or was not taken down (run: $0 down)"
	[[ "$(id -u)" == 0 ]] || die "a kubelet needs root"
	local d
	for d in /sys/fs/cgroup/*/kubepods; do [[ ! -e "${d}" ]] || die "${d} exists: another kubelet runs here"; done
	need_packages
	bin="$("${here}/control-plane.sh" --node)"
	flux="$("${here}/flux/build.sh")"

	mkdir -p "${state}/pids" "${state}/logs" "${state}/images"
	snapshot_host
	trap 'rc=$?; if ((rc)); then echo "cluster.sh: up failed; taking down what it started" >&2; down >&2 || true; fi' EXIT

	log "building test images"
	(cd "${root}" && go run ./hack/testimages -out "${state}/images" -registry "${registry}") >"${state}/images/list"

	# A bridge without ports holds an address as a dummy interface does, and
	# needs no kernel module some kernels lack (dummy).
	ip link add "${node_if}" type bridge
	ip addr add "${node_ip}/32" dev "${node_if}"
	ip link set "${node_if}" up

	make_pki
	write_containerd_config
	write_kubelet_config
	write_kube_proxy_config

	start etcd "${bin}/etcd" --name runlore --data-dir "${state}/etcd" \
		--listen-client-urls "http://127.0.0.1:${etcd_port}" --advertise-client-urls "http://127.0.0.1:${etcd_port}" \
		--listen-peer-urls "http://127.0.0.1:${etcd_peer_port}" --initial-advertise-peer-urls "http://127.0.0.1:${etcd_peer_port}" \
		--initial-cluster "runlore=http://127.0.0.1:${etcd_peer_port}" --unsafe-no-fsync
	local pki="${state}/pki"
	# On the node address, not loopback, so that pods reach it through the
	# kubernetes Service; the default endpoint reconciler publishes it there.
	start kube-apiserver "${bin}/kube-apiserver" --etcd-servers "http://127.0.0.1:${etcd_port}" \
		--bind-address "${node_ip}" --secure-port "${api_port}" --advertise-address "${node_ip}" \
		--service-cluster-ip-range "${service_cidr}" \
		--cert-dir "${state}/apiserver" --tls-cert-file "${pki}/apiserver.crt" --tls-private-key-file "${pki}/apiserver.key" \
		--client-ca-file "${pki}/ca.crt" --authorization-mode Node,RBAC \
		--service-account-key-file "${pki}/sa.pub" --service-account-signing-key-file "${pki}/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--kubelet-client-certificate "${pki}/apiserver-kubelet-client.crt" --kubelet-client-key "${pki}/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP
	wait_for "the API server" 120 kubectl_ get --raw /readyz

	start kube-controller-manager "${bin}/kube-controller-manager" --kubeconfig "${state}/controller-manager.kubeconfig" \
		--authentication-kubeconfig "${state}/controller-manager.kubeconfig" --authorization-kubeconfig "${state}/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port 10257 --cert-dir "${state}/controller-manager" --leader-elect=false \
		--service-account-private-key-file "${pki}/sa.key" --root-ca-file "${pki}/ca.crt" \
		--cluster-signing-cert-file "${pki}/ca.crt" --cluster-signing-key-file "${pki}/ca.key" \
		--use-service-account-credentials --allocate-node-cidrs=false \
		--flex-volume-plugin-dir "${state}/controller-manager/flexvolume"
	start kube-scheduler "${bin}/kube-scheduler" --kubeconfig "${state}/scheduler.kubeconfig" \
		--authentication-kubeconfig "${state}/scheduler.kubeconfig" --authorization-kubeconfig "${state}/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false

	start containerd "$(command -v containerd)" --config "${state}/containerd/config.toml"
	wait_for "containerd" 60 ctr_ version
	local tarball ref
	while read -r tarball ref; do
		ctr_ images import "${tarball}" >&2
	done <"${state}/images/list"

	start kubelet "${bin}/kubelet" --config "${state}/kubelet/config.yaml" --kubeconfig "${state}/node.kubeconfig" \
		--root-dir "${state}/kubelet/root" --cert-dir "${state}/kubelet/pki" \
		--hostname-override "${node_name}" --node-ip "${node_ip}"
	wait_for "node ${node_name} to register" 120 kubectl_ get node "${node_name}"
	kubectl_ wait --for=condition=Ready "node/${node_name}" --timeout=120s >&2 \
		|| die "node ${node_name} is not Ready (logs: ${state}/logs)"
	wait_for "the default ServiceAccount" 120 kubectl_ -n default get serviceaccount default

	start kube-proxy "${bin}/kube-proxy" --config "${state}/kube-proxy/config.yaml"
	# The kubernetes Service answers from the host through kube-proxy's rules.
	wait_for "the kubernetes Service to route" 120 kubectl_ --server "https://${service_ip}:443" get --raw /readyz

	start_flux

	trap - EXIT
	log "node ${node_name} is Ready"
	echo "${state}/admin.kubeconfig"
}

down() {
	[[ -d "${state}" ]] || { log "no cluster at ${state}"; return 0; }
	local id proxy=""
	stop kustomize-controller
	stop source-controller
	[[ -f "${state}/pids/kube-proxy" ]] && read -r _ proxy <"${state}/pids/kube-proxy"
	stop kube-proxy
	# kube-proxy's own cleanup removes every chain and rule it made (IPv4
	# and IPv6) and exits.
	if [[ -n "${proxy}" && -x "${proxy}" ]]; then
		"${proxy}" --cleanup >"${state}/logs/kube-proxy-cleanup.log" 2>&1 ||
			echo "cluster.sh: kube-proxy --cleanup failed (${state}/logs/kube-proxy-cleanup.log)" >&2
	fi
	stop kubelet
	# Containers outlive the kubelet and containerd (their shims hold them):
	# kill and delete every task and container the kubelet created.
	if alive containerd; then
		for id in $(ctr_ tasks ls -q 2>/dev/null); do
			ctr_ tasks kill -s SIGKILL "${id}" >/dev/null 2>&1 || true
		done
		for id in $(ctr_ tasks ls -q 2>/dev/null); do
			ctr_ tasks delete --force "${id}" >/dev/null 2>&1 || true
		done
		for id in $(ctr_ containers ls -q 2>/dev/null); do
			ctr_ containers delete "${id}" >/dev/null 2>&1 || true
		done
	fi
	for p in kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do stop "${p}"; done
	# Shims of this containerd that outlived it.
	local pid
	for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address ${state}/containerd/containerd.sock" || true); do
		kill -KILL "${pid}" 2>/dev/null || true
	done
	unmount_all
	remove_cgroups
	remove_interfaces
	remove_iptables_tables
	restore_sysctls
	if [[ -f "${state}/host/created-paths" ]]; then
		while read -r p; do rm -rf "${p}"; done <"${state}/host/created-paths"
	fi
	rm -rf "${state}"
	log "cluster down"
}

env_() {
	[[ -f "${state}/admin.kubeconfig" ]] || die "no cluster at ${state} (run: $0 up)"
	echo "KUBECONFIG=${state}/admin.kubeconfig"
	echo "RUNLORE_CLUSTER_DIR=${state}"
	echo "RUNLORE_CLUSTER_NODE=${node_name}"
	echo "RUNLORE_CLUSTER_REGISTRY=${registry}"
	echo "RUNLORE_CLUSTER_NODE_IP=${node_ip}"
}

import_() {
	[[ -S "${state}/containerd/containerd.sock" ]] || die "no cluster at ${state} (run: $0 up)"
	(($#)) || die "usage: $0 import TARBALL..."
	local f
	for f in "$@"; do ctr_ images import "${f}" >&2; done
}

case "${1:-}" in
up) up ;;
down) down ;;
env) env_ ;;
import) shift; import_ "$@" ;;
*) echo "usage: $0 up|down|env|import TARBALL..." >&2; exit 2 ;;
esac
