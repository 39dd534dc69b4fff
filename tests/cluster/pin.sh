#!/usr/bin/env bash
# Re-pins one of the Go modules that tests/cluster/build.sh builds, writing its go.mod and a complete go.sum:
#   tests/cluster/pin.sh kubernetes v1.37.2   k8s.io/kubernetes, plus a replace to the matching v0.37.2 tag for every
#                                             k8s.io/<staging> module that k8s.io/kubernetes's own go.mod replaces
#   tests/cluster/pin.sh etcd v3.6.16         go.etcd.io/etcd/{server,etcdctl,api,client/...,pkg}/v3
#   tests/cluster/pin.sh kwok v0.8.0          sigs.k8s.io/kwok
# Then run build.sh (the new pins are a new cache key) and commit go/<module>/go.{mod,sum}.
set -euo pipefail

main() {
local here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
local what=${1:?usage: pin.sh kubernetes|etcd|kwok VERSION} v=${2:?usage: pin.sh kubernetes|etcd|kwok VERSION}
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod
local goline; goline="go $(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/').0"
local d=$here/go/$what
mkdir -p "$d"
cd "$d"
case $what in
  kubernetes)
    [[ $v =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "pin.sh: want v1.Y.Z" >&2; exit 2; }
    local staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}" modfile
    modfile=$(go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^\s*"GoMod": "\(.*\)",*$/\1/p')
    [[ -f $modfile ]] || { echo "pin.sh: cannot download k8s.io/kubernetes@$v" >&2; exit 1; }
    {
      echo "// Pins the Kubernetes control-plane binaries built by tests/cluster/build.sh (not a library)."
      echo "module kubectl-mindie/tests/cluster/go/kubernetes"
      echo
      echo "$goline"
      echo
      echo "require k8s.io/kubernetes $v"
      echo
      echo "tool ("
      for t in kube-apiserver kube-controller-manager kube-scheduler kubectl; do echo "	k8s.io/kubernetes/cmd/$t"; done
      echo ")"
      echo
      echo "// k8s.io/kubernetes replaces its staging modules with ./staging/src/...; the same releases as tags:"
      echo "replace ("
      awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 } $1 == "replace" && $3 == "=>" && $4 ~ /^\.\/staging\// { print $2 }' \
        "$modfile" | sort -u | while read -r m; do echo "	$m => $m $staging"; done
      echo ")"
    } > go.mod ;;
  etcd)
    {
      echo "// Pins the etcd server (and etcdctl) built by tests/cluster/build.sh (not a library)."
      echo "module kubectl-mindie/tests/cluster/go/etcd"
      echo
      echo "$goline"
      echo
      echo "require ("
      for m in api client/pkg client etcdctl pkg server; do echo "	go.etcd.io/etcd/$m/v3 $v"; done
      echo ")"
      echo
      echo "tool ("
      echo "	go.etcd.io/etcd/etcdctl/v3"
      echo "	go.etcd.io/etcd/server/v3"
      echo ")"
    } > go.mod ;;
  kwok)
    {
      echo "// Pins KWOK (the kwok controller binary) built by tests/cluster/build.sh (not a library)."
      echo "module kubectl-mindie/tests/cluster/go/kwok"
      echo
      echo "$goline"
      echo
      echo "require sigs.k8s.io/kwok $v"
      echo
      echo "tool sigs.k8s.io/kwok/cmd/kwok"
    } > go.mod ;;
  *) echo "usage: pin.sh kubernetes|etcd|kwok VERSION" >&2; exit 2 ;;
esac
rm -f go.sum
go mod tidy
echo "pinned $what $v: $d/go.mod; new cache key $("$here/build.sh" --key)"
}
main "$@"; exit $?
