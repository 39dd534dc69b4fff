// Measures, against the local cluster (tests/cluster: the real kube-apiserver, controllers, scheduler and KWOK, with
// the fake infer-operator; the requests counted by the fault proxy in front of it), the requests each command sends
// and its wall time (median of N runs, process start included). Usage: command_bench [runs]   (default 20). Prints a
// Markdown table.
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

/// Runs kubectl-mindie `runs` times with args(i) against the cluster view `cluster(i)` returns (the same one, or a
/// fresh one, with empty namespaces, per run to measure a first deploy).
Measure measure(const std::function<const e2e::Cluster&(int)>& cluster, const std::string& name, int runs,
                const std::function<std::vector<std::string>(int)>& args) {
  std::vector<double> times;
  Measure m{name};
  for (int i = 0; i < runs; ++i) {
    const e2e::Cluster& sb = cluster(i);
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
  const std::vector<std::string> deploy = {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts};
  std::vector<Measure> results;
  std::unique_ptr<e2e::Cluster> fresh;
  results.push_back(measure(
      [&](int) -> const e2e::Cluster& {
        fresh.reset();
        fresh = std::make_unique<e2e::Cluster>();  // fresh namespaces, made outside the timed region
        return *fresh;
      },
      "deploy (first, empty namespace)", runs, [&](int) { return deploy; }));
  fresh.reset();
  e2e::Cluster sb;
  if (sb.mindie(deploy).exit_code != 0) return 1;
  sb.wait_ready("mindie-demo");
  const auto same = [&](int) -> const e2e::Cluster& { return sb; };
  results.push_back(measure(same, "deploy (again, same config)", runs, [&](int) { return deploy; }));
  // scale, then wait for the new instances: the operator, the StatefulSet controller, the scheduler and KWOK.
  results.push_back(measure(same, "scale", runs, [&](int i) {
    return std::vector<std::string>{"scale", "-n", "mindie-demo", "--prefill", std::to_string(1 + (i + 1) % 2)};
  }));
  results.push_back(measure(same, "scale --wait (one instance more or less, until ready)", runs, [&](int i) {
    return std::vector<std::string>{"scale", "-n", "mindie-demo", "--prefill", std::to_string(1 + (i + 1) % 2),
                                    "--wait"};
  }));
  results.push_back(measure(same, "status", runs, [&](int) {
    return std::vector<std::string>{"status", "-n", "mindie-demo"};
  }));
  results.push_back(measure(same, "wait --for=ready (already ready)", runs, [&](int) {
    return std::vector<std::string>{"wait", "-n", "mindie-demo", "--for=ready"};
  }));
  results.push_back(measure(same, "rollout status --watch=false (rolled out)", runs, [&](int) {
    return std::vector<std::string>{"rollout", "status", "-n", "mindie-demo", "--watch=false"};
  }));
  // 16 engine instances, each replaced once, one at a time per role: 7 of a role's 8 keep serving, so no temporary
  // instance; each replacement waits for infer-operator, the StatefulSet controller, the scheduler and KWOK.
  if (sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "8", "--decode", "8", "--wait"}).exit_code != 0) return 1;
  results.push_back(measure(same, "rollout restart --all, 16 instances (prefill 8, decode 8), once", 1, [&](int) {
    return std::vector<std::string>{"rollout", "restart", "-n",     "mindie-demo", "--all",
                                    "--role",  "prefill", "--role", "decode"};
  }));
  std::printf("| command | requests (max) | writes (max) | median wall time, ms (%d runs) |\n|---|---|---|---|\n",
              runs);
  for (const auto& m : results)
    std::printf("| %s | %zu | %zu | %.1f |\n", m.name.c_str(), m.requests, m.writes, m.median_ms);
}
