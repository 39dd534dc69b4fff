#!/usr/bin/env bash
# Release archives and the krew manifest:
#   dist/kubectl-mindie_<version>_linux_<arch>.tar.gz (kubectl-mindie, kubectl_complete-mindie, LICENSE) + .sha256
#   krew/mindie.yaml regenerated from every such archive of this version in dist/ (scripts/krew-manifest.sh).
# Release builds link Boost, yaml-cpp, libstdc++ and libgcc statically (-DMINDIE_STATIC_DEPS=ON); the script fails
# when the binary needs any shared library besides glibc's, libcurl and OpenSSL, and prints the highest GLIBC_
# symbol version it requires. arm64 is cross-built with Debian's cross toolchain and multiarch :arm64 -dev packages
# and smoke-tested (--help, version, a client dry run of the example, deploy of a missing file) under qemu-user;
# amd64 is smoke-tested natively. Each architecture builds in a fresh build-release-<arch> folder from a snapshot of
# the sources (build-release-<arch>-src), so edits made during the build cannot mix header versions.
#   bash scripts/release.sh [amd64] [arm64]     (default: both)
# Needs root for the apt-get installs (once): dpkg --add-architecture arm64, g++-aarch64-linux-gnu, the :arm64 -dev
# packages of scripts/install-deps.sh's libraries but yaml-cpp's (unpacked privately: it is not co-installable),
# qemu-user-static. Not part of the CI test command.
# SOURCE_DATE_EPOCH (default: the last commit's time) fixes the build date and the archives' timestamps.
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
((${#archs[@]})) || archs=(amd64 arm64)
version=$(sed -n 's/^project(kubectl-mindie VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || { echo "cannot read the version from CMakeLists.txt" >&2; exit 1; }
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
dist=dist
mkdir -p "$dist"

need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
install_missing() {
  local missing=()
  for p in "$@"; do have "$p" || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

bash scripts/install-deps.sh
libs=(libboost-program-options1.81-dev libboost-json1.81-dev libcurl4-openssl-dev libssl-dev)
for arch in "${archs[@]}"; do
  if [[ $arch == arm64 ]]; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      dpkg --add-architecture arm64
      apt-get update -qq
    fi
    # libyaml-cpp-dev is not Multi-Arch: same — installing its :arm64 package would remove the amd64 one the native
    # build needs. It is unpacked into a private folder instead (arm64_yaml below); the others are co-installable.
    install_missing g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static "${libs[@]/%/:arm64}"
    arm64_yaml=$PWD/build-release-arm64-yaml-cpp
    if [[ ! -f $arm64_yaml/usr/lib/aarch64-linux-gnu/libyaml-cpp.a ]]; then
      rm -rf "$arm64_yaml"
      mkdir -p "$arm64_yaml"
      # (the runtime package too: the CMake package checks that the shared library it names exists)
      (cd "$arm64_yaml" && apt-get download libyaml-cpp-dev:arm64 libyaml-cpp0.7:arm64 &&
        for deb in ./*.deb; do dpkg-deb -x "$deb" .; done)
    fi
  fi
done

allowed='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libcurl\.so\.4|libssl\.so\.3|libcrypto\.so\.3)$'
for arch in "${archs[@]}"; do
  build=build-release-$arch
  cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DMINDIE_BUILD_TESTS=OFF -DMINDIE_STATIC_DEPS=ON)
  objdump=objdump strip=strip run=()
  case $arch in
    amd64) ;;
    arm64)
      cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake"
        -Dyaml-cpp_DIR="$arm64_yaml/usr/lib/aarch64-linux-gnu/cmake/yaml-cpp"
        -DMINDIE_YAML_CPP_STATIC="$arm64_yaml/usr/lib/aarch64-linux-gnu/libyaml-cpp.a")
      objdump=aarch64-linux-gnu-objdump strip=aarch64-linux-gnu-strip
      run=(qemu-aarch64-static)  # the :arm64 libraries (multiarch) include its dynamic loader
      ;;
    *) echo "unknown architecture $arch (amd64, arm64)" >&2; exit 1 ;;
  esac
  echo "== linux/$arch"
  # Built from a snapshot of the build inputs (copied at one instant into build-release-<arch>-src) in a fresh
  # build folder, never from the live tree: a header edited while the build runs leaves objects compiled against
  # both versions of it, and ninja 1.11 (Debian 12) never recompiles an object that finished after the edit. An
  # earlier arm64 binary mixed a deploy.cpp.o compiled before UserConfig gained a field with a main.cpp.o compiled
  # after it: the inline ~DeployOptions (main.cpp) read every member after config_ 8 bytes past where the
  # constructor (deploy.cpp) wrote it and crashed with SIGSEGV in boost::json::object::~object on every deploy --
  # not an unwinding problem (the dry run threw nothing). `version` still reports this checkout's commit and tree
  # state (MINDIE_GIT_CHECKOUT).
  snapshot=build-release-$arch-src
  rm -rf "$build" "$snapshot"
  mkdir -p "$snapshot"
  tar -cf - CMakeLists.txt LICENSE cmake src plugin manifests | tar -xf - -C "$snapshot"
  cmake -S "$snapshot" -B "$build" "${cmake_args[@]}" -DMINDIE_GIT_CHECKOUT="$PWD" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target kubectl-mindie kubectl_complete-mindie

  stage=$(mktemp -d)
  cp "$build/kubectl-mindie" "$build/kubectl_complete-mindie" LICENSE "$stage/"
  "$strip" "$stage/kubectl-mindie" "$stage/kubectl_complete-mindie"
  for exe in kubectl-mindie kubectl_complete-mindie; do
    needed=$("$objdump" -p "$stage/$exe" | awk '/NEEDED/ {print $2}')
    if bad=$(grep -Ev "$allowed" <<<"$needed"); then
      echo "$exe ($arch) needs shared libraries beyond glibc, libcurl and OpenSSL: $bad" >&2
      exit 1
    fi
    echo "$exe ($arch) needs: $(tr '\n' ' ' <<<"$needed")"
  done
  glibc=$("$objdump" -T "$stage/kubectl-mindie" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
  echo "kubectl-mindie ($arch) requires glibc >= ${glibc#GLIBC_}"

  # Smoke test: help, version, and a client dry run of the shipped example (no cluster needed).
  "${run[@]}" "$stage/kubectl-mindie" --help >/dev/null
  "${run[@]}" "$stage/kubectl-mindie" version
  # (output captured first: grep -q closing the pipe early would fail the command under pipefail)
  rendered=$("${run[@]}" "$stage/kubectl-mindie" deploy --config-dir examples --dry-run=client -o yaml 2>/dev/null)
  grep -q 'kind: InferServiceSet$' <<<"$rendered" || { echo "$arch: the client dry run rendered no InferServiceSet" >&2; exit 1; }
  # An error path: the exception thrown reading the file must be caught and reported (exit 1), not crash.
  status=0
  failed=$("${run[@]}" "$stage/kubectl-mindie" deploy -f /nonexistent/user_config.json 2>&1) || status=$?
  if [[ $status != 1 || $failed != *"cannot read /nonexistent/user_config.json"* ]]; then
    echo "$arch: deploy -f of a missing file exited $status: $failed" >&2
    exit 1
  fi
  completed=$("${run[@]}" "$stage/kubectl-mindie" __complete st)
  # The launcher execs its sibling: under qemu-user that needs binfmt_misc to run the arm64 sibling.
  if [[ $arch == amd64 ]] || grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
    completed=$("$stage/kubectl_complete-mindie" st)
  fi
  grep -q '^status' <<<"$completed" || { echo "$arch: completion does not work: $completed" >&2; exit 1; }
  echo "smoke test passed: --help, version, deploy --dry-run=client, deploy of a missing file, completion"

  archive=$dist/kubectl-mindie_${version}_linux_$arch.tar.gz
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$stage" \
    -cf - kubectl-mindie kubectl_complete-mindie LICENSE | gzip -n9 >"$archive"
  (cd "$dist" && sha256sum "$(basename "$archive")" >"$(basename "$archive").sha256")
  rm -rf "$stage"
  echo "$archive $(cut -d' ' -f1 "$archive.sha256")"
done

# Every archive of this version in dist/, not only this run's: `release.sh arm64` after `release.sh amd64` (or the
# other way round) lists both platforms.
archives=()
for arch in amd64 arm64; do
  archive=$dist/kubectl-mindie_${version}_linux_$arch.tar.gz
  if [[ -f $archive ]]; then archives+=("$archive"); fi
done
bash scripts/krew-manifest.sh "${archives[@]}" >krew/mindie.yaml
echo "krew/mindie.yaml regenerated from: ${archives[*]}"
