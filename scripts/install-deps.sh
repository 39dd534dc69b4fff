#!/usr/bin/env bash
# Installs the Debian packages kubectl-mindie needs to build and test, when any is missing. Needs root.
set -euo pipefail
packages=(cmake g++ make ninja-build pkg-config
  libboost-program-options1.81-dev libboost-json1.81-dev libyaml-cpp-dev libcurl4-openssl-dev libssl-dev
  doctest-dev nlohmann-json3-dev libcpp-httplib-dev
  openssl curl  # tests/cluster/cluster.sh: the cluster's certificates, its readiness checks
  faketime  # libfaketime: the e2e lock tests run commands with skewed and sped-up clocks
  clang-14 libclang-rt-14-dev  # libFuzzer for the bounded fuzz run of scripts/test.sh
  clang-format-14 clang-tidy-14)  # scripts/lint.sh: the code's layout and function sizes
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
