#!/usr/bin/env bash
# Re-pins one of the Go modules that tests/cluster/build.sh builds, writing its go.mod and a complete go.sum:
#   tests/cluster/pin.sh kubernetes v1.37.2   k8s.io/kubernetes, plus a replace to the matching v0.37.2 tag for every
#                                             k8s.io/<staging> module that k8s.io/kubernetes's own go.mod replaces,
#                                             and its other replaces as they are (releases before 1.22 pin every
#                                             dependency that way; a replace only counts in the main module)
#   tests/cluster/pin.sh kubernetes-oldest v1.19.16   the same into go/kubernetes-oldest: the oldest release the
#                                             product supports (MINDIE_CLUSTER_RELEASE=oldest build.sh)
#   tests/cluster/pin.sh etcd v3.6.16         go.etcd.io/etcd/{server,etcdctl,api,client/...,pkg}/v3
#   tests/cluster/pin.sh kwok v0.8.0          sigs.k8s.io/kwok
# Then run build.sh (the new pins are a new cache key) and commit go/<module>/go.{mod,sum}.
set -euo pipefail

# module_file FIELD MODULE@VERSION: the Dir or GoMod of a module in the module cache (downloaded when missing)
module_file() { go mod download -json "$2" | sed -n "s/^\s*\"$1\": \"\(.*\)\",*\$/\1/p"; }

# openapi_inputs VERSION STAGING_VERSION: a Go file for the wrapper module of a Kubernetes release before 1.24, which
# did not ship pkg/generated/openapi/zz_generated.openapi.go (its build generated it; committed from 1.24 on,
# kubernetes/kubernetes#108381). It lists, as blank imports, every package that the release's
# build/root/Makefile.generated_files gives openapi-gen for that file: the packages of k8s.io/kubernetes and of its
# staging modules (but code-generator and sample-apiserver) with a file holding a `// +k8s:` tag and
# `+k8s:openapi-gen=`. The imports make `go mod tidy` pin every module they need (kubelet's and kube-proxy's are
# in no binary's graph); build.sh reads the list back as openapi-gen's input.
openapi_inputs() {
  local v=$1 staging=$2 kdir m dir
  kdir=$(module_file Dir "k8s.io/kubernetes@$v")
  # tagged_dirs MODULE DIR: the import paths of DIR's tagged packages (no vendor/, staging/, _*, .*); grep exits 1
  # for a batch of files without a match, hence no pipefail here
  tagged_dirs() {
    (set +o pipefail; cd "$2" && find -H . \( -path './_*' -o -path './.*' -o -path ./vendor -o -path ./staging \) \
      -prune -o -type f -name '*.go' -print0 | xargs -0 grep -l -Z '^// *+k8s:' |
      xargs -0 -r grep -l '+k8s:openapi-gen=' | sed -e 's|/[^/]*$||' -e "s|^\.|$1|")
  }
  echo "//go:build tools"
  echo
  echo "// The packages whose API types kube-apiserver $v's OpenAPI definitions describe: what its Makefile gives"
  echo "// openapi-gen (tests/cluster/pin.sh writes this list; build.sh generates the definitions from it)."
  echo "package tools"
  echo
  echo "import ("
  {
    tagged_dirs k8s.io/kubernetes "$kdir"
    for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$kdir/go.mod"); do
      [[ $m == k8s.io/code-generator || $m == k8s.io/sample-apiserver ]] && continue
      # (sample-controller and sample-cli-plugin have no tags for patch releases; the module proxy serves none)
      dir=$(module_file Dir "$m@$staging" 2>/dev/null) || true
      if [[ -n $dir ]]; then tagged_dirs "$m" "$dir"; else echo "pin.sh: $m@$staging not served; skipped" >&2; fi
    done
  } | LC_ALL=C sort -u | sed 's/.*/\t_ "&"/'
  echo ")"
}

main() {
local here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
local usage="usage: pin.sh kubernetes|kubernetes-oldest|etcd|kwok VERSION"
local what=${1:?$usage} v=${2:?$usage}
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod
local goline; goline="go $(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/').0"
local d=$here/go/$what
mkdir -p "$d"
cd "$d"
case $what in
  kubernetes|kubernetes-oldest)
    [[ $v =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "pin.sh: want v1.Y.Z" >&2; exit 2; }
    local minor=${BASH_REMATCH[1]} staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}" modfile
    modfile=$(module_file GoMod "k8s.io/kubernetes@$v")
    [[ -f $modfile ]] || { echo "pin.sh: cannot download k8s.io/kubernetes@$v" >&2; exit 1; }
    {
      echo "// Pins the Kubernetes control-plane binaries built by tests/cluster/build.sh (not a library)."
      echo "module kubectl-mindie/tests/cluster/go/$what"
      echo
      echo "$goline"
      echo
      echo "require k8s.io/kubernetes $v"
      echo
      echo "tool ("
      for t in kube-apiserver kube-controller-manager kube-scheduler kubectl; do echo "	k8s.io/kubernetes/cmd/$t"; done
      # before 1.24 build.sh generates kube-apiserver's OpenAPI definitions itself (openapi_inputs.go says why)
      ((minor >= 24)) || echo "	k8s.io/kube-openapi/cmd/openapi-gen"
      echo ")"
      echo
      echo "// k8s.io/kubernetes replaces its staging modules with ./staging/src/...; the same releases as tags:"
      echo "replace ("
      awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 } $1 == "replace" && $3 == "=>" && $4 ~ /^\.\/staging\// { print $2 }' \
        "$modfile" | sort -u | while read -r m; do echo "	$m => $m $staging"; done
      echo ")"
      # Its other replaces (old releases pin every dependency by one), as they are, but for two that the machine's
      # Go cannot take: vbom.ml/util, whose domain is gone (the module proxy answers 403), is the same code as
      # github.com/fvbommel/util; github.com/modern-go/reflect2 before v1.0.2 reads Go's map iterator layout of
      # before Go 1.18 and crashes json-iterator (modern-go/reflect2 v1.0.2 release notes; Kubernetes 1.24 took it).
      local others
      others=$(awk '/^replace \($/ { r = 1; next } r && /^\)/ { r = 0; next }
        r && $2 == "=>" && $3 !~ /^\.\// { print $1, $3, $4 }
        $1 == "replace" && $3 == "=>" && $4 !~ /^\.\// { print $2, $4, $5 }' "$modfile" | sort -u |
        awk 'function older(a, b, x, y, i) { # semantic versions vX.Y.Z: a before b
               split(substr(a, 2), x, /[.+-]/); split(substr(b, 2), y, /[.+-]/)
               for (i = 1; i <= 3; i++) if (x[i] + 0 != y[i] + 0) return x[i] + 0 < y[i] + 0
               return 0 }
             $2 == "vbom.ml/util" { $2 = "github.com/fvbommel/util" }
             $2 == "github.com/modern-go/reflect2" && older($3, "v1.0.2") { $3 = "v1.0.2" }
             { print "\t" $1 " => " $2 " " $3 }')
      if [[ -n $others ]]; then
        echo
        echo "// k8s.io/kubernetes $v pins these dependencies by replace, which counts only in the main module:"
        echo "replace ("
        echo "$others"
        echo ")"
      fi
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
  *) echo "$usage" >&2; exit 2 ;;
esac
rm -f go.sum openapi_inputs.go
[[ $what != kubernetes* ]] || ((minor >= 24)) || openapi_inputs "$v" "$staging" > openapi_inputs.go
go mod tidy
local release=current
[[ $what == kubernetes-oldest ]] && release=oldest
echo "pinned $what $v: $d/go.mod; new cache key $(MINDIE_CLUSTER_RELEASE=$release "$here/build.sh" --key)"
}
main "$@"; exit $?
