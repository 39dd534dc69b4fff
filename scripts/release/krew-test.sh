#!/usr/bin/env bash
# Installs the release archive of this machine's architecture through a real krew, as a user would with
# `kubectl krew install mindie`: krew v0.4.3 built from the Go module proxy (cached under $MINDIE_RELEASE_CACHE), a
# local git index (KREW_DEFAULT_INDEX_URI; krew clones its index on first use) holding the manifest that
# scripts/krew-manifest.sh generates for ARCHIVES with their URIs on a loopback HTTP server of dist/; then
# `kubectl mindie version` through krew's link, and `kubectl krew uninstall mindie`. Without kubectl on PATH, krew's
# link is run directly (what kubectl's plugin handler execs).
#   bash scripts/release/krew-test.sh ARCHIVE...     (every archive of the release: the manifest lists them all)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
(($#)) || { echo "usage: $0 ARCHIVE..." >&2; exit 2; }
krew_version=v0.4.3
krew_bin=$release_cache/krew-$krew_version/kubectl-krew
if [[ ! -x $krew_bin ]]; then
  gobin=$(mktemp -d)
  GOBIN=$gobin GOFLAGS=-mod=mod go install "sigs.k8s.io/krew/cmd/krew@$krew_version"
  mkdir -p "$(dirname "$krew_bin")"
  mv "$gobin/krew" "$krew_bin"
  rm -rf "$gobin"
fi

tmp=$(mktemp -d)
server=
cleanup() {
  [[ -z $server ]] || kill "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
dist=$(cd "$(dirname "$1")" && pwd)
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$dist" >"$tmp/http.log" 2>&1 &
server=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$tmp/http.log" | head -n 1)
  [[ -n $port ]] && break
  kill -0 "$server" || { cat "$tmp/http.log" >&2; exit 1; }
  sleep 0.1
done
[[ -n $port ]] || { echo "the HTTP server of $dist did not start" >&2; exit 1; }

mkdir -p "$tmp/index/plugins" "$tmp/bin"
bash "$here/../krew-manifest.sh" --base-url "http://127.0.0.1:$port" "$@" >"$tmp/index/plugins/mindie.yaml"
git -C "$tmp/index" init -q
git -C "$tmp/index" -c user.name=release -c user.email=release@localhost add plugins
git -C "$tmp/index" -c user.name=release -c user.email=release@localhost commit -qm index
ln -s "$krew_bin" "$tmp/bin/kubectl-krew"
export KREW_ROOT=$tmp/krew KREW_DEFAULT_INDEX_URI=$tmp/index PATH=$tmp/bin:$tmp/krew/bin:$PATH
kubectl-krew update
# Each archive through krew's own platform choice (KREW_ARCH overrides the detected one, as krew documents);
# the host's architecture is run through kubectl, another one with the runner in MINDIE_KREW_RUN_<ARCH>
# (scripts/release.sh: qemu-user for arm64), or only installed when there is none.
host=$(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')
for archive in "$@"; do
  arch=$(basename "$archive" .tar.gz)
  arch=${arch##*_}
  KREW_ARCH=$arch kubectl-krew install mindie </dev/null
  link=$KREW_ROOT/bin/kubectl-mindie
  [[ -L $link ]] || { echo "krew made no kubectl-mindie link ($arch)" >&2; exit 1; }
  runner_var=MINDIE_KREW_RUN_${arch^^}
  if [[ $arch == "$host" ]] && command -v kubectl >/dev/null; then
    out=$(kubectl mindie version)
  elif [[ $arch == "$host" ]]; then
    out=$(kubectl-mindie version)
  elif [[ -n ${!runner_var:-} ]]; then
    read -ra runner <<<"${!runner_var}"
    out=$("${runner[@]}" "$(readlink -f "$link")" version)
  else
    out="(linux/$arch installed, not run on this $host host)"
  fi
  echo "$out"
  [[ $out == "(linux/"* || $out == *"kubectl-mindie version"* ]] || { echo "kubectl mindie version ($arch) printed no version" >&2; exit 1; }
  KREW_ARCH=$arch kubectl-krew uninstall mindie
  [[ ! -e $link ]] || { echo "krew uninstall left the link ($arch)" >&2; exit 1; }
  echo "krew $krew_version installed, ran and uninstalled mindie linux/$arch from a local index"
done
