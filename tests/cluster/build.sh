#!/usr/bin/env bash
# Builds the real control-plane binaries for the local test cluster from the Go modules pinned in
# tests/cluster/go/{kubernetes,etcd,kwok}/go.{mod,sum} (go/kubernetes-oldest instead of go/kubernetes for the oldest
# release supported, whose openapi_inputs.go also names the packages of its generated OpenAPI definitions):
#   kube-apiserver kube-controller-manager kube-scheduler kubectl   (k8s.io/kubernetes)
#   etcd etcdctl                                                    (go.etcd.io/etcd/{server,etcdctl}/v3)
#   kwok                                                            (sigs.k8s.io/kwok/cmd/kwok)
# into ${MINDIE_CLUSTER_CACHE:-$HOME/.cache/kubectl-mindie/cluster}/<key>/bin, where <key> is a hash of the pins
# (every file of the modules' folders), the Go version, the platform and the build recipe. A complete folder is
# reused as it is. Prints the bin folder (the only line on stdout); progress goes to stderr.
#
# Usage: tests/cluster/build.sh [--key | --bin-dir]
#   --key      print the cache key and exit (no build)
#   --bin-dir  print the bin folder of the current pins and exit (no build; it may not exist yet)
# Environment: MINDIE_CLUSTER_RELEASE (current, the default: the Kubernetes of go/kubernetes; oldest: the oldest
#              release the product supports, go/kubernetes-oldest, with the same etcd and KWOK),
#              MINDIE_CLUSTER_CACHE (cache root), MINDIE_CLUSTER_NICE (niceness of the go builds, default 19),
#              the usual Go variables (GOPROXY, GOMODCACHE, GOCACHE). GOFLAGS is replaced: go.sum must be complete.
set -euo pipefail
# (the whole script is one function, read before it runs: editing this file during a build cannot break the build)
main() {

local here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${MINDIE_CLUSTER_RELEASE:-current} in
  current) kmod=kubernetes ;;
  oldest) kmod=kubernetes-oldest ;;
  *) echo "build.sh: MINDIE_CLUSTER_RELEASE must be current or oldest" >&2; exit 2 ;;
esac
mods=("$kmod" etcd kwok)
bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd etcdctl kwok)
recipe=3   # bump when the flags below change in a way that changes the binaries

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
command -v go >/dev/null || { echo "build.sh: go not found (Go 1.26 or later is needed)" >&2; exit 1; }
local goversion goos goarch
{ read -r goversion; read -r goos; read -r goarch; } < <(go env GOVERSION GOOS GOARCH)

local f
key=$( { echo "recipe $recipe $goversion $goos/$goarch"
         for m in "${mods[@]}"; do
           for f in "$here/go/$m"/*; do if [[ -f $f ]]; then cat "$f"; fi; done
         done; } | sha256sum | cut -c1-16)
cache=${MINDIE_CLUSTER_CACHE:-$HOME/.cache/kubectl-mindie/cluster}
out=$cache/$key
bin=$out/bin
case ${1-} in
  --key) echo "$key"; exit 0 ;;
  --bin-dir) echo "$bin"; exit 0 ;;
  "") ;;
  *) echo "usage: build.sh [--key | --bin-dir]" >&2; exit 2 ;;
esac
nice_n=${MINDIE_CLUSTER_NICE:-19}

complete() { [[ -f $out/.complete ]] && for b in "${bins[@]}"; do [[ -x $bin/$b ]] || return 1; done; }
if complete; then echo "$bin"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/.lock-$key"
if ! flock -n 9; then
  echo "build.sh: another build of $key is running; waiting" >&2
  flock 9
fi
if complete; then echo "$bin"; exit 0; fi

tmp=$out/bin.tmp.$$
rm -rf "$out"/bin.tmp.* "$out"/gen.* "$out"/src.* "$bin" "$out/.complete"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
log() { printf 'build.sh: [%4ss] %s\n' $((SECONDS - start)) "$*" >&2; }
build_date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
gobuild() { nice -n "$nice_n" go build -trimpath "$@"; }

modversion() { (cd "$here/go/$1" && go list -m -f '{{.Version}}' "$2"); }

# --- Kubernetes: version ldflags as hack/lib/version.sh sets them for a build from a source archive (no git commit)
cd "$here/go/$kmod"
kv=$(modversion "$kmod" k8s.io/kubernetes)
[[ $kv =~ ^v([0-9]+)\.([0-9]+)\. ]] || { echo "build.sh: unexpected k8s.io/kubernetes version $kv" >&2; exit 1; }
kminor=${BASH_REMATCH[2]}
kld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kld+=" -X $pkg.gitVersion=$kv -X $pkg.gitMajor=${BASH_REMATCH[1]} -X $pkg.gitMinor=${BASH_REMATCH[2]}"
  kld+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$build_date"
done
local modflag=()
if ((kminor < 24)); then
  # Releases before 1.24 do not ship kube-apiserver's OpenAPI definitions (pkg/generated/openapi/
  # zz_generated.openapi.go; their Makefile generated it, kubernetes/kubernetes#108381 committed it for 1.24): generate
  # them as build/root/Makefile.generated_files does, from the packages openapi_inputs.go lists (pin.sh), with the
  # openapi-gen the release pins, into a copy of the module, and build from that copy. The API rule violations found
  # must equal the release's api/api-rules/violation_exceptions.list, as its Makefile demands: the same inputs.
  # GODEBUG=gotypesalias=0: that openapi-gen's gengo predates go/types' Alias nodes (Go 1.23 made them the default).
  # gen and src are not local: the EXIT trap runs after main has returned (set -e), when its locals are gone
  local kdir
  gen=$out/gen.$$ src=$out/src.$$
  trap 'rm -rf "$tmp" "$gen" "$src"' EXIT
  kdir=$(go mod download -json k8s.io/kubernetes | sed -n 's/^\s*"Dir": "\(.*\)",*$/\1/p')
  [[ -d $kdir ]] || { echo "build.sh: k8s.io/kubernetes $kv could not be downloaded" >&2; exit 1; }
  log "generating kube-apiserver's OpenAPI definitions ($kv ships none)"
  mkdir -p "$gen"
  gobuild -o "$gen/openapi-gen" k8s.io/kube-openapi/cmd/openapi-gen
  GODEBUG=gotypesalias=0 nice -n "$nice_n" "$gen/openapi-gen" \
    -i "$(sed -n 's/^\t_ "\(.*\)"$/\1/p' openapi_inputs.go | paste -sd,)" \
    -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
    -h "$kdir/hack/boilerplate/boilerplate.generatego.txt" -o "$gen/out" -r "$gen/violations.report" 2>"$gen/log" ||
    { tail -n 20 "$gen/log" >&2; echo "build.sh: openapi-gen failed" >&2; exit 1; }
  if ! diff "$kdir/api/api-rules/violation_exceptions.list" "$gen/violations.report" >&2; then
    echo "build.sh: the generated OpenAPI definitions are not the release's (API rule violations differ from" \
      "api/api-rules/violation_exceptions.list)" >&2
    exit 1
  fi
  cp -R "$kdir" "$src"
  chmod -R u+w "$src"
  cp "$gen/out/k8s.io/kubernetes/pkg/generated/openapi/zz_generated.openapi.go" "$src/pkg/generated/openapi/"
  cp go.mod "$gen/go.mod"
  cp go.sum "$gen/go.sum"
  echo "replace k8s.io/kubernetes => $src" >> "$gen/go.mod"
  modflag=("-modfile=$gen/go.mod")
fi
log "building kube-apiserver kube-controller-manager kube-scheduler kubectl $kv (nice -n $nice_n)"
gobuild "${modflag[@]}" -ldflags "$kld" -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

# --- etcd
cd "$here/go/etcd"
ev=$(modversion etcd go.etcd.io/etcd/server/v3)
log "building etcd etcdctl $ev"
gobuild -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ev" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
gobuild -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ev" -o "$tmp/etcdctl" go.etcd.io/etcd/etcdctl/v3

# --- KWOK (its fake nodes report the Kubernetes version built above)
cd "$here/go/kwok"
wv=$(modversion kwok sigs.k8s.io/kwok)
log "building kwok $wv"
gobuild -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${wv#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${kv#v}" \
  -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok

for b in "${bins[@]}"; do [[ -x $tmp/$b ]] || { echo "build.sh: $b was not built" >&2; exit 1; }; done
printf 'kubernetes %s\netcd %s\nkwok %s\ngo %s %s/%s\nbuilt %s in %ss\n' "$kv" "$ev" "$wv" "$goversion" "$goos" \
  "$goarch" "$build_date" $((SECONDS - start)) > "$tmp/VERSIONS"
mv "$tmp" "$bin"
rm -rf "${gen-}" "${src-}"
trap - EXIT
touch "$out/.complete"
log "done: $bin"
echo "$bin"
}
main "$@"; exit $?
