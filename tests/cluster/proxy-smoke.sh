#!/usr/bin/env bash
# Checks mindie-fault-proxy (tests/cluster/go/testkit/cmd/mindie-fault-proxy) in front of a running local cluster
# (tests/cluster/cluster.sh up DIR), with the cluster's own kubectl: requests pass and are logged, a watch is cut by
# /proxy/close-watches, a 409 fault on PATCH, lose-reply on a ConfigMap create, hold and hold-reply with
# /proxy/held and /proxy/release, and the exit on SIGTERM.
# Usage: tests/cluster/proxy-smoke.sh DIR PROXY_BINARY
#   prints one line per check (with PROXY_SMOKE_VERBOSE=1 what each saw) and `N passed, N failed`; exit 1 on a
#   failure. Works in namespace px-smoke-*,
#   deleted at the end with the proxy. Synchronises on output and /proxy/held, never on time (the `read -t` and
#   timeoutSeconds bounds only stop a broken run from hanging).
set -euo pipefail

main() {
dir=$(cd "${1:?usage: proxy-smoke.sh DIR PROXY_BINARY}" && pwd)
proxy_bin=${2:?usage: proxy-smoke.sh DIR PROXY_BINARY}
[[ -x $proxy_bin ]] || { echo "proxy-smoke.sh: $proxy_bin is not an executable" >&2; exit 2; }
# shellcheck disable=SC1091
source "$dir/env"
kubectl=$MINDIE_CLUSTER_BIN/kubectl
work=$(mktemp -d)
ns=px-smoke-$$-$RANDOM
proxy_pid="" passed=0 failed=0
trap cleanup EXIT

ka() { "$kubectl" --kubeconfig="$dir/kubeconfig" --cache-dir="$work/cache" "$@"; }  # straight to the API server
kp() { "$kubectl" --kubeconfig="$work/kubeconfig" --cache-dir="$work/cache" "$@"; } # through the proxy

start_proxy
ka create namespace "$ns" >/dev/null
ka create configmap c1 -n "$ns" --from-literal=a=0 >/dev/null
ka create configmap c2 -n "$ns" >/dev/null

check "get pods -A through the proxy, logged" check_get
check "get -w: close-watches cuts the watch" check_watch
check "409 fault on PATCH, then the patch lands" check_409
check "lose-reply: the ConfigMap exists, kubectl got no answer" check_lose_reply
check "hold: held before forwarding until released" check_hold
check "hold-reply: applied, answer held until released" check_hold_reply
check "control requests not logged, token not logged" check_log_hygiene
check "SIGTERM: the proxy exits 0" check_sigterm

echo "$passed passed, $failed failed"
((failed == 0))
}

cleanup() {
  local pids=()
  # this shell's own children still running (by PID): the proxy, a kubectl of a failed check
  mapfile -t pids < <(jobs -p)
  ((${#pids[@]} == 0)) || { kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
  exec 3>&- 4<&- 5<&-
  ka delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}

check() { # check NAME FUNCTION: runs FUNCTION in this shell, its output kept for a failure
  local name=$1 t=$SECONDS
  if "$2" >"$work/check.out" 2>&1; then
    passed=$((passed + 1)); echo "PASS $name ($((SECONDS - t))s)"
    [[ ${PROXY_SMOKE_VERBOSE-} != 1 ]] || sed 's/^/     /' "$work/check.out"
  else
    failed=$((failed + 1)); echo "FAIL $name ($((SECONDS - t))s)"; tail -n 20 "$work/check.out" | sed 's/^/     /'
  fi
}

fail() { echo "$*"; return 1; }

# The proxy's stdin is a FIFO this script holds open (--exit-on-stdin-eof: if the script dies, so does the proxy);
# its stdout a FIFO read up to the ready line.
start_proxy() {
  mkfifo "$work/proxy.in" "$work/proxy.out"
  "$proxy_bin" --upstream "$MINDIE_CLUSTER_URL" --upstream-ca "$dir/pki/ca.crt" \
    --cert "$dir/pki/apiserver.crt" --key "$dir/pki/apiserver.key" --request-log "$work/requests.jsonl" \
    --exit-on-stdin-eof <"$work/proxy.in" >"$work/proxy.out" 2>"$work/proxy.err" &
  proxy_pid=$!
  exec 3>"$work/proxy.in" 4<"$work/proxy.out"
  local line=""
  IFS= read -r -t 30 line <&4 || true
  [[ $line == "ready https://"* ]] || { echo "proxy-smoke.sh: the proxy did not start: ${line:-no ready line}"; \
    cat "$work/proxy.err"; exit 1; } >&2
  url=${line#ready }
  echo "proxy $url (pid $proxy_pid)"
  ka config view --raw --minify >"$work/kubeconfig"
  local cluster
  cluster=$(ka config view --minify -o 'jsonpath={.clusters[0].name}')
  kp config set-cluster "$cluster" --server="$url" >/dev/null
}

# lines_after N: the request log after its first N lines
lines_after() { tail -n +"$(($1 + 1))" "$work/requests.jsonl"; }
# logged N: the log after its first N lines into $work/lines, and shown
logged() { lines_after "$1" >"$work/lines"; sed 's/^/  log: /' "$work/lines"; }
log_size() { wc -l <"$work/requests.jsonl"; }

# control METHOD PATH [BODY]: a /proxy/ endpoint through kubectl --raw (create: POST, get: GET, delete: DELETE)
control() {
  case $1 in
    POST) printf '%s' "${3-}" >"$work/body.json"; kp create --raw "$2" -f "$work/body.json" ;;
    GET) kp get --raw "$2" ;;
    DELETE) kp delete --raw "$2" ;;
  esac
}

# wait_line FD TEXT: reads lines from FD until one contains TEXT (false at EOF, or after 60 s without a line)
wait_line() {
  local line
  while IFS= read -r -t 60 line <&"$1"; do
    echo "  | $line"
    [[ $line == *"$2"* ]] && return 0
  done
  return 1
}

check_get() {
  local mark direct proxied
  mark=$(log_size)
  proxied=$(kp get pods -A -o name) || fail "kubectl get pods -A through the proxy failed" || return
  direct=$(ka get pods -A -o name)
  echo "$(wc -l <<<"$proxied") pods through the proxy"
  [[ $proxied == "$direct" ]] || fail "through the proxy: $proxied; directly: $direct" || return
  logged "$mark"
  grep -q '"method":"GET","path":"/api/v1/pods","query":"limit=500",.*"status":200,"upstreamStatus":200}' "$work/lines" \
    || fail "GET /api/v1/pods is not logged" || return
}

check_watch() {
  mkfifo "$work/watch.out"
  kp get configmap c2 -n "$ns" -w >"$work/watch.out" 2>&1 &
  local pid=$! rc=0 closed
  exec 5<"$work/watch.out"
  wait_line 5 c2 || fail "the watch printed no c2" || return
  # A change that only the open watch can deliver: once kubectl prints it, the watch is established.
  ka label configmap c2 -n "$ns" "seen=$RANDOM" --overwrite >/dev/null
  wait_line 5 c2 || fail "the watch did not deliver the change" || return
  closed=$(control POST /proxy/close-watches '{}') || fail "close-watches failed" || return
  echo "close-watches: $closed"
  [[ $closed == '{"closed":1}' ]] || fail "expected one watch closed" || return
  # kubectl get -w ends on a broken watch: it reports the broken stream and exits.
  wait_line 5 "unable to decode an event from the watch stream" || fail "kubectl did not report the cut" || return
  exec 5<&-
  wait "$pid" || rc=$?
  echo "kubectl exited $rc"
}

check_409() {
  local mark out
  mark=$(log_size)
  control POST /proxy/faults "{\"spec\":\"PATCH:/api/v1/namespaces/$ns/configmaps/c1:409:1\"}" >/dev/null \
    || fail "add fault" || return
  if out=$(kp patch configmap c1 -n "$ns" -p '{"data":{"a":"1"}}' 2>&1); then fail "the patch passed: $out"; return; fi
  echo "kubectl: $out"
  [[ $out == *"Error from server (Conflict)"*"injected fault for PATCH /api/v1/namespaces/$ns/configmaps/c1"* ]] \
    || fail "not the injected Conflict" || return
  [[ $(ka get configmap c1 -n "$ns" -o 'jsonpath={.data.a}') == 0 ]] || fail "the faulted patch changed c1" || return
  kp patch configmap c1 -n "$ns" -p '{"data":{"a":"1"}}' || fail "the second patch failed (COUNT 1)" || return
  [[ $(ka get configmap c1 -n "$ns" -o 'jsonpath={.data.a}') == 1 ]] || fail "the second patch did not land" || return
  out=$(control GET /proxy/faults)
  echo "faults: $out"
  [[ $out == *'"kind":"409","remaining":0'* ]] || fail "the rule is not spent" || return
  control DELETE /proxy/faults >/dev/null
  logged "$mark"
  [[ $(grep -c '"method":"PATCH"' "$work/lines") == 2 ]] || fail "two PATCHes expected in the log" || return
  grep -q '"method":"PATCH",.*"status":409,"fault":"409"}' "$work/lines" || fail "the 409 is not logged" || return
}

check_lose_reply() {
  local mark out
  mark=$(log_size)
  control POST /proxy/faults "{\"spec\":\"POST:/api/v1/namespaces/$ns/configmaps:lose-reply:1\"}" >/dev/null \
    || fail "add fault" || return
  if out=$(kp create configmap lost -n "$ns" --from-literal=k=v 2>&1); then fail "kubectl got an answer: $out"; return; fi
  echo "kubectl: $out"
  [[ $(ka get configmap lost -n "$ns" -o 'jsonpath={.data.k}') == v ]] || fail "the ConfigMap was not created" || return
  control DELETE /proxy/faults >/dev/null
  logged "$mark"
  grep -q '"method":"POST","path":"/api/v1/namespaces/'"$ns"'/configmaps",.*"status":0,"fault":"lose-reply","upstreamStatus":201}' \
    "$work/lines" || fail "lose-reply is not logged with status 0 and upstreamStatus 201" || return
}

check_hold() {
  local mark held id pid rc=0 out
  mark=$(log_size)
  control POST /proxy/faults "{\"spec\":\"GET:/api/v1/namespaces/$ns/configmaps/c1:hold:1\"}" >/dev/null \
    || fail "add fault" || return
  kp get configmap c1 -n "$ns" -o name >"$work/hold.out" 2>&1 &
  pid=$!
  held=$(control GET "/proxy/held?min=1&timeoutSeconds=60") || fail "nothing held" || return
  echo "held: $held"
  [[ $held == *"\"path\":\"/api/v1/namespaces/$ns/configmaps/c1\""*'"kind":"hold"'* ]] || fail "not the request" || return
  id=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"$held")
  kill -0 "$pid" 2>/dev/null || fail "kubectl ended while its request was held: $(cat "$work/hold.out")" || return
  lines_after "$mark" >"$work/lines"
  ! grep -q "/configmaps/c1" "$work/lines" || fail "logged before it was answered" || return
  out=$(control POST /proxy/release "{\"id\":\"$id\"}") || fail "release failed" || return
  echo "release: $out"
  [[ $out == '{"released":1}' ]] || fail "expected one released" || return
  wait "$pid" || rc=$?
  echo "kubectl exited $rc: $(cat "$work/hold.out")"
  ((rc == 0)) && [[ $(cat "$work/hold.out") == configmap/c1 ]] || fail "kubectl did not get its answer" || return
  control DELETE /proxy/faults >/dev/null
  logged "$mark"
  grep -q '"path":"/api/v1/namespaces/'"$ns"'/configmaps/c1",.*"status":200,"fault":"hold","upstreamStatus":200}' \
    "$work/lines" || fail "the held request is not logged" || return
}

check_hold_reply() {
  local held pid rc=0 out
  control POST /proxy/faults "{\"spec\":\"DELETE:/api/v1/namespaces/$ns/configmaps/c2:hold-reply:1\"}" >/dev/null \
    || fail "add fault" || return
  kp delete configmap c2 -n "$ns" --wait=false >"$work/hold.out" 2>&1 &
  pid=$!
  held=$(control GET "/proxy/held?min=1&timeoutSeconds=60") || fail "nothing held" || return
  echo "held: $held"
  [[ $held == *'"method":"DELETE"'*'"kind":"hold-reply"'* ]] || fail "not the request" || return
  # The API server has deleted it; kubectl is still waiting for the answer.
  if out=$(ka get configmap c2 -n "$ns" 2>&1); then fail "c2 still exists: $out"; return; fi
  echo "directly: $out"
  kill -0 "$pid" 2>/dev/null || fail "kubectl ended while its answer was held: $(cat "$work/hold.out")" || return
  out=$(control POST /proxy/release '{}') || fail "release failed" || return
  [[ $out == '{"released":1}' ]] || fail "release: $out" || return
  wait "$pid" || rc=$?
  echo "kubectl exited $rc: $(cat "$work/hold.out")"
  ((rc == 0)) && grep -q 'configmap "c2" deleted' "$work/hold.out" || fail "kubectl did not get its answer" || return
  control DELETE /proxy/faults >/dev/null
}

check_log_hygiene() {
  ! grep -q '"path":"/proxy/' "$work/requests.jsonl" || fail "a control request is logged" || return
  ! grep -qF "$MINDIE_CLUSTER_ADMIN_TOKEN" "$work/requests.jsonl" || fail "the token is in the log" || return
  echo "$(log_size) lines, every one with the six keys:"
  ! grep -v '^{"method":"[A-Z]*","path":"[^"]*","query":"[^"]*","contentType":"[^"]*","body":".*","status":[0-9]*' \
    "$work/requests.jsonl" || fail "a line without the harness's keys" || return
}

check_sigterm() {
  local rc=0 pid=$proxy_pid
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  proxy_pid=""
  echo "exit status $rc; stderr: $(cat "$work/proxy.err")"
  ((rc == 0)) || fail "exit status $rc" || return
}

main "$@"
