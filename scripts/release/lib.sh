# Sourced by scripts/release.sh and scripts/release/*.sh: the pinned release toolchain and library sources, and the
# functions that fetch and verify them. Everything lands under $MINDIE_RELEASE_CACHE (default
# ~/.cache/kubectl-mindie/release), keyed by version and checksum, so a second release build reuses it.
#
# Toolchain: zig (the `ziglang` wheel on PyPI) compiles C and C++ for x86_64-linux-gnu.2.17 and
# aarch64-linux-gnu.2.17 against its own glibc 2.17 stubs and links its own libc++ statically; the binaries then
# need nothing but glibc >= 2.17. Libraries: Debian 12's source packages (`apt-get source`), pinned by the sha256 of
# their .dsc; the .dsc lists the sha256 of every tarball, and dpkg-source verifies them before unpacking.

# (absolute: the compiler wrappers map this path away, and a relative one would not match the paths compiled)
release_cache=$(realpath -m "${MINDIE_RELEASE_CACHE:-$HOME/.cache/kubectl-mindie/release}")

# The ziglang wheel for an x86_64 build host: version and the wheel's sha256.
zig_version=0.14.1
zig_wheel_sha256=6eb9d4d759b292c83810dbee2e9e8e3fbfbf01d864e6e9811bae711fd74e1c2f

# Source packages: name=version sha256-of-.dsc. When Debian replaces a version (a security update), its files leave
# the archive: fetching then fails, and the pin is moved to the version served (apt-cache showsrc NAME).
source_pins=(
  "zlib=1:1.2.13.dfsg-1 3fa1e6b2fc525062aa88207dda52fed8e045373c809d362fe8a2bfbf7cf515a8"
  "openssl=3.0.20-1~deb12u2 a614474a2773c23b10c0d65f4eccbcf93fdac4749afb7c26d76e1b0340154d3d"
  "nghttp2=1.52.0-1+deb12u3 d4fcb364e461616ef63cb0653a71f08a9ae23703d497745e90160ed7d1eda393"
  "curl=7.88.1-10+deb12u15 2744f12e3aef161c0361743fa1b318296b122e566e47f381e4a63320fbcc23f4"
  "yaml-cpp=0.7.0+dfsg-8 94bd9098d501f91c2570c8e8cb98d46bc6de7627c30e9f94ebb39dc0cd2d65c2"
  "boost1.81=1.81.0-5+deb12u1 bf7e89ff2cf22823eb30cdea410ace394469899e54c436426d0c15ca9503e36c"
)

# zig's target triple for a release architecture.
zig_target() {
  case $1 in
    amd64) echo x86_64-linux-gnu.2.17 ;;
    arm64) echo aarch64-linux-gnu.2.17 ;;
    *) echo "unknown architecture $1 (amd64, arm64)" >&2; return 1 ;;
  esac
}

# Installs the pinned zig into $release_cache/zig-<version> (once) and writes the compiler wrappers that CMake,
# OpenSSL's Configure and make take as CC/CXX/AR: $zig_bin/{cc,c++}-<arch>, ar, ranlib. Sets zig_bin and exports
# zig's cache folders (the first compile for a target builds libc++ and the glibc stubs there, ~3 min).
# Every compile maps $release_cache/ away (-ffile-prefix-map: __FILE__ and debug paths): file names of the
# dependency prefix's headers (Boost.JSON's source locations), of zig's own headers and of the libraries' build
# folders are then the same in every cache, so the binaries do not depend on where the cache is ($HOME).
setup_zig() {
  local home=$release_cache/zig-$zig_version
  zig_bin=$home/bin
  export ZIG_GLOBAL_CACHE_DIR=$release_cache/zig-cache ZIG_LOCAL_CACHE_DIR=$release_cache/zig-cache
  if [[ ! -x $home/python/ziglang/zig ]]; then
    local tmp
    tmp=$(mktemp -d)
    echo "ziglang==$zig_version --hash=sha256:$zig_wheel_sha256" >"$tmp/requirements.txt"
    python3 -m pip install --quiet --no-deps --require-hashes --only-binary=:all: --target "$tmp/python" \
      -r "$tmp/requirements.txt"
    rm -rf "$home"
    mkdir -p "$home"
    mv "$tmp/python" "$home/python"
    rm -rf "$tmp"
  fi
  mkdir -p "$zig_bin"
  local zig=$home/python/ziglang/zig arch map="-ffile-prefix-map=$release_cache/="
  for arch in amd64 arm64; do
    wrapper "cc-$arch" "$zig" cc -target "$(zig_target $arch)" "$map"
    wrapper "c++-$arch" "$zig" c++ -target "$(zig_target $arch)" "$map"
  done
  wrapper ar "$zig" ar
  wrapper ranlib "$zig" ranlib
}
# wrapper NAME COMMAND...: $zig_bin/NAME runs COMMAND with its arguments after. Rewritten only when it changes:
# ccache (scripts/release.sh) knows a compiler by its mtime.
wrapper() {
  local name=$1 text
  shift
  text="#!/bin/sh
exec $(printf '"%s" ' "$@")\"\$@\""
  [[ -x $zig_bin/$name && $(cat "$zig_bin/$name") == "$text" ]] && return 0
  printf '%s\n' "$text" >"$zig_bin/$name"
  chmod +x "$zig_bin/$name"
}

# Writes the CMake toolchain file for ARCH that builds with zig and finds packages and libraries only under PREFIX
# (never the build host's /usr, whose shared libcurl would otherwise be found) to stdout.
zig_toolchain_file() {
  local arch=$1 prefix=$2 processor
  case $arch in amd64) processor=x86_64 ;; arm64) processor=aarch64 ;; esac
  cat <<CMAKE
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $processor)
set(CMAKE_C_COMPILER "$zig_bin/cc-$arch")
set(CMAKE_CXX_COMPILER "$zig_bin/c++-$arch")
set(CMAKE_AR "$zig_bin/ar")
set(CMAKE_RANLIB "$zig_bin/ranlib")
set(CMAKE_FIND_ROOT_PATH "$prefix")
set(CMAKE_PREFIX_PATH "$prefix")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
CMAKE
}

# A private apt configuration with Debian 12's source indexes, so that `apt-get source` works without touching the
# host's apt sources. Sets apt_opts.
setup_apt_sources() {
  local dir=$release_cache/apt
  apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root)
  [[ -f $dir/sources.list ]] && return 0
  mkdir -p "$dir/lists/partial" "$dir/cache"
  cat >"$dir/sources.list.tmp" <<'LIST'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian-security bookworm-security main
LIST
  mv "$dir/sources.list.tmp" "$dir/sources.list"
  apt-get "${apt_opts[@]}" update -qq || { rm -f "$dir/sources.list"; return 1; }
}

# The pin of source package NAME: sets pin_version and pin_sha256.
source_pin() {
  local entry
  for entry in "${source_pins[@]}"; do
    if [[ ${entry%%=*} == "$1" ]]; then
      pin_version=${entry#*=}
      pin_version=${pin_version%% *}
      pin_sha256=${entry##* }
      return 0
    fi
  done
  echo "no pin for source package $1" >&2
  return 1
}

# Downloads source package NAME at its pinned version into $release_cache/sources (once) and checks the .dsc's
# sha256. Prints the .dsc's path.
fetch_source() {
  local name=$1 dir=$release_cache/sources
  source_pin "$name"
  local upstream=${pin_version#*:}
  local dsc=$dir/${name}_$upstream.dsc
  mkdir -p "$dir"
  if [[ ! -f $dsc ]]; then
    setup_apt_sources
    (cd "$dir" && apt-get "${apt_opts[@]}" source --download-only -qq "$name=$pin_version" >&2) ||
      { echo "cannot fetch source package $name $pin_version (a newer Debian update replaced it? apt-cache showsrc $name)" >&2; return 1; }
  fi
  local sha
  sha=$(sha256sum "$dsc" | cut -d' ' -f1)
  if [[ $sha != "$pin_sha256" ]]; then
    echo "$dsc: sha256 $sha, pinned $pin_sha256" >&2
    return 1
  fi
  echo "$dsc"
}

# sha256 of the tarball FILE as listed in the (already verified) .dsc DSC; fails when FILE's own sha256 differs.
verify_from_dsc() {
  local dsc=$1 file=$2 want have
  want=$(awk -v f="$(basename "$file")" '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0} s && $3 == f {print $1}' "$dsc")
  have=$(sha256sum "$file" | cut -d' ' -f1)
  [[ -n $want && $want == "$have" ]] || { echo "$file: sha256 $have, $dsc lists ${want:-nothing}" >&2; return 1; }
}
