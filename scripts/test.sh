#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test, each test case once:
#   0. the local control planes (tests/cluster/build.sh: kube-apiserver & co. from pinned Go modules, Kubernetes
#      1.37 and the oldest release supported, 1.19; ~6 and ~5 min the first time on 2 cores, then reused from
#      ~/.cache/kubectl-mindie/cluster);
#   1. the build (as scripts/build.sh, less the unit tests: the product, the end-to-end tests, the benchmarks, the Go
#      instruments);
#   2. in front: the Go instruments' own tests, the smoke subset of the end-to-end tests on a 1.19 cluster (ctest
#      e2e_oldest), and the long end-to-end matrices (the fault matrix, the storm of concurrent commands, the cluster
#      scripts' tests, the lock taken over between every two writes of each command), on the plain build: they run
#      many processes and gain nothing from the sanitizers' slower code;
#      behind them, at the lowest CPU priority (nice 19), what needs no cluster: scripts/lint.sh (clang-format-14,
#      clang-tidy-14's function size, src/cmd file size), the release toolchain's cheap check (scripts/release/
#      check.sh: the pinned zig compiles two translation units for x86_64- and aarch64-linux-gnu.2.17, the pinned
#      Debian source packages are still served, a real krew installs the development binary from a local index), and
#      the build of kubectl-mindie and the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer
#      (-DMINDIE_SANITIZE=ON), then the unit tests;
#   3. every other end-to-end test against the sanitized kubectl-mindie (the e2e tests of step 1 drive it through
#      MINDIE_E2E_BINARY), so that every code path they reach runs under the sanitizers, once, in three shards at once;
#      behind them, at nice 19, each libFuzzer target for FUZZ_SECONDS (default 20) from its seed corpus, when
#      clang-14 and libFuzzer (libclang-rt-14-dev, both from install-deps.sh) are there.
# The end-to-end tests mostly wait for the cluster (a run of 30 cases used a quarter of one core), so the CPU-bound
# work behind them takes the cores they leave idle; nice 19 keeps it from slowing them.
# Stage times are printed as they go ("== stage (N s)", the background's after it is waited for); BENCHMARKS.md
# ("CI") has the last measured run. CI allows 90 minutes; the project keeps it within 50.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }

step "dependencies"
bash scripts/install-deps.sh
step "control plane (tests/cluster/build.sh: built from pinned Go modules once, then reused)"
bash tests/cluster/build.sh >/dev/null
step "control plane of the oldest supported Kubernetes, for the e2e_oldest smoke tests (built once, then reused)"
MINDIE_CLUSTER_RELEASE=oldest bash tests/cluster/build.sh >/dev/null
step "build"
# What step 2 runs, the demo's binaries and the benchmarks (built so that they keep building); the unit tests are
# built and run under the sanitizers.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target kubectl-mindie kubectl_complete-mindie testkit e2e_tests command_bench \
  status_bench

# kill_tree PID: PID and every process under it (a background stage left running when the script fails).
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
# in_background LOG FUNCTION: runs FUNCTION at nice 19 with its output in LOG; sets background_pid.
in_background() {
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    "$2"
  ) >"$1" 2>&1 &
  background_pid=$!
}
# await_background NAME PID LOG: waits for a background stage; prints its stage lines and summaries, or all of its
# log when it failed, and then fails.
await_background() {
  step "waiting for $1"
  if wait "$2"; then
    grep -v -E '^\[[0-9]+/[0-9]+\] ' "$3"
  else
    cat "$3"
    echo "$1 failed (log above)"
    exit 1
  fi
}
background_pids=()
trap 'for pid in "${background_pids[@]}"; do kill_tree "$pid"; done' EXIT

checks_without_cluster() {
  set -e
  step "lint (scripts/lint.sh: layout, functions of at most 80 lines, src/cmd files of at most 300)"
  bash scripts/lint.sh build
  step "release toolchain (scripts/release/check.sh: zig for glibc 2.17 targets, source pins, krew install)"
  bash scripts/release/check.sh build
  step "build with AddressSanitizer + UndefinedBehaviorSanitizer"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMINDIE_SANITIZE=ON >/dev/null
  # The product and the unit tests: the end-to-end tests of step 1's build drive the sanitized binary
  # (MINDIE_E2E_BINARY), as do its Go instruments; neither gains from being rebuilt here.
  cmake --build build-asan -j "$(nproc)" --target kubectl-mindie kubectl_complete-mindie unit_tests
  step "unit tests under the sanitizers"
  ctest --test-dir build-asan --output-on-failure -R '^unit$'
  step "lint, release check, sanitizer build and unit tests done"
}
mkdir -p build-asan
in_background build/checks.log checks_without_cluster
checks_pid=$background_pid
background_pids+=("$checks_pid")

step "Go instruments' tests, e2e smoke on the oldest Kubernetes, the long end-to-end matrices"
ctest --test-dir build --output-on-failure -R '^(testkit|e2e_oldest)$'
# The long ones, here only (step 3 excludes them): the same list both places.
long_e2e='fault matrix*,storm*,launcher*,build.sh*,fencing: a command whose lock is taken over*'
build/tests/e2e_tests --no-intro --test-case="$long_e2e"
await_background "lint, the release check, the sanitizer build and the unit tests" "$checks_pid" build/checks.log

fuzz_targets() {
  set -e
  if command -v clang++-14 >/dev/null &&
    dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed"; then
    step "fuzzing, ${FUZZ_SECONDS} s per target"
    # target:seed folder under tests/corpus (tests/fuzz/README.md)
    pairs=(fuzz_user_config:user_config fuzz_replace_json_number:user_config fuzz_env_config:env
      fuzz_kubeconfig:kubeconfig fuzz_yaml_json:yaml fuzz_status:status fuzz_unified_diff:unified_diff)
    cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DMINDIE_FUZZ=ON >/dev/null
    cmake --build build-fuzz -j "$(nproc)" --target "${pairs[@]%%:*}"
    work=build-fuzz/work
    rm -rf "$work"
    for pair in "${pairs[@]}"; do
      target=${pair%%:*}
      mkdir -p "$work/$target"
      # New inputs go to the work folder, findings (crash-*, timeout-*, oom-*) to build-fuzz/; the seeds stay as they
      # are. stdin from /dev/null: a generated kubeconfig may name /dev/stdin as its token file.
      if ! "build-fuzz/tests/fuzz/$target" "$work/$target" "tests/corpus/${pair#*:}" \
        -max_total_time="$FUZZ_SECONDS" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build-fuzz/ \
        </dev/null >"$work/$target.log" 2>&1; then
        tail -n 60 "$work/$target.log"
        echo "$target found a problem: reproduce with build-fuzz/tests/fuzz/$target build-fuzz/<artifact>"
        echo "(tests/fuzz/README.md says how to fix it and keep the input in tests/corpus)"
        exit 1
      fi
      grep -E "^Done [0-9]+ runs" "$work/$target.log" | sed "s/^/$target: /"
    done
  else
    step "fuzzing skipped: clang++-14 or libclang-rt-14-dev is not installed"
  fi
}
in_background build/fuzz.log fuzz_targets
fuzz_pid=$background_pid
background_pids+=("$fuzz_pid")

step "end-to-end tests against the sanitized binary (AddressSanitizer + UndefinedBehaviorSanitizer)"
# In MINDIE_E2E_SHARDS (default 3) shards at once, each with a control plane of its own: the tests mostly wait for
# the cluster (a run of 30 cases used a quarter of one core), so N at a time take about 1/N of the wall time. doctest
# numbers the cases passing the filters from 1; --first/--last pick a range of them.
asan_e2e() {
  MINDIE_E2E_BINARY="$PWD/build-asan/kubectl-mindie" build/tests/e2e_tests --no-intro --test-case-exclude="$long_e2e" "$@"
}
cases=$(asan_e2e --count | sed -n 's/.*passing the current filters: \([0-9]*\).*/\1/p')
shards=${MINDIE_E2E_SHARDS:-3}
per=$(((cases + shards - 1) / shards))
shard_pids=()
for ((k = 0; k < shards; ++k)); do
  asan_e2e --first="$((k * per + 1))" --last="$(((k + 1) * per))" >"build-asan/e2e-$((k + 1)).log" 2>&1 &
  shard_pids+=($!)
done
shard_failed=0
for pid in "${shard_pids[@]}"; do wait "$pid" || shard_failed=1; done
for ((k = 1; k <= shards; ++k)); do
  log=build-asan/e2e-$k.log
  # The summaries; everything of a failure.
  if ((shard_failed)); then cat "$log"; else grep -E '^\[doctest\] (test cases|assertions|Status)' "$log"; fi
done
((shard_failed == 0)) || { echo "end-to-end tests under the sanitizers failed (logs above)"; exit 1; }

await_background "the fuzz targets" "$fuzz_pid" build/fuzz.log
step "all tests passed"
