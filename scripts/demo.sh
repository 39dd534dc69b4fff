#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, start the sandbox API server, then
# deploy -> status -> scale -> status -> update-config with the example under examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh

work=$(mktemp -d)
sandbox_pid=
cleanup() {
  [[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null && wait "$sandbox_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The sandbox prints "ready URL" once it serves; reading that line is the synchronisation.
mkfifo "$work/ready"
./build/mindie-sandbox --listen 127.0.0.1:0 --kubeconfig-out "$work/kubeconfig" --simulate-operator \
  --crd ../shared/reference/crds/mindcluster.huawei.com_crds.yaml \
  --crd ../shared/reference/crds/scheduling.volcano.sh_podgroups.yaml --namespace mindie-demo >"$work/ready" &
sandbox_pid=$!
read -r ready <"$work/ready"
echo "sandbox: $ready"
export KUBECONFIG="$work/kubeconfig"
mindie=./build/kubectl-mindie

step() { echo; echo "\$ kubectl mindie $*"; "$mindie" "$@"; }
step deploy --config-dir examples --scripts-dir examples/scripts
step status -n mindie-demo
step scale -n mindie-demo --prefill 2 --decode 2
step status -n mindie-demo
sed 's/"log_level": "INFO"/"log_level": "DEBUG"/' examples/user_config.json >"$work/user_config.json"
# The counts now live in the cluster's baseline: update-config must carry them unchanged.
sed -i -e 's/"p_instances_num": 1/"p_instances_num": 2/' -e 's/"d_instances_num": 1/"d_instances_num": 2/' \
  "$work/user_config.json"
step update-config -f "$work/user_config.json"
