#!/usr/bin/env bash
# Checks a running local cluster (tests/cluster/cluster.sh up DIR) with its own kubectl:
#   nodes, versions, a Deployment on an Atlas 800I A2 node, the scheduler's Insufficient huawei.com/Ascend910,
#   a StatefulSet, schedulerName volcano, every KWOK failure stage, the restricted user's RBAC, 410 Expired
#   after an etcd compaction, and namespace deletion. Run it on a fresh cluster: the Deployment takes a whole
#   8-NPU 800I_A2 node (with the example deployed, both default ones are in use and it stays Pending).
# Usage: tests/cluster/smoke.sh DIR      prints one line per check and `N passed, N failed`; exit 1 on a failure
set -uo pipefail

main() {
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(cd "${1:?usage: smoke.sh DIR}" && pwd)
# shellcheck disable=SC1091
source "$dir/env"
k() { "$MINDIE_CLUSTER_BIN/kubectl" --kubeconfig="$dir/kubeconfig" "$@"; }
kr() { "$MINDIE_CLUSTER_BIN/kubectl" --kubeconfig="$dir/kubeconfig-restricted" "$@"; }
passed=0 failed=0
check() { # check NAME CMD...
  local name=$1; shift
  local out t=$SECONDS
  if out=$("$@" 2>&1); then
    passed=$((passed + 1)); echo "PASS $name ($((SECONDS - t))s)"
  else
    failed=$((failed + 1)); echo "FAIL $name ($((SECONDS - t))s)"; echo "$out" | tail -n 15 | sed 's/^/     /'
  fi
}
# until SECONDS CMD...: retries CMD every second
until_ok() { local end=$((SECONDS + $1)); shift; until "$@"; do ((SECONDS < end)) || return 1; sleep 1; done; }

ns=smoke-$RANDOM
nodes=$(k get nodes --no-headers | wc -l)

check "nodes Ready ($nodes)" bash -c "(($nodes > 0)) && ! $MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get nodes --no-headers | grep -v ' Ready '"
check "server and client versions" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig version | tee /dev/stderr | grep -c 'Version: v1\.' | grep -qx 2"
k create namespace "$ns" >/dev/null

cat <<EOF | k apply -n "$ns" -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: engine}
spec:
  replicas: 1
  selector: {matchLabels: {app: engine}}
  template:
    metadata: {labels: {app: engine}}
    spec:
      nodeSelector: {accelerator: huawei-Ascend910, accelerator-type: module-910b-8}
      containers:
      - name: engine
        image: mindie:sim
        resources:
          requests: {huawei.com/Ascend910: "8", cpu: "16", memory: 64Gi}
          limits: {huawei.com/Ascend910: "8"}
---
apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  nodeSelector: {accelerator: huawei-Ascend910}
  containers:
  - name: engine
    image: mindie:sim
    resources:
      requests: {huawei.com/Ascend910: "32"}
      limits: {huawei.com/Ascend910: "32"}
---
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: db:sim}]
---
apiVersion: v1
kind: Pod
metadata: {name: gang}
spec:
  schedulerName: volcano
  nodeSelector: {accelerator-type: module-a3-16}
  containers:
  - name: engine
    image: mindie:sim
    resources:
      requests: {huawei.com/Ascend910: "16"}
      limits: {huawei.com/Ascend910: "16"}
EOF
sims=""
for sim in ImagePullBackOff ContainerCreating CrashLoopBackOff OOMKilled NotReady SlowStart; do
  sims+="---
apiVersion: v1
kind: Pod
metadata:
  name: sim-$(echo "$sim" | tr 'A-Z' 'a-z')
  annotations:
    kwok.x-k8s.io/sim: $sim
    kwok.x-k8s.io/sim-run: 1s
    kwok.x-k8s.io/sim-backoff: 3s
    kwok.x-k8s.io/sim-delay: 15s
spec:
  containers: [{name: main, image: \"app:sim\"}]
"
done
k apply -n "$ns" -f - <<< "$sims" >/dev/null
status_is() { # POD REGEX: the line of kubectl get pods matches
  k get pod -n "$ns" "$1" --no-headers | grep -E "$2"
}
check "sim SlowStart: Running, not ready at first" until_ok 10 status_is sim-slowstart ' 0/1 +Running '

rollout() { # the Deployment's rollout, or the scheduler's reason why not
  k rollout status -n "$ns" deployment/engine --timeout=60s && return 0
  k get events -n "$ns" --field-selector reason=FailedScheduling -o jsonpath='{.items[*].message}'; echo
  return 1
}
check "Deployment on an 800I_A2 node, Ready" rollout
check "  its pod is on atlas-800i-a2-*" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get pods -n $ns -l app=engine -o jsonpath='{.items[0].spec.nodeName}' | grep -q '^atlas-800i-a2-'"
insufficient() {
  k get events -n "$ns" --field-selector involvedObject.name=too-big,reason=FailedScheduling -o jsonpath='{.items[*].message}' |
    grep -E "0/$nodes nodes are available: .*Insufficient huawei.com/Ascend910"
}
check "32 NPUs: 0/$nodes nodes are available ... Insufficient huawei.com/Ascend910" until_ok 30 insufficient
check "StatefulSet of 2 Ready" k rollout status -n "$ns" statefulset/db --timeout=60s
check "schedulerName volcano pod Ready on an 800I_A3 node" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig wait -n $ns pod/gang --for=condition=Ready --timeout=60s && $MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get pod -n $ns gang -o jsonpath='{.spec.nodeName}' | grep -q '^atlas-800i-a3-'"

check "sim ImagePullBackOff" until_ok 30 status_is sim-imagepullbackoff ' 0/1 +ImagePullBackOff '
check "  its events Failed and BackOff" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get events -n $ns --field-selector involvedObject.name=sim-imagepullbackoff -o jsonpath='{.items[*].reason}' | grep -w Failed | grep -qw BackOff"
check "sim ContainerCreating" until_ok 30 status_is sim-containercreating ' 0/1 +ContainerCreating '
check "sim CrashLoopBackOff with restarts" until_ok 30 status_is sim-crashloopbackoff ' 0/1 +(CrashLoopBackOff|Error|Running) +([2-9]|[1-9][0-9]+) '
check "  its last exit code" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get pod -n $ns sim-crashloopbackoff -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}' | grep -qx '1 Error'"
check "sim OOMKilled" until_ok 30 bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig get pod -n $ns sim-oomkilled -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason} {.status.containerStatuses[0].restartCount}' | grep -E '^137 OOMKilled [1-9]'"
check "sim NotReady: Running 0/1" until_ok 30 status_is sim-notready ' 0/1 +Running +0 '
check "sim SlowStart: ready after sim-delay" until_ok 30 status_is sim-slowstart ' 1/1 +Running '
echo "--- kubectl get pods -n $ns"
k get pods -n "$ns" -o wide | sed 's/^/     /'

rns=$MINDIE_CLUSTER_RESTRICTED_NAMESPACE
check "restricted user: may create a Deployment in $rns" kr create deployment -n "$rns" smoke-$RANDOM --image=x:sim
check "restricted user: may create a PodGroup in $rns" bash -c "printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: smoke-$RANDOM}\nspec: {minMember: 1}\n' | $MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig-restricted create -n $rns -f -"
check "restricted user: may not list nodes" bash -c "! $MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig-restricted get nodes 2>&1 | tee /dev/stderr | grep -v Forbidden | grep -q ."
check "restricted user: Forbidden in namespace default" bash -c "$MINDIE_CLUSTER_BIN/kubectl --kubeconfig=$dir/kubeconfig-restricted get pods -n default 2>&1 | grep -q Forbidden"

expired() {
  local rv out
  k create configmap -n "$ns" rv-probe --from-literal=a=1 >/dev/null
  rv=$(k get configmap -n "$ns" rv-probe -o jsonpath='{.metadata.resourceVersion}')
  k delete configmap -n "$ns" rv-probe >/dev/null
  # one more write: compacting at the delete itself would leave the delete event watchable without its previous
  # value (kube-apiserver then answers 500 "etcd event received with PrevKv=nil", a real corner case)
  k create configmap -n "$ns" rv-probe-2 --from-literal=a=1 >/dev/null
  "$here/cluster.sh" compact "$dir" >/dev/null || return 1
  out=$(k get --raw "/api/v1/namespaces/$ns/configmaps?resourceVersion=$rv&resourceVersionMatch=Exact" 2>&1)
  echo "list at $rv: $out"
  grep -q 'Expired\|410\|too old' <<< "$out" || return 1
  out=$(timeout 5 "$MINDIE_CLUSTER_BIN/kubectl" --kubeconfig="$dir/kubeconfig" get --raw "/api/v1/namespaces/$ns/configmaps?watch=1&resourceVersion=$rv" 2>&1)
  echo "watch from $rv: $out"
  grep -q '"code":410' <<< "$out"
}
check "410 Expired after an etcd compaction (list and watch)" expired

check "namespace deletion finishes" k delete namespace "$ns" --timeout=90s

echo "$passed passed, $failed failed"
((failed == 0))
}
main "$@"; exit $?
