#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build the plugin and the local control plane, start a
# real Kubernetes cluster on loopback (tests/cluster/cluster.sh: etcd, kube-apiserver, controller-manager,
# scheduler, KWOK Atlas nodes) with the fake infer-operator, then deploy -> wait -> status -> scale -> wait -> status
# -> update-config -> delete with the example under examples/.
# The first run builds the control plane from Go modules: about 6 minutes on 2 cores (tests/cluster/README.md), and
# the plugin about 3 more; later runs reuse them and take about 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "building the control plane (the first time: about 6 minutes on 2 cores; then reused) and the plugin"
bin=$(bash tests/cluster/build.sh)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Only what the demo runs: the plugin and the fake operator (not the test targets).
cmake --build build -j "$(nproc)" --target kubectl-mindie testkit

work=$(mktemp -d)
operator_pid=
cleanup() {
  [[ -n $operator_pid ]] && kill "$operator_pid" 2>/dev/null && wait "$operator_pid" 2>/dev/null
  bash tests/cluster/cluster.sh down "$work/cluster" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# `up` returns once the cluster is usable ("ready URL"); the cluster ends with this script at the latest.
bash tests/cluster/cluster.sh up "$work/cluster" --watch-pid $$
export KUBECONFIG=$work/cluster/kubeconfig
# The fake infer-operator prints "ready" once its caches are synced: reading that line is the synchronisation.
mkfifo "$work/operator-ready"
./build/testkit/mindie-fake-operator --kubeconfig "$KUBECONFIG" --max-backoff 30s >"$work/operator-ready" \
  2>"$work/cluster/logs/fake-operator.log" &
operator_pid=$!
read -r line <"$work/operator-ready"
echo "fake infer-operator: $line"
"$bin/kubectl" create namespace mindie-demo

mindie=./build/kubectl-mindie
step() { echo; echo "\$ kubectl mindie $*"; "$mindie" "$@"; }
step deploy --config-dir examples --scripts-dir examples/scripts
step wait -n mindie-demo --for=ready --timeout 3m
step status -n mindie-demo
step scale -n mindie-demo --prefill 2 --decode 2 --wait --timeout 3m
step status -n mindie-demo
sed 's/"log_level": "INFO"/"log_level": "DEBUG"/' examples/user_config.json >"$work/user_config.json"
# The counts now live in the cluster's baseline: update-config must carry them unchanged.
sed -i -e 's/"p_instances_num": 1/"p_instances_num": 2/' -e 's/"d_instances_num": 1/"d_instances_num": 2/' \
  "$work/user_config.json"
step update-config -f "$work/user_config.json"
echo; echo "\$ kubectl get pods -n mindie-demo"; "$bin/kubectl" get pods -n mindie-demo
step delete -n mindie-demo --wait
echo
echo "Next: a cluster of your own to try the plugin on: tests/cluster/README.md (cluster.sh up DIR --foreground)."
