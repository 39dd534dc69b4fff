#!/usr/bin/env bash
# Builds the static libraries a release binary links, for one architecture, with zig against glibc 2.17:
# zlib, OpenSSL (libssl, libcrypto), nghttp2, libcurl (HTTP(S) only, no built-in CA file or folder: the product
# finds the trust store itself), yaml-cpp, and Boost.JSON (with the Boost.Container it needs) and
# Boost.Program_options (only these sources, and Boost's headers). Installs them into a prefix under
# $MINDIE_RELEASE_CACHE keyed by the pins, the zig version and this script's own text; prints the prefix.
# An existing complete prefix is reused (no build): a second release build starts at the product.
#   bash scripts/release/deps.sh ARCH      (amd64 | arm64)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
arch=$1
target=$(zig_target "$arch")
# Raise deps_recipe when a change to this script (or to the compiler wrappers of lib.sh) changes what is built
# (flags, options, libraries). 2: no path of the cache in the libraries, OpenSSL's build date from its package.
deps_recipe=2
key="recipe $deps_recipe, zig $zig_version, ${source_pins[*]}"
# A fixed folder (its absolute path is written into the CMake packages installed there), valid while .key matches.
prefix=$release_cache/deps-$arch
if [[ $(cat "$prefix/.key" 2>/dev/null) == "$key" ]]; then
  if [[ -f $prefix/.complete ]]; then
    echo "$prefix"
    exit 0
  fi
else
  rm -rf "$prefix"
  mkdir -p "$prefix"
  echo "$key" >"$prefix/.key"
fi
setup_zig
jobs=${MINDIE_RELEASE_JOBS:-$(nproc)}
work=$release_cache/work-$arch
rm -rf "$work"
mkdir -p "$work"
toolchain=$prefix/toolchain.cmake
zig_toolchain_file "$arch" "$prefix" >"$toolchain"
export CC=$zig_bin/cc-$arch CXX=$zig_bin/c++-$arch AR=$zig_bin/ar RANLIB=$zig_bin/ranlib
# Build paths stay out of the objects (assertion messages name sources relative to their folder; the wrappers map
# the rest of the cache away).
base_flags="-O2 -ffunction-sections -fdata-sections"
flags="$base_flags -ffile-prefix-map=$work/="
export CFLAGS=$flags CXXFLAGS=$flags
# Each library is built once: an interrupted build resumes at the first one without its .done-NAME stamp.
step() {
  local name=$1
  shift
  [[ -f $prefix/.done-$name ]] && return 0
  echo "[$arch] $name" >&2
  "$@"
  touch "$prefix/.done-$name"
}
# Runs a build step with its output in $work/NAME.log, shown (its end) only when the step fails.
quiet() {
  local name=$1
  shift
  "$@" >"$work/$name.log" 2>&1 || { tail -n 40 "$work/$name.log" >&2; echo "[$arch] $name failed" >&2; return 1; }
}

# Unpacks source package NAME (Debian's patches applied) into $work/NAME; sets src, and SOURCE_DATE_EPOCH to the
# time of the package's latest changelog entry, as dpkg-buildpackage does (a library that records its build date,
# OpenSSL's "built on", then records the same one in every cache, not the time or the commit it was first built at).
unpack() {
  local dsc
  dsc=$(fetch_source "$1")
  src=$work/$1
  quiet "$1-unpack" dpkg-source --no-copy -x "$dsc" "$src"
  SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$src/debian/changelog" -STimestamp)
  export SOURCE_DATE_EPOCH
}
cmake_lib() {  # cmake_lib SOURCE-DIR ARGS...: configures, builds and installs a CMake project into the prefix
  local dir=$1
  shift
  cmake -S "$dir" -B "$dir/_build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF "$@" &&
    cmake --build "$dir/_build" -j "$jobs" && cmake --install "$dir/_build"
}

build_zlib() {
  unpack zlib
  quiet zlib sh -c 'cd "$1" && ./configure --static --prefix="$2" && make -j "$3" libz.a && make install' - \
    "$src" "$prefix" "$jobs"
}

# OPENSSLDIR names a fixed folder of its own, /etc/kubectl-mindie/ssl, on every host: the host's openssl.cnf
# belongs to the host's OpenSSL (often 1.1 on the target systems), not to this one. OpenSSL 3 loads its default
# config ($OPENSSL_CONF, else OPENSSLDIR/openssl.cnf) with CONF_MFLAGS_IGNORE_MISSING_FILE (openssl/openssl
# include/internal/conf.h DEFAULT_CONF_MFLAGS, crypto/conf/conf_mod.c), so where the folder does not exist nothing
# is read. Its cert.pem and certs/ are never used: the product passes the CA certificates to curl itself
# (src/kube/trust_store.h). no-dso/no-engine/no-module: nothing is loaded at run time, so ENGINESDIR and MODULESDIR
# (otherwise this prefix's lib/, a path of the build machine) are set to fixed folders no host has. CC by name on
# PATH and CFLAGS without a path: crypto/buildinf.h records "$CC $CFLAGS" in the binary (OpenSSL_version), and the
# sources compile with relative names. Protocols and ciphers no Kubernetes API server speaks are left out (a third
# less to compile); MD4 and DES stay for curl's NTLM.
build_openssl() {
  unpack openssl
  local os_target=linux-x86_64 dirs=(ENGINESDIR=/usr/lib/kubectl-mindie/engines-3
    MODULESDIR=/usr/lib/kubectl-mindie/ossl-modules)
  [[ $arch == arm64 ]] && os_target=linux-aarch64
  PATH=$zig_bin:$PATH CC=cc-$arch CFLAGS=$base_flags quiet openssl sh -c \
    'cd "$1" && j=$2 && d1=$3 && d2=$4 && shift 4 && ./Configure "$@" && make -j "$j" "$d1" "$d2" build_libs &&
     make "$d1" "$d2" install_dev' \
    - "$src" "$jobs" "${dirs[@]}" "$os_target" no-shared no-tests no-dso no-engine no-module no-ui-console no-legacy \
    no-ssl3 no-dtls no-sctp no-srtp no-srp no-gost no-idea no-mdc2 no-rc2 no-rc4 no-rc5 no-seed no-whirlpool \
    no-camellia no-aria no-sm2 no-sm3 no-sm4 no-cast no-bf no-ec2m no-ts no-cms \
    --prefix="$prefix" --libdir=lib --openssldir=/etc/kubectl-mindie/ssl
}

build_nghttp2() {
  unpack nghttp2
  quiet nghttp2 cmake_lib "$src" -DENABLE_LIB_ONLY=ON -DENABLE_STATIC_LIB=ON -DENABLE_SHARED_LIB=OFF -DENABLE_DOC=OFF
}

build_curl() {
  unpack curl
  quiet curl cmake_lib "$src" -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF -DHTTP_ONLY=ON \
    -DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=ON -DOPENSSL_ROOT_DIR="$prefix" -DUSE_NGHTTP2=ON \
    -DCURL_ZLIB=ON -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_CA_FALLBACK=OFF -DCURL_USE_LIBSSH2=OFF \
    -DUSE_LIBIDN2=OFF -DCURL_USE_GSSAPI=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DCURL_DISABLE_LDAP=ON \
    -DCURL_DISABLE_LDAPS=ON
}

build_yaml_cpp() {
  unpack yaml-cpp
  quiet yaml-cpp cmake_lib "$src" -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
    -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF
}

# boost_lib NAME SOURCE...: compiles the sources (C++17, static-link macros) into libboost_NAME.a, $jobs at a time.
boost_lib() {
  local name=$1 objs=() s o pids=() pid
  shift
  mkdir -p "$src/obj/$name"
  for s in "$@"; do
    o=$src/obj/$name/$(basename "$s").o
    case $s in
      *.c) "$CC" $CFLAGS -I"$prefix/include" -DBOOST_ALL_NO_LIB -DBOOST_ALL_STATIC_LINK -c "$s" -o "$o" & ;;
      *) "$CXX" $CXXFLAGS -std=c++17 -I"$prefix/include" -DBOOST_ALL_NO_LIB -DBOOST_ALL_STATIC_LINK -c "$s" -o "$o" & ;;
    esac
    pids+=($!)
    objs+=("$o")
    if ((${#pids[@]} >= jobs)); then
      wait "${pids[0]}"
      pids=("${pids[@]:1}")
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  "$AR" rcs "$prefix/lib/libboost_$name.a" "${objs[@]}"
}

# Only the orig tarball (Debian's patches touch none of these libraries), and only its headers and these sources.
build_boost() {
  local dsc orig inc
  dsc=$(fetch_source boost1.81)
  orig=$(dirname "$dsc")/boost1.81_1.81.0.orig.tar.xz
  verify_from_dsc "$dsc" "$orig"
  src=$work/boost
  rm -rf "$src" "$prefix/include/boost"
  mkdir -p "$src" "$prefix/include" "$prefix/lib"
  # (the wildcard's * matches / too: libs/numeric/conversion's headers are among them)
  xz -dc "$orig" | tar -x -C "$src" --wildcards 'boost/libs/*/include/boost/*' 'boost/libs/json/src/*' \
    'boost/libs/container/src/*' 'boost/libs/program_options/src/*'
  for inc in "$src"/boost/libs/*/include "$src"/boost/libs/numeric/*/include; do
    if [[ -d $inc/boost ]]; then cp -r "$inc/boost" "$prefix/include/"; fi
  done
  local b=$src/boost/libs
  boost_lib json "$b/json/src/src.cpp"
  boost_lib container "$b/container/src/alloc_lib.c" "$b/container/src/dlmalloc.cpp" \
    "$b/container/src/global_resource.cpp" "$b/container/src/monotonic_buffer_resource.cpp" \
    "$b/container/src/pool_resource.cpp" "$b/container/src/synchronized_pool_resource.cpp" \
    "$b/container/src/unsynchronized_pool_resource.cpp"
  boost_lib program_options "$b"/program_options/src/{cmdline,config_file,convert,options_description}.cpp \
    "$b"/program_options/src/{parsers,positional_options,split,utf8_codecvt_facet,value_semantic}.cpp \
    "$b/program_options/src/variables_map.cpp"
}

step zlib build_zlib
step openssl build_openssl
step nghttp2 build_nghttp2
step curl build_curl
step yaml-cpp build_yaml_cpp
step boost build_boost
rm -rf "$work"
touch "$prefix/.complete"
echo "[$arch] dependencies built in $prefix" >&2
echo "$prefix"
