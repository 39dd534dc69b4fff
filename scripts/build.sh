#!/usr/bin/env bash
# Configures and builds into ./build (kubectl-mindie, the Go test instruments, tests).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
