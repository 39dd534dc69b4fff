// status on a large fleet: 62 engine instances of 32 pods (prefill 31 x 32, decode 31 x 32) plus controller and
// coordinator = 64 instances, 1,986 pods, all simulated by the sandbox. Measures requests per status call and the
// CPU time (user + system) of the kubectl-mindie process, median of N runs, for the tree and -o json.
// Usage: status_bench [runs]   (default 10). Prints a Markdown table.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace {

double cpu_ms(const rusage& r) {
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  e2e::Sandbox sb;
  // The rendered objects, with the engine roles blown up, applied as kubectl would: the fleet exists before the
  // first status call, so only status is measured.
  const auto rendered = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts,
                                   "--dry-run=client", "-o", "json"});
  if (rendered.exit_code != 0) {
    std::cerr << rendered.err;
    return 1;
  }
  auto list = nlohmann::json::parse(rendered.out);
  e2e::TempDir dir;  // one file per object, as kubectl apply -f DIR reads them
  int n = 0;
  for (auto& obj : list["items"]) {
    if (obj["kind"] != "InferServiceSet") {
      dir.write(std::to_string(n++) + ".json", obj.dump());
      continue;
    }
    for (auto& role : obj["spec"]["template"]["roles"]) {
      if (role["name"] != "prefill" && role["name"] != "decode") continue;
      role["replicas"] = 31;
      role["spec"]["replicas"] = 32;
    }
    dir.write(std::to_string(n++) + ".json", obj.dump());
  }
  const auto applied = e2e::run_process({"/usr/bin/kubectl", "--kubeconfig", sb.kubeconfig(), "apply",
                                         "--server-side", "--field-manager", "kubectl-mindie", "-f", dir.path()});
  if (applied.exit_code != 0) {
    std::cerr << applied.err;
    return 1;
  }
  const auto pods = e2e::run_process({"/usr/bin/kubectl", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "get",
                                      "pods", "--no-headers", "-o", "name"});
  const auto pod_count = std::count(pods.out.begin(), pods.out.end(), '\n');

  std::printf("| status (%ld pods, 64 instances) | requests | median CPU time, ms (%d runs) | median wall time, ms |\n"
              "|---|---|---|---|\n",
              static_cast<long>(pod_count), runs);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"status", "-n", "mindie-demo"},
                                              std::vector<std::string>{"status", "-n", "mindie-demo", "-o", "json"}}) {
    std::vector<double> cpu, wall;
    std::size_t requests = 0;
    for (int i = 0; i < runs; ++i) {
      const std::size_t mark = sb.requests().size();
      rusage before{}, after{};
      getrusage(RUSAGE_CHILDREN, &before);
      const auto start = std::chrono::steady_clock::now();
      const auto run = sb.mindie(args);
      const auto end = std::chrono::steady_clock::now();
      getrusage(RUSAGE_CHILDREN, &after);
      if (run.exit_code != 0) {
        std::cerr << run.err;
        return 1;
      }
      requests = std::max(requests, sb.requests_since(mark).size());
      cpu.push_back(cpu_ms(after) - cpu_ms(before));
      wall.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(cpu.begin(), cpu.end());
    std::sort(wall.begin(), wall.end());
    std::string name;
    for (const auto& a : args) name += (name.empty() ? "" : " ") + a;
    std::printf("| `%s` | %zu | %.1f | %.1f |\n", name.c_str(), requests, cpu[cpu.size() / 2], wall[wall.size() / 2]);
  }
}
