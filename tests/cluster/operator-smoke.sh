#!/usr/bin/env bash
# Checks the fake infer-operator (and its AIBrix StormService controller) against a running local cluster
# (tests/cluster/cluster.sh up DIR): it starts OPERATOR against DIR, waits for its `ready`, then in namespaces of
# its own (op-smoke-*):
#   A  kubectl mindie deploy of examples/user_config.json: the object chain, names, labels, ownerReferences,
#      statuses, `kubectl mindie status` healthy; status following pod readiness; scale out and in; delete and
#      garbage collection of everything;
#   B  a gang-scheduled decode role: its PodGroup, left behind on scale-in; foreground deletion;
#   C  a NodePort role Service without nodePort: a ValidateError event, nothing made for the role;
#   D  a nodePort another Service holds: a ServiceCreateError event, no workload until the port is free;
#   E  a StormService: its pods, status, a deleted pod recreated, scale, delete;
# and that the operator refuses a bad kubeconfig or an unreachable server with one line and stops with status 0 on
# SIGTERM.
# Usage: tests/cluster/operator-smoke.sh DIR OPERATOR      prints one line per check and `N passed, N failed`;
#        exit 1 on a failure. KUBECTL_MINDIE overrides the product binary (default build/kubectl-mindie).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$(cd "${1:?usage: operator-smoke.sh DIR OPERATOR}" && pwd)
operator=$(realpath "${2:?usage: operator-smoke.sh DIR OPERATOR}")
mindie=${KUBECTL_MINDIE:-$root/build/kubectl-mindie}
scripts=$root/examples/scripts
kubeconfig=$dir/kubeconfig
# shellcheck disable=SC1091
source "$dir/env"
kubectl_bin=$MINDIE_CLUSTER_BIN/kubectl
k() { "$kubectl_bin" --kubeconfig="$kubeconfig" "$@"; }
km() { "$mindie" --kubeconfig "$kubeconfig" "$@"; }

tmp=$(mktemp -d)
run_id=$RANDOM
ns_a=op-smoke-$run_id-a ns_b=op-smoke-$run_id-b ns_c=op-smoke-$run_id-c ns_d=op-smoke-$run_id-d
ns_e=op-smoke-$run_id-e
op_pid=

cleanup() {
  set +e
  if [[ -n $op_pid ]] && kill -0 "$op_pid" 2>/dev/null; then
    kill -TERM "$op_pid"
    wait "$op_pid"
  fi
  for ns in "$ns_a" "$ns_b"; do
    km delete -n "$ns" >/dev/null 2>&1 # its cluster RBAC too
  done
  k delete namespace "$ns_a" "$ns_b" "$ns_c" "$ns_d" "$ns_e" --ignore-not-found --wait=false >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
# A setup step (not a check) that fails ends the run: say which, with the count so far.
trap 'echo "ERROR line $LINENO: $BASH_COMMAND"; echo "$passed passed, $((failed + 1)) failed"' ERR

passed=0 failed=0
check() { # check NAME CMD...
  local name=$1
  shift
  local out t=$SECONDS
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    echo "PASS $name ($((SECONDS - t))s)"
  else
    failed=$((failed + 1))
    echo "FAIL $name ($((SECONDS - t))s)"
    echo "$out" | tail -n 15 | sed 's/^/     /'
  fi
}
# expect WANT CMD...: CMD's output is exactly WANT
expect() {
  local want=$1 got
  shift
  got=$("$@") || return 1
  [[ $got == "$want" ]] || {
    echo "want: $want"
    echo "got:  $got"
    return 1
  }
}
# contains TEXT CMD...: CMD succeeds and its output contains TEXT
contains() {
  local text=$1 got
  shift
  got=$("$@" 2>&1) || {
    echo "$got"
    return 1
  }
  [[ $got == *"$text"* ]] || {
    echo "no \"$text\" in:"
    echo "$got"
    return 1
  }
}
# created NS TIMEOUT OBJECT...: waits for each OBJECT to exist (kubectl wait --for=create takes one object at a time)
created() {
  local ns=$1 timeout=$2 o
  shift 2
  for o in "$@"; do
    k wait -n "$ns" --for=create "$o" --timeout="$timeout" || return 1
  done
}
# absent KIND/NAME NS: the object does not exist
absent() { [[ -z $(k get "$1" -n "$2" --ignore-not-found -o name) ]]; }
# first_line SECONDS CMD...: prints the first line CMD writes (a watch), within SECONDS; CMD is stopped then
first_line() {
  local t=$1 line fd pid rc=0
  shift
  exec {fd}< <(exec "$@" 2>/dev/null)
  pid=$!
  IFS= read -r -t "$t" -u "$fd" line || rc=1
  kill "$pid" 2>/dev/null || true
  exec {fd}<&-
  printf '%s\n' "$line"
  return $rc
}
# event_message NS REASON: the message of the first Warning event with REASON in NS (watched, within 60 s)
event_message() {
  first_line 60 "$kubectl_bin" --kubeconfig="$kubeconfig" get events -n "$1" --watch \
    --field-selector "type=Warning,reason=$2" -o 'custom-columns=OBJ:.involvedObject.name,MSG:.message' --no-headers
}
# config NS "INFER OBS CONTROLLER_OBS" [PODS_PER_DECODE]: the example config deploying into NS with those nodePorts
config() {
  python3 - "$root/examples/user_config.json" "$tmp/$1.json" "$1" "$2" "${3:-1}" <<'EOF'
import json, sys
src, dst, ns, ports, pods = sys.argv[1:]
infer, obs, controller_obs = (int(p) for p in ports.split())
c = json.load(open(src))
c["motor_deploy_config"].update(job_id=ns, infer_node_port=infer, obs_node_port=obs,
                                controller_obs_node_port=controller_obs, single_d_instance_pod_num=int(pods))
json.dump(c, open(dst, "w"), indent=2)
EOF
  echo "$tmp/$1.json"
}
# apply_bypassing NS CONFIG EDIT: the namespaced objects deploy would write (ConfigMap, ServiceAccount,
# InferServiceSet), applied by kubectl after the Python statement EDIT changed the InferServiceSet `iss`
apply_bypassing() {
  km deploy -f "$2" --scripts-dir "$scripts" --dry-run=client -o json 2>/dev/null |
    python3 -c "
import json, sys
objs = json.load(sys.stdin)['items']
out = []
for iss in objs:
    if iss['kind'] == 'InferServiceSet':
        $3
    if iss['kind'] in ('ConfigMap', 'ServiceAccount', 'InferServiceSet'):
        out.append(iss)
json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': out}, sys.stdout)
" >"$tmp/$1-objects.json"
  k apply --server-side -n "$1" -f "$tmp/$1-objects.json" >/dev/null
}
# free_node_ports N: N nodePorts no Service of the cluster holds
free_node_ports() {
  local used
  used=$(k get services -A -o jsonpath='{range .items[*].spec.ports[*]}{.nodePort}{"\n"}{end}')
  python3 -c "
import random, sys
used = set(int(x) for x in sys.argv[2].split() if x)
free = [p for p in range(30100, 32700) if p not in used]
print(' '.join(map(str, random.sample(free, int(sys.argv[1])))))" "$1" "$used"
}

iss="mindie-motor-vllm"
is=$iss-0
read -r port_a port_b port_c port_d obs_a obs_b obs_c obs_d cobs_a cobs_b cobs_c cobs_d <<<"$(free_node_ports 12)"

# --- the CLI contract ---------------------------------------------------------------------------------------------
one_line_failure() { # one_line_failure KUBECONFIG: status 1, exactly one line on stderr, nothing on stdout
  local out err rc=0
  out=$(timeout 60 "$operator" --kubeconfig "$1" 2>"$tmp/stderr") || rc=$?
  err=$(cat "$tmp/stderr")
  echo "status $rc, stdout [$out], stderr [$err]"
  ((rc == 1)) && [[ -z $out ]] && (($(wc -l <"$tmp/stderr") == 1))
}
check "a kubeconfig that does not exist: status 1, one line" one_line_failure "$tmp/missing-kubeconfig"
sed -E 's#server: https://[^[:space:]]+#server: https://127.0.0.1:1#' "$kubeconfig" >"$tmp/unreachable-kubeconfig"
check "an unreachable API server: status 1, one line" one_line_failure "$tmp/unreachable-kubeconfig"

mkfifo "$tmp/operator.out"
# The e2e tests' cap on the retry backoff (the default is the real operator's: up to 1000 s).
"$operator" --kubeconfig "$kubeconfig" --max-backoff 30s >"$tmp/operator.out" 2>"$tmp/operator.log" &
op_pid=$!
exec {op_out}<"$tmp/operator.out"
ready_line() {
  local line
  IFS= read -r -t 90 -u "$op_out" line || return 1
  [[ $line == ready ]]
}
check "the operator prints ready" ready_line
if ((failed > 0)); then
  tail -n 20 "$tmp/operator.log"
  echo "$passed passed, $failed failed"
  exit 1
fi

# --- A: deploy, statuses, scale, delete ----------------------------------------------------------------------------
k create namespace "$ns_a" >/dev/null
cfg_a=$(config "$ns_a" "$port_a $obs_a $cobs_a")
check "A: kubectl mindie deploy" km deploy -f "$cfg_a" --scripts-dir "$scripts"
check "A: InferServiceSet Ready" k wait -n "$ns_a" --for=condition=Ready "inferserviceset/$iss" --timeout=180s
check "A: every pod Ready" k wait -n "$ns_a" --for=condition=Ready pod -l "infer.huawei.com/inferservice-name=$is" \
  --timeout=60s
check "A: InferService and InstanceSets" expect \
  "$is $is-controller $is-coordinator $is-decode $is-kv-conductor $is-kv-pool $is-prefill" \
  bash -c "echo \$($kubectl_bin --kubeconfig=$kubeconfig get inferservices,instancesets -n $ns_a \
    -o jsonpath='{range .items[*]}{.metadata.name}{\" \"}{end}')"
check "A: one workload per instance, of the role's kind" expect \
  "deployment.apps/$is-controller-0 deployment.apps/$is-coordinator-0 statefulset.apps/$is-decode-0 statefulset.apps/$is-prefill-0" \
  bash -c "echo \$($kubectl_bin --kubeconfig=$kubeconfig get deployments,statefulsets -n $ns_a -o name)"
check "A: role Services and headless per-instance Services" expect \
  "controller-$is-controller coordinator-$is-coordinator infer-$is-coordinator obs-$is-controller obs-$is-coordinator service-$is-decode-0 service-$is-prefill-0" \
  bash -c "echo \$($kubectl_bin --kubeconfig=$kubeconfig get services -n $ns_a \
    -o jsonpath='{range .items[*]}{.metadata.name}{\" \"}{end}')"
check "A: the inference NodePort keeps its nodePort (+ InferService index 0)" expect "$port_a" \
  k get service -n "$ns_a" "infer-$is-coordinator" -o jsonpath='{.spec.ports[0].nodePort}'
check "A: controller ownerReferences with blockOwnerDeletion down the chain" expect \
  "InferServiceSet/$iss true true InferService/$is true true InstanceSet/$is-prefill true true InstanceSet/$is-prefill true true" \
  bash -c "for o in inferservice/$is instanceset/$is-prefill statefulset/$is-prefill-0 service/service-$is-prefill-0; do
      $kubectl_bin --kubeconfig=$kubeconfig get -n $ns_a \$o \
        -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller} {.metadata.ownerReferences[0].blockOwnerDeletion} '
    done | sed 's/ \$//'"
check "A: InstanceSet labels: role labels, InferService, role, strategy Parallel; schedule policy annotation" expect \
  "prefill $is prefill Parallel chip8-node8" \
  k get instanceset -n "$ns_a" "$is-prefill" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/component} {.metadata.labels.infer\.huawei\.com/inferservice-name} {.metadata.labels.infer\.huawei\.com/instanceset-name} {.metadata.labels.infer\.huawei\.com/priority-scheduling-strategy} {.metadata.annotations.huawei\.com/schedule_policy}'
check "A: a workload keeps the role's selector and Parallel policy, gets the operator's env" expect \
  "mindie-motor-vllm-prefill Parallel service-$is-prefill-0 INSTANCE_INDEX=0 INSTANCE_ROLE=prefill INFER_SERVICE_INDEX=0 INFER_SERVICE_NAME=$iss" \
  bash -c "$kubectl_bin --kubeconfig=$kubeconfig get statefulset -n $ns_a $is-prefill-0 -o jsonpath='{.spec.selector.matchLabels.app} {.spec.podManagementPolicy} {.spec.serviceName}{range .spec.template.spec.containers[0].env[-4:]} {.name}={.value}{end}'"
check "A: pods carry the operator's labels" expect "$is prefill 0 true grace" \
  k get pod -n "$ns_a" "$is-prefill-0-0" -o jsonpath='{.metadata.labels.infer\.huawei\.com/inferservice-name} {.metadata.labels.infer\.huawei\.com/instanceset-name} {.metadata.labels.infer\.huawei\.com/instanceset-index} {.metadata.labels.infer\.huawei\.com/ascend-infer-operator} {.metadata.labels.fault-scheduling}'
statuses() {
  local generation observed
  generation=$(k get -n "$ns_a" "inferserviceset/$iss" -o jsonpath='{.metadata.generation}')
  observed=$(k get -n "$ns_a" "inferserviceset/$iss" -o jsonpath='{.status.observedGeneration}')
  [[ $generation == "$observed" ]] || {
    echo "generation $generation, observedGeneration $observed"
    return 1
  }
  k get -n "$ns_a" "inferserviceset/$iss" -o jsonpath='{.status.replicas} {.status.readyReplicas} | '
  k get -n "$ns_a" "inferservice/$is" -o jsonpath='{.status.replicas} {.status.readyReplicas} | '
  k get -n "$ns_a" "instanceset/$is-prefill" \
    -o jsonpath='{.status.replicas} {.status.readyReplicas} {.status.conditions[?(@.type=="Ready")].reason}'
}
check "A: statuses: set 1/1 (generation observed), InferService 6/6, InstanceSet 1/1 AllWorkLoadReady" expect \
  "1 1 | 6 6 | 1 1 AllWorkLoadReady" statuses
check "A: kubectl mindie status: healthy" contains "every desired pod exists and is ready" km status -n "$ns_a"
check "A: kubectl mindie status -o json: ready" expect True \
  bash -c "$mindie --kubeconfig $kubeconfig status -n $ns_a -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"ready\"])'"

# Status follows pod readiness (watches, no polling): a prefill pod that fails readiness makes its InstanceSet,
# InferService and set not Ready; back when it is replaced by a ready one.
k patch statefulset -n "$ns_a" "$is-prefill-0" --type=merge \
  -p '{"spec":{"template":{"metadata":{"annotations":{"kwok.x-k8s.io/sim":"NotReady"}}}}}' >/dev/null
check "A: an unready pod: InstanceSet not Ready" k wait -n "$ns_a" --for=condition=Ready=false \
  "instanceset/$is-prefill" --timeout=60s
check "A: an unready pod: InferServiceSet not Ready" k wait -n "$ns_a" --for=condition=Ready=false \
  "inferserviceset/$iss" --timeout=30s
replacement_unready() {
  k wait -n "$ns_a" --for=jsonpath='{.metadata.annotations.kwok\.x-k8s\.io/sim}'=NotReady "pod/$is-prefill-0-0" \
    --timeout=60s && k wait -n "$ns_a" --for=condition=Ready=false "pod/$is-prefill-0-0" --timeout=60s
}
check "A: an unready pod: the replacement pod runs unready" replacement_unready
check "A: an unready pod: kubectl mindie status says so" contains "not ready: pod $is-prefill-0-0" \
  km status -n "$ns_a"
k patch statefulset -n "$ns_a" "$is-prefill-0" --type=json \
  -p '[{"op":"remove","path":"/spec/template/metadata/annotations/kwok.x-k8s.io~1sim"}]' >/dev/null
# A StatefulSet does not replace a broken pod on a rollback (unless it is already at it).
k delete pod -n "$ns_a" "$is-prefill-0-0" --ignore-not-found --wait=false >/dev/null
check "A: ready again: InstanceSet Ready" k wait -n "$ns_a" --for=condition=Ready "instanceset/$is-prefill" \
  --timeout=60s
check "A: ready again: InferServiceSet Ready" k wait -n "$ns_a" --for=condition=Ready "inferserviceset/$iss" \
  --timeout=30s

check "A: kubectl mindie scale --prefill 2" km scale -n "$ns_a" --prefill 2
check "A: scale-out: the new instance's StatefulSet and pod" created "$ns_a" 60s \
  "statefulset/$is-prefill-1" "service/service-$is-prefill-1" "pod/$is-prefill-1-0"
check "A: scale-out: the new pod Ready" k wait -n "$ns_a" --for=condition=Ready "pod/$is-prefill-1-0" --timeout=60s
check "A: scale-out: InstanceSet reports 2 ready" k wait -n "$ns_a" --for=jsonpath='{.status.readyReplicas}'=2 \
  "instanceset/$is-prefill" --timeout=60s
check "A: scale-out: kubectl mindie wait --for=ready" km wait -n "$ns_a" --for=ready --timeout 60s
check "A: kubectl mindie scale --prefill 1" km scale -n "$ns_a" --prefill 1
check "A: scale-in: the instance's StatefulSet, Service and pod go" k wait -n "$ns_a" --for=delete \
  "statefulset/$is-prefill-1" "service/service-$is-prefill-1" "pod/$is-prefill-1-0" --timeout=60s
check "A: scale-in: InstanceSet reports 1 of 1" k wait -n "$ns_a" --for=jsonpath='{.status.readyReplicas}'=1 \
  "instanceset/$is-prefill" --timeout=60s
check "A: scale-in: kubectl mindie status healthy" contains "every desired pod exists and is ready" \
  km status -n "$ns_a"

# Everything the operator made, by name, then a delete: the garbage collector removes it all.
children=$(k get inferservices,instancesets,deployments,replicasets,statefulsets,services,pods -n "$ns_a" -o name | tr '\n' ' ')
check "A: kubectl mindie delete --wait" km delete -n "$ns_a" --wait --timeout 120s
# shellcheck disable=SC2086
check "A: garbage collection removes every child ($(wc -w <<<"$children") objects)" \
  k wait -n "$ns_a" --for=delete $children --timeout=60s
check "A: nothing left" expect "" k get inferservicesets,inferservices,instancesets,deployments,statefulsets,services,pods \
  -n "$ns_a" -o name

# --- B: gang role, PodGroups, foreground deletion -----------------------------------------------------------------
k create namespace "$ns_b" >/dev/null
cfg_b=$(config "$ns_b" "$port_b $obs_b $cobs_b" 2)
check "B: deploy with 2 pods per decode instance (gang)" km deploy -f "$cfg_b" --scripts-dir "$scripts" --wait \
  --timeout 180s
check "B: the decode instance's PodGroup: minMember 2, owned by the InstanceSet" expect \
  "2 InstanceSet/$is-decode true 0" k get podgroup -n "$ns_b" "pg-$is-decode-0" \
  -o jsonpath='{.spec.minMember} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.labels.infer\.huawei\.com/gang-schedule} {.metadata.labels.infer\.huawei\.com/instanceset-index}'
check "B: decode pods name their PodGroup" expect "pg-$is-decode-0 pg-$is-decode-0" \
  k get pods -n "$ns_b" -l infer.huawei.com/instanceset-name=decode \
  -o jsonpath='{.items[0].metadata.annotations.scheduling\.k8s\.io/group-name} {.items[1].metadata.annotations.scheduling\.k8s\.io/group-name}'
decode_role=$(k get inferserviceset -n "$ns_b" "$iss" -o json |
  python3 -c 'import json,sys; print([r["name"] for r in json.load(sys.stdin)["spec"]["template"]["roles"]].index("decode"))')
k patch inferserviceset -n "$ns_b" "$iss" --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/template/roles/$decode_role/replicas\",\"value\":2}]" >/dev/null
check "B: scale-out by patch: a PodGroup and StatefulSet for instance 1" created "$ns_b" 60s \
  "podgroup/pg-$is-decode-1" "statefulset/$is-decode-1"
k patch inferserviceset -n "$ns_b" "$iss" --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/template/roles/$decode_role/replicas\",\"value\":1}]" >/dev/null
check "B: scale-in by patch: instance 1's StatefulSet goes" k wait -n "$ns_b" --for=delete \
  "statefulset/$is-decode-1" --timeout=60s
check "B: scale-in leaves instance 1's PodGroup behind" expect "podgroup.scheduling.volcano.sh/pg-$is-decode-1" \
  k get podgroup -n "$ns_b" "pg-$is-decode-1" -o name
children=$(k get inferservices,instancesets,deployments,statefulsets,services,pods,podgroups -n "$ns_b" -o name | tr '\n' ' ')
check "B: foreground deletion of the InferServiceSet completes" k delete inferserviceset -n "$ns_b" "$iss" \
  --cascade=foreground --timeout=120s
check "B: ... after every child is gone" expect "" \
  k get inferservices,instancesets,deployments,statefulsets,services,pods,podgroups -n "$ns_b" -o name
# shellcheck disable=SC2086
check "B: ... (each of the $(wc -w <<<"$children") by name)" k wait -n "$ns_b" --for=delete $children --timeout=10s
km delete -n "$ns_b" >/dev/null 2>&1 || true

# --- C: a refused InstanceSet ---------------------------------------------------------------------------------------
k create namespace "$ns_c" >/dev/null
cfg_c=$(config "$ns_c" "$port_c $obs_c $cobs_c")
apply_bypassing "$ns_c" "$cfg_c" "[p.pop('nodePort', None) for r in iss['spec']['template']['roles'] for s in r.get('services', []) for p in s['spec']['ports']]"
check "C: NodePort entry without nodePort: ValidateError on the InstanceSet" expect \
  "$is-coordinator   nodePort of service<infer> should config as non-zero" event_message "$ns_c" ValidateError
check "C: the other roles are reconciled" created "$ns_c" 60s "deployment/$is-controller-0" \
  "statefulset/$is-prefill-0"
check "C: nothing for the refused role: no workload, no Service, no status" bash -c "
  [[ -z \$($kubectl_bin --kubeconfig=$kubeconfig get -n $ns_c deployment/$is-coordinator-0 service/coordinator-$is-coordinator --ignore-not-found -o name) ]] &&
  [[ -z \$($kubectl_bin --kubeconfig=$kubeconfig get -n $ns_c instanceset/$is-coordinator -o jsonpath='{.status}') ]]"
check "C: kubectl mindie status names the refusal" contains \
  "infer-operator refuses instanceset/$is-coordinator and creates nothing for it (ValidateError" km status -n "$ns_c"
k delete namespace "$ns_c" --wait=false >/dev/null

# --- D: a refused role Service --------------------------------------------------------------------------------------
k create namespace "$ns_d" >/dev/null
k create service nodeport holder -n "$ns_d" --tcp=80:80 --node-port="$port_d" >/dev/null
cfg_d=$(config "$ns_d" "$port_d $obs_d $cobs_d")
apply_bypassing "$ns_d" "$cfg_d" "pass"
check "D: a taken nodePort: ServiceCreateError on the InstanceSet" contains \
  "provided port is already allocated" event_message "$ns_d" ServiceCreateError
check "D: Services before workloads: the other role Service exists, no coordinator workload" bash -c "
  [[ -n \$($kubectl_bin --kubeconfig=$kubeconfig get -n $ns_d service/coordinator-$is-coordinator -o name) ]] &&
  [[ -z \$($kubectl_bin --kubeconfig=$kubeconfig get -n $ns_d deployment/$is-coordinator-0 --ignore-not-found -o name) ]]"
k delete service holder -n "$ns_d" >/dev/null
check "D: once the port is free the retried reconcile creates the Service and the workload" created "$ns_d" 90s \
  "service/infer-$is-coordinator" "deployment/$is-coordinator-0"
k delete namespace "$ns_d" --wait=false >/dev/null

# --- E: AIBrix StormService -----------------------------------------------------------------------------------------
k create namespace "$ns_e" >/dev/null
k apply -n "$ns_e" -f - >/dev/null <<'EOF'
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: StormService
metadata: {name: tiny}
spec:
  replicas: 1
  stateful: true
  selector: {matchLabels: {app: tiny}}
  template:
    metadata: {labels: {app: tiny}}
    spec:
      roles:
      - name: prefill
        replicas: 2
        podGroupSize: 1
        stateful: true
        template:
          metadata: {labels: {app: tiny, team: inference}}
          spec:
            containers: [{name: engine, image: tiny:sim, resources: {requests: {cpu: 100m}}}]
      - name: decode
        replicas: 1
        podGroupSize: 2
        stateful: true
        template:
          metadata: {labels: {app: tiny}}
          spec:
            containers: [{name: engine, image: tiny:sim, resources: {requests: {cpu: 100m}}}]
EOF
pods_e="pod/tiny-roleset-prefill-0 pod/tiny-roleset-prefill-1 pod/tiny-roleset-decode-0-0 pod/tiny-roleset-decode-0-1"
# shellcheck disable=SC2086
check "E: one pod per role replica and pod-group slot" created "$ns_e" 60s $pods_e
# shellcheck disable=SC2086
check "E: the pods Ready" k wait -n "$ns_e" --for=condition=Ready $pods_e --timeout=60s
check "E: StormService Ready, roleStatuses counted in replicas" k wait -n "$ns_e" --for=condition=Ready \
  stormservice/tiny --timeout=30s
check "E: roleStatuses" expect "prefill 2/2, decode 1/1" k get stormservice -n "$ns_e" tiny \
  -o jsonpath='{.status.roleStatuses[0].name} {.status.roleStatuses[0].readyReplicas}/{.status.roleStatuses[0].replicas}, {.status.roleStatuses[1].name} {.status.roleStatuses[1].readyReplicas}/{.status.roleStatuses[1].replicas}'
check "E: AIBrix's labels" expect "tiny decode tiny-roleset 0 1" k get pod -n "$ns_e" tiny-roleset-decode-0-1 \
  -o jsonpath='{.metadata.labels.storm-service-name} {.metadata.labels.role-name} {.metadata.labels.roleset-name} {.metadata.labels.stormservice\.orchestration\.aibrix\.ai/role-replica-index} {.metadata.labels.stormservice\.orchestration\.aibrix\.ai/pod-group-index}'
uid=$(k get pod -n "$ns_e" tiny-roleset-prefill-1 -o jsonpath='{.metadata.uid}')
k delete pod -n "$ns_e" tiny-roleset-prefill-1 --wait=false >/dev/null
recreated() {
  k wait -n "$ns_e" --for=create pod/tiny-roleset-prefill-1 --timeout=60s >/dev/null &&
    k wait -n "$ns_e" --for=condition=Ready pod/tiny-roleset-prefill-1 --timeout=60s >/dev/null &&
    [[ $(k get pod -n "$ns_e" tiny-roleset-prefill-1 -o jsonpath='{.metadata.uid}') != "$uid" ]]
}
check "E: a deleted pod comes back under its name (a new pod)" recreated
k patch stormservice -n "$ns_e" tiny --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/roles/0/replicas","value":3}]' >/dev/null
check "E: scale-out" k wait -n "$ns_e" --for=condition=Ready pod/tiny-roleset-prefill-2 --timeout=60s
k patch stormservice -n "$ns_e" tiny --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/roles/0/replicas","value":2}]' >/dev/null
check "E: scale-in" k wait -n "$ns_e" --for=delete pod/tiny-roleset-prefill-2 --timeout=60s
check "E: status follows" k wait -n "$ns_e" --for=jsonpath='{.status.roleStatuses[0].replicas}'=2 \
  stormservice/tiny --timeout=30s
pods_e=$(k get pods -n "$ns_e" -o name | tr '\n' ' ')
k delete stormservice -n "$ns_e" tiny --wait=false >/dev/null
# shellcheck disable=SC2086
check "E: deleting the StormService removes its pods" k wait -n "$ns_e" --for=delete $pods_e --timeout=60s

# --- the operator stops cleanly ----------------------------------------------------------------------------------
# (not in check's subshell: only this shell can wait for the operator)
rc=0
kill -TERM "$op_pid"
wait "$op_pid" || rc=$?
op_pid=
check "SIGTERM: the operator exits 0 (status $rc)" test "$rc" -eq 0
check "the operator did not panic" bash -c "! grep -i panic $tmp/operator.log"

if ((failed > 0)); then
  echo "--- last lines of the operator's log:"
  tail -n 30 "$tmp/operator.log"
fi
echo "$passed passed, $failed failed"
if ((failed > 0)); then exit 1; fi
