#!/usr/bin/env bash
# Release archives and the krew manifest:
#   dist/kubectl-mindie_<version>_linux_<arch>.tar.gz (kubectl-mindie, kubectl_complete-mindie, LICENSE) + .sha256
#   krew/mindie.yaml generated from both architectures' archives of this commit (scripts/krew-manifest.sh).
# The binaries need nothing but glibc >= 2.17: zig (scripts/release/lib.sh, pinned) compiles for
# x86_64-linux-gnu.2.17 and aarch64-linux-gnu.2.17 and links its libc++ statically, against static zlib, OpenSSL,
# nghttp2, libcurl, yaml-cpp and Boost built from pinned Debian source packages (scripts/release/deps.sh, cached
# under ~/.cache/kubectl-mindie/release; built once per architecture, then reused).
# Checks, for each architecture: the highest GLIBC_ symbol version needed is 2.17 and no library but glibc's is
# needed (objdump -p); neither the checkout's nor the release cache's path is in the binaries; --help, version, a
# client dry run of the example, deploy of a missing file and completion run (arm64 under qemu-user, on Debian 12's
# arm64 glibc unpacked privately); amd64 also on Debian 11's glibc 2.31, started with its own loader. Then krew
# v0.4.3 (scripts/release/krew-test.sh) installs each archive from a local index, runs `kubectl mindie version`
# (arm64 under qemu-user) and uninstalls.
# Archives are reproducible: fixed mtimes (the commit's time, also the build date), owners and order, and no path of
# the build machine in the binaries (the checkout's and the build folder's are mapped away here, the release cache's
# by the compiler wrappers of scripts/release/lib.sh, OpenSSL's folders are fixed in scripts/release/deps.sh): the
# same commit gives the same sha256 wherever it is checked out and wherever $MINDIE_RELEASE_CACHE (or $HOME) is.
#   bash scripts/release.sh [amd64] [arm64]     (default: both; the manifest is written only when both archives
#                                                of this commit are in dist/)
# Needs root for apt-get (once): qemu-user-static, binutils-aarch64-linux-gnu, dpkg-dev, xz-utils, golang for krew.
# Not part of the CI test command (scripts/release/check.sh is).
set -euo pipefail
# (the whole script is one block, read before it runs: an edit made to this file during a release build cannot
# change what the running build does next)
{
cd "$(dirname "$0")/.."
source scripts/release/lib.sh
archs=("$@")
((${#archs[@]})) || archs=(amd64 arm64)
version=$(sed -n 's/^project(kubectl-mindie VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || { echo "cannot read the version from CMakeLists.txt" >&2; exit 1; }
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
source_id="$(git rev-parse HEAD 2>/dev/null || echo unknown) $(git status --porcelain --untracked-files=no | grep -q . && echo dirty || echo clean)"
dist=dist
mkdir -p "$dist"

missing=()
for p in qemu-user-static binutils-aarch64-linux-gnu dpkg-dev xz-utils cmake ninja-build perl make git; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v go >/dev/null || missing+=(golang-go)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
setup_zig

# A private root holding Debian's libc6 of DIST and ARCH (unpacked, never installed), cached; prints its path.
glibc_root() {
  local suite=$1 arch=$2 root=$release_cache/glibc-$1-$2
  if [[ ! -f $root/.complete ]]; then
    local apt=$release_cache/apt-$suite-$arch
    mkdir -p "$apt/lists/partial" "$apt/cache" "$root"
    echo "deb [arch=$arch] http://deb.debian.org/debian $suite main" >"$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Architecture=$arch"
      -o "APT::Architectures::=$arch" -o APT::Sandbox::User=root -o Dir::State::status=/dev/null)
    apt-get "${opts[@]}" update -qq
    (cd "$apt" && rm -f ./*.deb && apt-get "${opts[@]}" download -qq "libc6:$arch" && dpkg-deb -x ./libc6_*.deb "$root")
    touch "$root/.complete"
  fi
  echo "$root"
}

for arch in "${archs[@]}"; do
  zig_target "$arch" >/dev/null
  echo "== linux/$arch: dependencies"
  prefix=$(nice -n 10 bash scripts/release/deps.sh "$arch")
  build=build-release-$arch
  echo "== linux/$arch: kubectl-mindie"
  # Built from a snapshot of the build inputs (copied at one instant into build-release-<arch>-src) in a fresh
  # build folder, never from the live tree: a header edited while the build runs leaves objects compiled against
  # both versions of it, and ninja 1.11 (Debian 12) never recompiles an object that finished after the edit. An
  # earlier arm64 binary mixed a deploy.cpp.o compiled before UserConfig gained a field with a main.cpp.o compiled
  # after it and crashed in boost::json::object::~object on every deploy. `version` still reports this checkout's
  # commit and tree state (MINDIE_GIT_CHECKOUT).
  snapshot=build-release-$arch-src
  rm -rf "$build" "$snapshot"
  mkdir -p "$snapshot"
  tar -cf - CMakeLists.txt LICENSE cmake src plugin manifests | tar -xf - -C "$snapshot"
  snapshot_abs=$PWD/$snapshot
  flags="-ffunction-sections -fdata-sections -ffile-prefix-map=$snapshot_abs/= -ffile-prefix-map=$PWD/$build/="
  launcher=()  # ccache, when there: a second release build of the same sources compiles nothing
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$snapshot" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$prefix/toolchain.cmake" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DMINDIE_BUILD_TESTS=OFF -DMINDIE_STATIC_DEPS=ON -DMINDIE_GIT_CHECKOUT="$PWD" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-Wl,--gc-sections -s" >/dev/null
  nice -n 10 cmake --build "$build" -j "${MINDIE_RELEASE_JOBS:-$(nproc)}" --target kubectl-mindie kubectl_complete-mindie

  stage=$(mktemp -d)
  cp "$build/kubectl-mindie" "$build/kubectl_complete-mindie" LICENSE "$stage/"
  chmod 0755 "$stage/kubectl-mindie" "$stage/kubectl_complete-mindie"
  chmod 0644 "$stage/LICENSE"
  objdump=objdump run=()
  if [[ $arch == arm64 ]]; then
    objdump=aarch64-linux-gnu-objdump
    run=(qemu-aarch64-static -L "$(glibc_root bookworm arm64)")
  fi
  for exe in kubectl-mindie kubectl_complete-mindie; do
    headers=$("$objdump" -p "$stage/$exe")
    needed=$(awk '/NEEDED/ {print $2}' <<<"$headers")
    if bad=$(grep -Ev '^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$' <<<"$needed"); then
      echo "$exe ($arch) needs shared libraries beyond glibc's: $bad" >&2
      exit 1
    fi
    glibc=$(grep -o 'GLIBC_[0-9.]*' <<<"$headers" | sort -uV | tail -n 1)
    if [[ $(printf '%s\n' "$glibc" GLIBC_2.17 | sort -V | tail -n 1) != GLIBC_2.17 ]]; then
      echo "$exe ($arch) needs $glibc, more than glibc 2.17" >&2
      exit 1
    fi
    echo "$exe ($arch) needs $(tr '\n' ' ' <<<"$needed")- symbol versions up to ${glibc:-none}"
    # No path of this machine: one would make the sha256 depend on where the checkout and the cache are. (With the
    # slash: a checkout at /tmp must not match the product's own "/tmp".)
    for path in "$release_cache/" "$PWD/"; do
      if grep -qaF "$path" "$stage/$exe"; then
        echo "$exe ($arch) holds a path of the build machine, $path:" >&2
        strings -a "$stage/$exe" | grep -F "$path" | head -n 3 >&2
        exit 1
      fi
    done
  done

  smoke() {  # smoke RUNNER...: the binary's commands that need no cluster
    "$@" "$stage/kubectl-mindie" --help >/dev/null
    "$@" "$stage/kubectl-mindie" version
    # (output captured first: grep -q closing the pipe early would fail the command under pipefail)
    rendered=$("$@" "$stage/kubectl-mindie" deploy --config-dir examples --dry-run=client -o yaml 2>/dev/null)
    grep -q 'kind: InferServiceSet$' <<<"$rendered" || { echo "$arch: the client dry run rendered no InferServiceSet" >&2; exit 1; }
    # An error path: the exception thrown reading the file must be caught and reported (exit 1), not crash.
    status=0
    failed=$("$@" "$stage/kubectl-mindie" deploy -f /nonexistent/user_config.json 2>&1) || status=$?
    if [[ $status != 1 || $failed != *"cannot read /nonexistent/user_config.json"* ]]; then
      echo "$arch: deploy -f of a missing file exited $status: $failed" >&2
      exit 1
    fi
    completed=$("$@" "$stage/kubectl-mindie" __complete st)
    grep -q '^status' <<<"$completed" || { echo "$arch: completion does not work: $completed" >&2; exit 1; }
  }
  smoke "${run[@]}"
  # The launcher execs its sibling: under qemu-user that needs binfmt_misc to run the arm64 sibling.
  if [[ $arch == amd64 ]] || grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
    completed=$("$stage/kubectl_complete-mindie" st)
    grep -q '^status' <<<"$completed" || { echo "$arch: the completion launcher does not work: $completed" >&2; exit 1; }
  fi
  echo "smoke test passed: --help, version, deploy --dry-run=client, deploy of a missing file, completion"
  if [[ $arch == amd64 ]]; then
    # An older userland than the build host's: Debian 11's glibc 2.31, the binary started by its loader.
    old=$(glibc_root bullseye amd64)/lib/x86_64-linux-gnu
    smoke "$old/ld-linux-x86-64.so.2" --library-path "$old"
    echo "smoke test passed on $("$old/ld-linux-x86-64.so.2" --library-path "$old" "$old/libc.so.6" | head -n 1)"
  fi

  archive=$dist/kubectl-mindie_${version}_linux_$arch.tar.gz
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" --format=gnu -C "$stage" \
    -cf - kubectl-mindie kubectl_complete-mindie LICENSE | gzip -n9 >"$archive"
  (cd "$dist" && sha256sum "$(basename "$archive")" >"$(basename "$archive").sha256")
  echo "$source_id" >"$archive.source"
  rm -rf "$stage"
  echo "$archive $(cut -d' ' -f1 "$archive.sha256") ($(du -k "$archive" | cut -f1) KiB)"
done

# The manifest lists both architectures, from archives of this very commit: one architecture alone (or an archive
# left from another commit) leaves krew/mindie.yaml as it is.
archives=()
for arch in amd64 arm64; do
  archive=$dist/kubectl-mindie_${version}_linux_$arch.tar.gz
  if [[ -f $archive && $(cat "$archive.source" 2>/dev/null) == "$source_id" ]]; then archives+=("$archive"); fi
done
if ((${#archives[@]} < 2)); then
  echo "krew/mindie.yaml not written: it needs the amd64 and arm64 archives of $source_id (bash scripts/release.sh)"
  exit 0
fi
echo "== krew"
MINDIE_KREW_RUN_ARM64="qemu-aarch64-static -L $(glibc_root bookworm arm64)" \
  bash scripts/release/krew-test.sh "${archives[@]}"
MINDIE_SOURCE_COMMIT=${source_id% *} bash scripts/krew-manifest.sh "${archives[@]}" >krew/mindie.yaml
echo "krew/mindie.yaml generated from: ${archives[*]}"
exit 0
}
