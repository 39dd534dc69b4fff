// Measures, against the sandbox API server, the requests each command sends and its wall time (median of N
// runs, process start included). Usage: command_bench [runs]   (default 20). Prints a Markdown table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Measure {
  std::string name;
  std::size_t requests = 0;
  std::size_t writes = 0;
  double median_ms = 0;
};

/// Runs kubectl-mindie `runs` times with args(i) against the sandbox `cluster(i)` returns (the same one, or a
/// fresh one per run to measure a first deploy).
Measure measure(const std::function<const e2e::Sandbox&(int)>& cluster, const std::string& name, int runs,
                const std::function<std::vector<std::string>(int)>& args) {
  std::vector<double> times;
  Measure m{name};
  for (int i = 0; i < runs; ++i) {
    const e2e::Sandbox& sb = cluster(i);
    const std::size_t mark = sb.requests().size();
    const auto start = std::chrono::steady_clock::now();
    const auto run = sb.mindie(args(i));
    const auto end = std::chrono::steady_clock::now();
    if (run.exit_code != 0) {
      std::cerr << name << " failed: " << run.err;
      std::exit(1);
    }
    const auto reqs = sb.requests_since(mark);
    m.requests = std::max(m.requests, reqs.size());
    m.writes = std::max(m.writes, e2e::count_writes(reqs));
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  m.median_ms = times[times.size() / 2];
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  e2e::Sandbox sb;
  const std::vector<std::string> deploy = {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts};
  std::vector<Measure> results;
  std::unique_ptr<e2e::Sandbox> fresh;
  results.push_back(measure(
      [&](int) -> const e2e::Sandbox& {
        fresh = std::make_unique<e2e::Sandbox>();  // started outside the timed region
        return *fresh;
      },
      "deploy (first, empty cluster)", runs, [&](int) { return deploy; }));
  const auto same = [&](int) -> const e2e::Sandbox& { return sb; };
  results.push_back(measure(same, "deploy (again, same config)", runs, [&](int) { return deploy; }));
  results.push_back(measure(same, "scale", runs, [&](int i) {
    return std::vector<std::string>{"scale", "-n", "mindie-demo", "--prefill", std::to_string(1 + (i + 1) % 4)};
  }));
  results.push_back(
      measure(same, "status", runs, [&](int) { return std::vector<std::string>{"status", "-n", "mindie-demo"}; }));
  std::printf("| command | requests (max) | writes (max) | median wall time, ms (%d runs) |\n|---|---|---|---|\n", runs);
  for (const auto& m : results)
    std::printf("| %s | %zu | %zu | %.1f |\n", m.name.c_str(), m.requests, m.writes, m.median_ms);
}
