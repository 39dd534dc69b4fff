#!/usr/bin/env bash
# A local Kubernetes control plane for kubectl-mindie's tests and demos: the real etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler, plus KWOK faking Atlas nodes and their pods. Loopback only.
#
# Usage:
#   cluster.sh up DIR [--foreground] [--watch-pid PID]
#       Starts a cluster whose files live in DIR (created; a temp folder of yours), waits until it is usable,
#       prints `ready https://127.0.0.1:PORT` and returns. The cluster runs until `cluster.sh down DIR`, or until
#       the process that ran `up` (its parent, or PID; 0: none) ends. --foreground: stay, and stop it on
#       Ctrl-C/SIGTERM.
#       Ctrl-C before ready stops everything too. On failure: one line, the last lines of the failing
#       component's log, exit status 1, nothing left running.
#   cluster.sh down DIR          stops everything that `up DIR` started (by PID); no-op when nothing runs
#   cluster.sh status DIR        component PIDs and resident memory, exit status 1 when not running
#   cluster.sh compact DIR       compacts etcd to its current revision: older resourceVersions then get 410 Expired
#   cluster.sh env DIR           prints shell variables of the cluster (KUBECONFIG, ports, tokens, binaries)
#
# Files in DIR: kubeconfig (admin, group system:masters), kubeconfig-restricted (user mindie-user, admin of
# namespace $MINDIE_CLUSTER_NAMESPACE only), logs/*.log, pki/, env.
# Environment:
#   MINDIE_CLUSTER_BIN               folder of the binaries (default: what tests/cluster/build.sh builds; never built here)
#   MINDIE_CLUSTER_RELEASE           current (default) or oldest: which Kubernetes build.sh's folder holds (1.37 or
#                                    1.19, the oldest the product supports); flags and configuration follow the
#                                    version the binaries' VERSIONS file names
#   MINDIE_CLUSTER_CRDS              CRD folder, its *.yaml files (default: ../shared/reference/crds beside the clone)
#   MINDIE_CLUSTER_PROFILES          hardware profiles (default: manifests/hardware_profiles.yaml)
#   MINDIE_CLUSTER_NODES_PER_PROFILE fake nodes per hardware profile (default 2)
#   MINDIE_CLUSTER_NAMESPACE         namespace of the restricted user (default mindie)
#   MINDIE_CLUSTER_WATCH_CACHE       true to turn the apiserver's watch cache on (default off: lists and watches
#                                    go to etcd, so 410 Expired follows an etcd compaction)
#   MINDIE_CLUSTER_ETCD_PORT, MINDIE_CLUSTER_APISERVER_PORT  fixed ports (default: random free loopback ports)
#   MINDIE_CLUSTER_TIMEOUT           seconds to wait for readiness (default 90)
set -euo pipefail

# The whole script is one function, read before it runs: editing this file cannot break a running cluster.
main() {
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")
root=$(cd "$here/../.." && pwd)
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

case ${1-} in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  status) shift; cmd_status "$@" ;;
  compact) shift; cmd_compact "$@" ;;
  env) shift; cmd_env "$@" ;;
  _run) shift; cmd_run "$@" ;;
  *) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
}

die() { echo "cluster.sh: $*" >&2; exit 1; }

absdir() { [[ -n ${1-} ]] || die "missing DIR"; mkdir -p "$1" && (cd "$1" && pwd); }

# pid_alive PID DIR: the process exists and is one of ours (its command line or environment mentions DIR)
pid_alive() {
  local pid=$1 d=$2
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$d" && return 0
  tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxF -- "MINDIE_CLUSTER_DIR=$d"
}

supervisor_pid() { local p; p=$(cat "$1/supervisor.pid" 2>/dev/null) || return 1; pid_alive "$p" "$1" && echo "$p"; }

cmd_up() {
  local dir="" foreground=0 watch=$PPID
  while (($#)); do
    case $1 in
      --foreground|-f) foreground=1 ;;
      --watch-pid) watch=${2:?--watch-pid PID}; shift ;;
      -*) die "unknown option $1" ;;
      *) [[ -z $dir ]] || die "one DIR only"; dir=$1 ;;
    esac
    shift
  done
  dir=$(absdir "$dir")
  if supervisor_pid "$dir" >/dev/null; then die "a cluster is already running in $dir (cluster.sh down $dir)"; fi
  ((foreground)) && watch=$$
  rm -f "$dir/state" "$dir/failure" "$dir/supervisor.pid"
  MINDIE_CLUSTER_DIR=$dir setsid "$self" _run "$dir" "$watch" </dev/null >"$dir/supervisor.log" 2>&1 &
  local launcher=$! sup="" state=""
  trap 'cmd_down "$dir" >/dev/null 2>&1; echo "cluster.sh: interrupted; stopped" >&2; exit 130' INT TERM HUP
  while :; do
    [[ -n $sup ]] || sup=$(cat "$dir/supervisor.pid" 2>/dev/null || true)
    state=$(cat "$dir/state" 2>/dev/null || true)
    case $state in
      ready*) break ;;
      failed*) wait "$launcher" 2>/dev/null || true; cat "$dir/failure" >&2; exit 1 ;;
    esac
    if ! kill -0 "$launcher" 2>/dev/null && { [[ -z $sup ]] || ! kill -0 "$sup" 2>/dev/null; }; then
      state=$(cat "$dir/state" 2>/dev/null || true)
      [[ $state == ready* ]] && break
      [[ $state == failed* ]] && { cat "$dir/failure" >&2; exit 1; }
      echo "cluster.sh: the supervisor ended before the cluster was ready; last lines of $dir/supervisor.log:" >&2
      tail -n 20 "$dir/supervisor.log" >&2
      cmd_down "$dir" >/dev/null 2>&1
      exit 1
    fi
    sleep 0.2
  done
  echo "$state"
  if ((foreground)); then
    trap 'cmd_down "$dir"; exit 0' INT TERM HUP
    while sup=$(supervisor_pid "$dir"); do sleep 0.5; done
    state=$(cat "$dir/state" 2>/dev/null || true)
    [[ $state == failed* ]] && { cat "$dir/failure" >&2; exit 1; }
  fi
  trap - INT TERM HUP
}

cmd_down() {
  local dir; dir=$(absdir "${1-}")
  local sup i c p ran=0
  if sup=$(supervisor_pid "$dir"); then
    ran=1
    kill -TERM "$sup" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
  fi
  # whatever the supervisor did not stop (it was killed with SIGKILL, say)
  for c in "${components[@]}" supervisor; do
    p=$(cat "$dir/pids/$c.pid" 2>/dev/null || true)
    [[ $c == supervisor ]] && p=$(cat "$dir/supervisor.pid" 2>/dev/null || true)
    if [[ -n $p ]] && pid_alive "$p" "$dir"; then ran=1; kill -KILL "$p" 2>/dev/null || true; fi
  done
  rm -rf "$dir/pids" "$dir/supervisor.pid"
  [[ -f $dir/state && $(cat "$dir/state") != failed* ]] && echo down > "$dir/state"
  if ((ran)); then echo "cluster.sh: stopped $dir" >&2; else echo "cluster.sh: nothing was running in $dir" >&2; fi
}

cmd_status() {
  local dir; dir=$(absdir "${1-}")
  local sup c p rss total=0
  sup=$(supervisor_pid "$dir") || { echo "not running"; return 1; }
  printf '%-24s %8s %10s\n' COMPONENT PID RSS_MiB
  for c in "${components[@]}"; do
    p=$(cat "$dir/pids/$c.pid" 2>/dev/null || true)
    if [[ -n $p ]] && kill -0 "$p" 2>/dev/null; then
      rss=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$p/status")
      total=$((total + rss))
      printf '%-24s %8s %10s\n' "$c" "$p" "$rss"
    else
      printf '%-24s %8s %10s\n' "$c" - -
    fi
  done
  printf '%-24s %8s %10s\n' total "" "$total"
  cat "$dir/state"
}

cmd_env() {
  local dir; dir=$(absdir "${1-}")
  [[ -f $dir/env ]] || die "no cluster in $dir"
  cat "$dir/env"
}

cmd_compact() {
  local dir; dir=$(absdir "${1-}")
  [[ -f $dir/env ]] || die "no cluster in $dir"
  # shellcheck disable=SC1091
  source "$dir/env"
  local rev
  rev=$("$MINDIE_CLUSTER_BIN/etcdctl" endpoint status -w json |
        grep -o '"revision":[0-9]*' | head -n 1 | cut -d: -f2)
  [[ -n $rev ]] || die "cannot read etcd's revision"
  "$MINDIE_CLUSTER_BIN/etcdctl" compact "$rev" --physical >/dev/null
  echo "compacted at revision $rev"
}

# ---------------------------------------------------------------------------------------------------------------
# The supervisor: `cluster.sh _run DIR WATCH_PID`, in a session of its own. Starts the components as its
# children, records their PIDs in DIR/pids, writes DIR/state (`ready URL` or `failed`), then watches them and the
# process WATCH_PID; stops them all (by PID) on SIGTERM/SIGINT/SIGHUP, when WATCH_PID ends, or when one dies.

cmd_run() {
  dir=$1 watch=$2
  echo $$ > "$dir/supervisor.pid"
  declare -gA pid=()
  started=()
  t0=$(date +%s%N)
  set -E
  trap 'teardown; echo down > "$dir/state"; echo "stopped (signal)"; exit 0' TERM INT HUP
  trap teardown EXIT
  trap 'fail "internal error: \"$BASH_COMMAND\" failed (line $LINENO of cluster.sh)"' ERR
  watch_start=""
  if [[ $watch != 0 ]]; then
    watch_start=$(awk '{print $22}' "/proc/$watch/stat" 2>/dev/null) || fail "no process $watch to watch"
  fi

  bin=${MINDIE_CLUSTER_BIN:-$("$here/build.sh" --bin-dir)}
  local b
  for b in etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [[ -x $bin/$b ]] || fail "missing binary $bin/$b (build them: bash tests/cluster/build.sh)"
  done
  for b in openssl curl setsid awk base64; do command -v "$b" >/dev/null || fail "missing command $b"; done
  crds=${MINDIE_CLUSTER_CRDS:-$root/../shared/reference/crds}
  profiles=${MINDIE_CLUSTER_PROFILES:-$root/manifests/hardware_profiles.yaml}
  [[ -d $crds ]] || fail "missing CRD folder $crds"
  [[ -f $profiles ]] || fail "missing hardware profiles $profiles"
  kversion=$(awk '$1 == "kubernetes" {print $2}' "$bin/VERSIONS" 2>/dev/null || true)
  : "${kversion:=v0.0.0}"
  # the minor version: flags and configuration that changed since the oldest release supported (1.19)
  kminor=99
  [[ $kversion =~ ^v1\.([0-9]+)\. ]] && kminor=${BASH_REMATCH[1]}
  # numbers from the environment, checked before anything starts
  local v max
  for v in MINDIE_CLUSTER_TIMEOUT:86400 MINDIE_CLUSTER_ETCD_PORT:65535 MINDIE_CLUSTER_APISERVER_PORT:65535; do
    max=${v#*:} v=${v%%:*}
    [[ -z ${!v-} ]] || { [[ ${!v} =~ ^[1-9][0-9]{0,5}$ ]] && ((${!v} <= max)); } ||
      fail "$v must be a number from 1 to $max, got '${!v}'"
  done
  timeout=${MINDIE_CLUSTER_TIMEOUT:-90}
  rns=${MINDIE_CLUSTER_NAMESPACE:-mindie}

  rm -rf "$dir/pids" "$dir/logs" "$dir/etcd" "$dir/pki" "$dir/certs"
  mkdir -p "$dir/pids" "$dir/logs" "$dir/pki" "$dir/certs"
  chmod 700 "$dir/pki"

  etcd_port=${MINDIE_CLUSTER_ETCD_PORT:-$(free_port)}
  etcd_peer_port=$(free_port "$etcd_port")
  api_port=${MINDIE_CLUSTER_APISERVER_PORT:-$(free_port "$etcd_port" "$etcd_peer_port")}
  kcm_port=$(free_port "$etcd_port" "$etcd_peer_port" "$api_port")
  sched_port=$(free_port "$etcd_port" "$etcd_peer_port" "$api_port" "$kcm_port")
  kwok_node_ip=127.0.10.254
  kwok_port=$(free_port "$etcd_port" "$etcd_peer_port" "$api_port" "$kcm_port" "$sched_port")
  url=https://127.0.0.1:$api_port
  make_pki
  make_configs
  log "files ready"

  # etcd, then the API server (which also waits for etcd, but a failing etcd should say so itself)
  # a name of its own: /health of an etcd that someone else runs on a taken port must not pass for ours
  etcd_name=mindie-$$-$RANDOM
  start etcd "$bin/etcd" --name="$etcd_name" --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster="$etcd_name=http://127.0.0.1:$etcd_peer_port" \
    --unsafe-no-fsync=true --log-level=warn --quota-backend-bytes=$((4 * 1024 * 1024 * 1024))
  wait_for etcd 20 "etcd did not answer /health" \
    curl -sf --max-time 1 "http://127.0.0.1:$etcd_port/health"
  wait_for etcd 5 "the etcd on port $etcd_port is not ours (the port is taken)" etcd_is_ours

  local watch_cache=false
  [[ ${MINDIE_CLUSTER_WATCH_CACHE:-false} == true ]] && watch_cache=true
  start kube-apiserver "$bin/kube-apiserver" \
    --bind-address=127.0.0.1 --secure-port="$api_port" --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --etcd-servers="http://127.0.0.1:$etcd_port" --watch-cache="$watch_cache" \
    --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" --token-auth-file="$dir/pki/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$dir/pki/sa.pub" --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true --profiling=false \
    --cert-dir="$dir/certs/kube-apiserver" "${api_insecure_off[@]}"
  wait_for kube-apiserver 60 "kube-apiserver did not get ready (/readyz)" \
    curl -sf --max-time 2 --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $admin_token" "$url/readyz"

  # everything else at once
  start kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig="$dir/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$kcm_port" --cert-dir="$dir/certs/kube-controller-manager" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$dir/pki/sa.key" --root-ca-file="$dir/pki/ca.crt" \
    --controllers="$(IFS=,; echo "${kcm_controllers[*]}")" \
    --kube-api-qps=100 --kube-api-burst=200 --profiling=false "${insecure_off[@]}"
  start kube-scheduler "$bin/kube-scheduler" --config="$dir/kube-scheduler.yaml" \
    --bind-address=127.0.0.1 --secure-port="$sched_port" --cert-dir="$dir/certs/kube-scheduler" \
    "${insecure_off[@]}"
  # Pod logs: every fake node's kubelet endpoint is KWOK's server (its port in the nodes' daemonEndpoints, their
  # InternalIP --node-ip), which serves the lines of pod.log for every container (ClusterLogs), so that
  # `kubectl logs` and the API server's pods/log reach it (kubernetes-sigs/kwok pkg/kwok/server/debugging_logs.go).
  make_pod_logs
  start kwok "$bin/kwok" --kubeconfig="$dir/kwok.kubeconfig" --config="$here/kwok-stages.yaml" \
    --config="$dir/kwok-logs.yaml" --node-port="$kwok_port" --server-address="$kwok_node_ip:$kwok_port" \
    --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip="$kwok_node_ip" --cidr=10.64.0.0/10 --node-lease-duration-seconds=40
  # AIBrix's published StormService CRD (controller-gen v0.16: `default: ""` on 33 fields) is refused by
  # kube-apiserver 1.19 ("default: Invalid value: \"null\": in body must be of type string"): AIBrix needs a newer
  # release, and a cluster of 1.19 goes without it.
  local crd_files=() f
  shopt -s nullglob
  for f in "$crds"/*.yaml; do
    if ((kminor <= 19)) && [[ $(basename "$f") == orchestration.aibrix.ai_* ]]; then
      log "left out $(basename "$f"): kube-apiserver $kversion refuses it"
      continue
    fi
    crd_files+=("$f")
  done
  shopt -u nullglob
  ((${#crd_files[@]})) || fail "no CRD (*.yaml) in $crds"
  local create_args=(-f "$dir/rbac.yaml")
  for f in "${crd_files[@]}" "$dir/nodes.yaml"; do create_args+=(-f "$f"); done
  kubectl_admin create "${create_args[@]}" > "$dir/logs/create.log" 2>&1 ||
    fail "creating the RBAC objects, CRDs and nodes failed" create
  log "objects created"

  local ncrds nnodes
  ncrds=$(cat "${crd_files[@]}" | grep -c '^kind: CustomResourceDefinition')
  nnodes=$(grep -c '^kind: Node$' "$dir/nodes.yaml")
  wait_for kube-controller-manager 30 "kube-controller-manager did not get healthy" \
    curl -sfk --max-time 1 "https://127.0.0.1:$kcm_port/healthz"
  wait_for kube-scheduler 30 "kube-scheduler did not get healthy" \
    curl -sfk --max-time 1 "https://127.0.0.1:$sched_port/healthz"
  wait_for kube-apiserver 30 "the CRDs did not get Established" \
    count_api "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" '"type":"Established","status":"True"' "$ncrds"
  wait_for kube-controller-manager 30 "no default ServiceAccount: the serviceaccount controller does not work" \
    api "/api/v1/namespaces/$rns/serviceaccounts/default"
  wait_for kwok 30 "KWOK did not make the $nnodes fake nodes Ready" \
    count_api "/api/v1/nodes" '"type":"Ready","status":"True"' "$nnodes"
  wait_for kube-controller-manager 30 "the node-lifecycle controller did not untaint the Ready nodes" \
    none_api "/api/v1/nodes" 'node.kubernetes.io/not-ready'

  local ms=$((($(date +%s%N) - t0) / 1000000))
  log "ready in ${ms} ms"
  echo "$ms" > "$dir/start-ms"
  echo "ready $url" > "$dir/state.tmp" && mv "$dir/state.tmp" "$dir/state"

  # watch
  trap - ERR
  local c
  while :; do
    for c in "${started[@]}"; do
      if ! kill -0 "${pid[$c]}" 2>/dev/null; then
        local rc=0; wait "${pid[$c]}" 2>/dev/null || rc=$?
        fail "$c exited (status $rc) after the cluster was ready" "$c"
      fi
    done
    if [[ -n $watch_start && $(awk '{print $22}' "/proc/$watch/stat" 2>/dev/null) != "$watch_start" ]]; then
      teardown
      echo down > "$dir/state"
      echo "stopped: process $watch ended"
      exit 0
    fi
    sleep 0.5
  done
}

log() { echo "[$(( ($(date +%s%N) - t0) / 1000000 )) ms] $*"; }

# free_port [TAKEN...]: a loopback TCP port nothing listens on (20000-32767: below the ephemeral range)
free_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 12768))
    [[ " $* " == *" $p "* ]] && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
    echo "$p"; return 0
  done
  fail "no free loopback port found"
}

# make_pod_logs: DIR/pod.log, the log every container of a fake node shows (CRI log format, as KWOK reads it
# with k8s.io/cri-client's log reader), and DIR/kwok-logs.yaml, the ClusterLogs that serves it for every pod.
make_pod_logs() {
  {
    echo "2026-01-01T00:00:00.000000000Z stdout F kwok stand-in container: started"
    echo "2026-01-01T00:00:01.000000000Z stdout F kwok stand-in container: serving"
  } >"$dir/pod.log"
  cat >"$dir/kwok-logs.yaml" <<EOF_LOGS
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: mindie-pod-logs
spec:
  selector: {}
  logs:
  - logsFile: $dir/pod.log
    follow: true
EOF_LOGS
}

# start NAME CMD...: a component, as a child of the supervisor, its output in DIR/logs/NAME.log
start() {
  local name=$1; shift
  "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  pid[$name]=$!
  started+=("$name")
  echo "${pid[$name]}" > "$dir/pids/$name.pid"
  log "started $name (pid ${pid[$name]})"
}

# wait_for COMPONENT SECONDS MESSAGE CMD...: until CMD succeeds; fails when COMPONENT exits or time is up
wait_for() {
  local c=$1 secs=$2 msg=$3; shift 3
  ((secs < timeout)) || secs=$timeout
  local limit=$(($(date +%s) + secs)) ok
  while :; do
    ok=0
    "$@" >/dev/null 2>&1 && ok=1
    if ! kill -0 "${pid[$c]}" 2>/dev/null; then
      local rc=0; wait "${pid[$c]}" 2>/dev/null || rc=$?
      fail "$c exited (status $rc) before it was ready" "$c"
    fi
    ((ok)) && break
    (($(date +%s) < limit)) || fail "$msg within ${secs}s" "$c"
    sleep 0.2
  done
  log "$c: ok (${*: -1})"
}

etcd_is_ours() {
  curl -sf --max-time 1 -X POST -d '{}' "http://127.0.0.1:$etcd_port/v3/cluster/member/list" | grep -qF "\"$etcd_name\""
}
api() { curl -sf --max-time 5 -A cluster.sh --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $admin_token" "$url$1"; }
count_api() { local n; n=$(api "$1" | grep -o "$2" | wc -l); ((n >= $3)); }
none_api() { local out; out=$(api "$1") && ! grep -q "$2" <<< "$out"; }
kubectl_admin() { "$bin/kubectl" --kubeconfig="$dir/kubeconfig" "$@"; }

# fail MESSAGE [COMPONENT]: one line, the last lines of COMPONENT's log; stops everything; exit 1
fail() {
  trap - ERR
  {
    echo "cluster.sh: $1"
    if [[ -n ${2-} && -s $dir/logs/$2.log ]]; then
      echo "--- last lines of $dir/logs/$2.log:"
      tail -n 15 "$dir/logs/$2.log"
    fi
  } > "$dir/failure"
  cat "$dir/failure"
  teardown
  echo failed > "$dir/state"
  exit 1
}

# teardown: SIGTERM to every component (the last started first), SIGKILL to what is left after 10 s
teardown() {
  trap - ERR TERM INT HUP
  local i c p deadline alive
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    c=${started[i]}
    p=${pid[$c]}
    kill -TERM "$p" 2>/dev/null || continue
    # storage last: give the clients a moment to go first
    if [[ $c == kube-apiserver || $c == etcd ]]; then
      deadline=$(($(date +%s) + 10))
      while kill -0 "$p" 2>/dev/null && (($(date +%s) < deadline)); do sleep 0.1; done
    fi
  done
  deadline=$(($(date +%s) + 10))
  while :; do
    alive=0
    for c in "${started[@]}"; do kill -0 "${pid[$c]}" 2>/dev/null && alive=1; done
    ((alive)) && (($(date +%s) < deadline)) || break
    sleep 0.1
  done
  for c in "${started[@]}"; do kill -KILL "${pid[$c]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir/pids"
  started=()
}

make_pki() {
  local pki=$dir/pki
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=mindie-local-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,IP:::1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      > apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 30 \
      -extfile apiserver.ext
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
  ) > "$dir/logs/pki.log" 2>&1 || fail "openssl failed" pki
  token() { openssl rand -hex 24; }
  admin_token=$(token) restricted_token=$(token) kcm_token=$(token) sched_token=$(token) kwok_token=$(token)
  {
    echo "$admin_token,admin,uid-admin,system:masters"
    echo "$restricted_token,mindie-user,uid-mindie-user,"
    echo "$kcm_token,system:kube-controller-manager,uid-kube-controller-manager,"
    echo "$sched_token,system:kube-scheduler,uid-kube-scheduler,"
    echo "$kwok_token,kwok-controller,uid-kwok-controller,system:masters"
  } > "$pki/tokens.csv"
  chmod 600 "$pki"/*
}

# kubeconfig FILE USER TOKEN [NAMESPACE]
kubeconfig() {
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: mindie-local
  cluster:
    server: $url
    certificate-authority-data: $(base64 -w0 < "$dir/pki/ca.crt")
users:
- name: $2
  user:
    token: $3
contexts:
- name: $2@mindie-local
  context:
    cluster: mindie-local
    user: $2
    namespace: ${4:-default}
current-context: $2@mindie-local
EOF
  chmod 600 "$1"
}

make_configs() {
  kubeconfig "$dir/kubeconfig" admin "$admin_token"
  kubeconfig "$dir/kubeconfig-restricted" mindie-user "$restricted_token" "$rns"
  kubeconfig "$dir/kube-controller-manager.kubeconfig" system:kube-controller-manager "$kcm_token"
  kubeconfig "$dir/kube-scheduler.kubeconfig" system:kube-scheduler "$sched_token"
  kubeconfig "$dir/kwok.kubeconfig" kwok-controller "$kwok_token"

  # what the product's workloads need: Deployment/StatefulSet/ReplicaSet/Job pods, garbage collection, namespace
  # deletion, default ServiceAccounts and their tokens, Services' endpoints, PDBs, quotas, RBAC aggregation, node
  # lifecycle (node taints from conditions: the apiserver taints new nodes not-ready until this controller sees them
  # Ready) and taint-based eviction
  kcm_controllers=(deployment-controller replicaset-controller statefulset-controller daemonset-controller
    job-controller cronjob-controller ttl-after-finished-controller garbage-collector-controller
    namespace-controller serviceaccount-controller serviceaccount-token-controller
    root-ca-certificate-publisher-controller endpoints-controller endpointslice-controller
    endpointslice-mirroring-controller disruption-controller pod-garbage-collector-controller
    resourcequota-controller clusterrole-aggregation-controller node-lifecycle-controller
    taint-eviction-controller)
  # Before 1.28 the controllers had short names; taint-based eviction was part of node-lifecycle before 1.29.
  ((kminor >= 28)) || kcm_controllers=(deployment replicaset statefulset daemonset job cronjob ttl-after-finished
    garbagecollector namespace serviceaccount serviceaccount-token root-ca-cert-publisher endpoint endpointslice
    endpointslicemirroring disruption podgc resourcequota clusterrole-aggregation nodelifecycle)
  # Before 1.24 kube-apiserver, kube-controller-manager and kube-scheduler also served plain HTTP without
  # authentication (8080, 10252, 10251) unless told not to.
  api_insecure_off=() insecure_off=()
  ((kminor >= 24)) || { api_insecure_off=(--insecure-port=0); insecure_off=(--port=0); }
  # KubeSchedulerConfiguration: v1 since 1.25, v1beta2 since 1.22, v1beta1 before. Before v1beta3 (1.23) the
  # scheduler's plain-HTTP healthz and metrics address comes from it (0.0.0.0:10251 unless set, --port=0
  # notwithstanding; port 0 is refused): loopback and a free port
  local sched_api=v1 sched_plain=""
  ((kminor >= 25)) || sched_api=v1beta2
  ((kminor >= 22)) || sched_api=v1beta1
  if ((kminor < 23)); then
    local plain_port
    plain_port=$(free_port "$etcd_port" "$etcd_peer_port" "$api_port" "$kcm_port" "$sched_port")
    sched_plain="healthzBindAddress: 127.0.0.1:$plain_port"$'\n'"metricsBindAddress: 127.0.0.1:$plain_port"
  fi

  cat > "$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/$sched_api
kind: KubeSchedulerConfiguration
$sched_plain
clientConnection:
  kubeconfig: $dir/kube-scheduler.kubeconfig
  qps: 100
  burst: 200
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
# the product's templates name Volcano; here the default plugins answer for it (no gang scheduling)
- schedulerName: volcano
EOF

  cat > "$dir/rbac.yaml" <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $rns
---
# the product's custom resources, which the built-in admin/edit roles do not cover
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: mindie-custom-resources
rules:
- apiGroups: [mindcluster.huawei.com, orchestration.aibrix.ai, scheduling.volcano.sh]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: mindie-user-admin
  namespace: $rns
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: mindie-user
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: admin
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: mindie-user-custom-resources
  namespace: $rns
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: mindie-user
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: mindie-custom-resources
EOF

  make_nodes > "$dir/nodes.yaml"

  {
    echo "# source this file: the cluster in $dir"
    echo "export KUBECONFIG=$dir/kubeconfig"
    echo "export MINDIE_CLUSTER_DIR=$dir"
    echo "export MINDIE_CLUSTER_URL=$url"
    echo "export MINDIE_CLUSTER_BIN=$bin"
    echo "export MINDIE_CLUSTER_ADMIN_TOKEN=$admin_token"
    echo "export MINDIE_CLUSTER_RESTRICTED_TOKEN=$restricted_token"
    echo "export MINDIE_CLUSTER_RESTRICTED_KUBECONFIG=$dir/kubeconfig-restricted"
    echo "export MINDIE_CLUSTER_RESTRICTED_NAMESPACE=$rns"
    echo "export MINDIE_CLUSTER_CA=$dir/pki/ca.crt"
    echo "export ETCDCTL_ENDPOINTS=http://127.0.0.1:$etcd_port"
  } > "$dir/env"
}

# One fake node per profile of hardware_profiles.yaml, MINDIE_CLUSTER_NODES_PER_PROFILE times. The profiles' file
# is read for name, npus_per_node, npu_resource and the node_selector map (the labels the pods select).
make_nodes() {
  local per=${MINDIE_CLUSTER_NODES_PER_PROFILE:-2} idx=0 name npus res sel i node cpu mem acpu amem kv
  [[ $per =~ ^[0-9]+$ ]] || fail "MINDIE_CLUSTER_NODES_PER_PROFILE must be a number"
  local rows
  rows=$(awk '
    function flush() { if (name != "") print name, npus, res, (sel == "" ? "-" : sel) }
    function val(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); gsub(/^["\047]|["\047]$/, "", s); return s }
    /^[ \t]*#/ { next }
    /^- name:/ { flush(); name = val(substr($0, index($0, ":") + 1)); npus = ""; res = ""; sel = ""; insel = 0; next }
    /^  npus_per_node:/ { npus = val(substr($0, index($0, ":") + 1)); insel = 0; next }
    /^  npu_resource:/ { res = val(substr($0, index($0, ":") + 1)); insel = 0; next }
    /^  node_selector:/ { insel = 1; next }
    /^    [^ ]/ && insel { k = val(substr($0, 1, index($0, ":") - 1)); v = val(substr($0, index($0, ":") + 1));
                           sel = sel (sel == "" ? "" : ",") k "=" v; next }
    /^  [^ ]/ { insel = 0 }
    END { flush() }' "$profiles")
  [[ -n $rows ]] || fail "no profile found in $profiles"
  while read -r name npus res sel; do
    [[ $npus =~ ^[0-9]+$ && -n $res ]] || fail "profile $name of $profiles: npus_per_node or npu_resource unreadable"
    # CPU and memory of the server (typical configurations): Atlas 800I A2, 4 x Kunpeng 920 (48 cores), 1 TiB;
    # Atlas 800I A3 / 900 A3 SuperPoD nodes, 4 x Kunpeng 920 (80 cores), 2 TiB; the A5 servers (Atlas 350/850/950,
    # huawei.com/npu) get the A2 figures, no public configuration saying otherwise. Allocatable keeps some back.
    case $name in
      *A3*) cpu=320 mem=2048 ;;
      *) cpu=192 mem=1024 ;;
    esac
    acpu=$((cpu - 4)) amem=$((mem - 32))
    for ((i = 0; i < per; i++)); do
      node=atlas-$(echo "$name" | tr 'A-Z_' 'a-z-')-$i
      echo "---"
      echo "apiVersion: v1"
      echo "kind: Node"
      echo "metadata:"
      echo "  name: $node"
      echo "  annotations:"
      echo "    kwok.x-k8s.io/node: fake"
      echo "    node.alpha.kubernetes.io/ttl: \"0\""
      echo "  labels:"
      echo "    kubernetes.io/hostname: $node"
      echo "    kubernetes.io/os: linux"
      echo "    kubernetes.io/arch: arm64"
      echo "    node-role.kubernetes.io/worker: \"\""
      echo "    host-arch: huawei-arm"
      echo "    type: kwok"
      echo "    kwok.x-k8s.io/hardware-type: $name"
      if [[ $sel != - ]]; then
        local IFS_save=$IFS; IFS=,
        for kv in $sel; do echo "    ${kv%%=*}: \"${kv#*=}\""; done
        IFS=$IFS_save
      fi
      echo "spec:"
      echo "  podCIDR: 10.$((64 + idx / 256)).$((idx % 256)).0/24"
      echo "  podCIDRs: [10.$((64 + idx / 256)).$((idx % 256)).0/24]"
      echo "status:"
      echo "  addresses:"
      # One address for every node: KWOK's server (the nodes' kubelet endpoint, serving pod logs) listens there.
      echo "  - {type: InternalIP, address: $kwok_node_ip}"
      echo "  - {type: Hostname, address: $node}"
      echo "  capacity: {cpu: \"$cpu\", memory: ${mem}Gi, ephemeral-storage: 7000Gi, pods: \"110\", $res: \"$npus\"}"
      echo "  allocatable: {cpu: \"$acpu\", memory: ${amem}Gi, ephemeral-storage: 6500Gi, pods: \"110\", $res: \"$npus\"}"
      echo "  nodeInfo: {architecture: arm64, operatingSystem: linux, osImage: \"openEuler 22.03 (LTS-SP4)\", kernelVersion: 5.10.0-216.0.0.115.oe2203sp4.aarch64, containerRuntimeVersion: \"containerd://1.7.27\", kubeletVersion: $kversion, kubeProxyVersion: \"\", machineID: \"\", systemUUID: \"\", bootID: \"\"}"
      idx=$((idx + 1))
    done
  done <<< "$rows"
}

main "$@"; exit $?
