#!/usr/bin/env bash
# The CI's cheap check of the release toolchain (scripts/release.sh builds the real thing, ~30 min cold, too slow for
# CI): the pinned zig installs (its wheel's sha256), compiles two of the product's translation units for each
# release target (x86_64/aarch64-linux-gnu.2.17: trust_store.cpp with the standard library, version.cpp with
# Boost.JSON and Boost.Program_options, whose headers are the build host's), whether every pinned Debian source
# package is still served at its version (a warning when not), and a real krew (v0.4.3 from the Go module proxy)
# installs, runs and uninstalls archives of the development build from a local index with the manifest
# scripts/krew-manifest.sh generates.
#   bash scripts/release/check.sh BUILD-DIR      (a build with kubectl-mindie and kubectl_complete-mindie)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"
build=$(cd "${1:?usage: $0 BUILD-DIR}" && pwd)
setup_zig
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Only Boost from the host: zig brings its own C library and C++ headers, which must not mix with /usr/include.
version=$(sed -n 's/^project(kubectl-mindie VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
mkdir -p "$tmp/include"
ln -s /usr/include/boost "$tmp/include/boost"
for arch in amd64 arm64; do
  for tu in src/kube/trust_store.cpp plugin/version.cpp; do
    "$zig_bin/c++-$arch" -std=c++20 -O1 -Wall -Wextra -Werror -I"$root/src" -I"$root/plugin" -isystem "$tmp/include" \
      -DMINDIE_VERSION="\"$version\"" \
      -c "$root/$tu" -o "$tmp/$(basename "$tu").$arch.o"
  done
  echo "compiled for $(zig_target "$arch"): src/kube/trust_store.cpp plugin/version.cpp"
done

# A pin Debian no longer serves is a warning here, not a failure: the archive moves on by itself (a security update
# replaces a version), which must not turn the tests red; scripts/release.sh fails on it, naming the versions served.
setup_apt_sources
apt-get "${apt_opts[@]}" update -qq
unserved=0
for entry in "${source_pins[@]}"; do
  name=${entry%%=*}
  source_pin "$name"
  served=$(apt-cache "${apt_opts[@]}" showsrc "$name" | sed -n 's/^Version: //p' | sort -u)
  if ! grep -qxF "$pin_version" <<<"$served"; then
    echo "warning: source package $name $pin_version is no longer served: move its pin in scripts/release/lib.sh" \
      "(served: $(tr '\n' ' ' <<<"$served"))" >&2
    unserved=1
  fi
done
((unserved)) || echo "every pinned source package is served: ${source_pins[*]%% *}"

mkdir -p "$tmp/stage" "$tmp/dist"
cp "$build/kubectl-mindie" "$build/kubectl_complete-mindie" "$root/LICENSE" "$tmp/stage/"
for arch in amd64 arm64; do  # the development binary under both names: krew installs the host's
  tar -C "$tmp/stage" -czf "$tmp/dist/kubectl-mindie_${version}_linux_$arch.tar.gz" kubectl-mindie \
    kubectl_complete-mindie LICENSE
done
bash "$here/krew-test.sh" "$tmp/dist/kubectl-mindie_${version}_linux_amd64.tar.gz" \
  "$tmp/dist/kubectl-mindie_${version}_linux_arm64.tar.gz"
