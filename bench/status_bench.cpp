// status on a large fleet of the local cluster (tests/cluster: real kube-apiserver, controllers, scheduler, KWOK
// nodes; the fake infer-operator): 62 engine instances of 32 pods (prefill 31 x 32, decode 31 x 32) plus controller
// and coordinator = 64 instances, 1,986 pods made by the real StatefulSet controller and made Ready by KWOK.
// Measures per call, median of N runs: requests (counted by the fault proxy), CPU time (user + system), wall time and
// peak RSS of the kubectl-mindie process, for the tree and -o json, side by side with the cluster's own
// `kubectl get pods -o json -l <the same selector>`; then the control plane's memory (cluster.sh status).
// Usage: status_bench [runs]   (default 10). Prints Markdown tables. Needs 20 A2 nodes: it starts its cluster with
// MINDIE_CLUSTER_NODES_PER_PROFILE=20 (unless set, or MINDIE_E2E_CLUSTER names a running one).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Sample {
  double cpu_ms = 0;
  double wall_ms = 0;
  double rss_mib = 0;
};

/// Runs argv with stdout and stderr to /dev/null and returns its own CPU time, wall time and peak RSS (wait4).
Sample run_measured(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage use{};
  wait4(pid, &status, 0, &use);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << argv[0] << " failed (status " << status << ")\n";
    std::exit(1);
  }
  Sample s;
  s.cpu_ms = (use.ru_utime.tv_sec + use.ru_stime.tv_sec) * 1e3 + (use.ru_utime.tv_usec + use.ru_stime.tv_usec) / 1e3;
  s.wall_ms = std::chrono::duration<double, std::milli>(end - start).count();
  s.rss_mib = use.ru_maxrss / 1024.0;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  // 1,986 pods at 110 pods per node need 19 nodes of the engines' hardware profile (800I_A2).
  setenv("MINDIE_CLUSTER_NODES_PER_PROFILE", "20", 0);
  e2e::Cluster sb;
  // The rendered objects, with the engine roles blown up, applied as kubectl would: the fleet exists before the
  // first status call, so only status is measured. The engines ask for no NPUs here (2,000 of them would need 1,000
  // fake servers); what status reads does not change.
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
    if (obj["kind"] == "InferServiceSet") {
      for (auto& role : obj["spec"]["template"]["roles"]) {
        if (role["name"] != "prefill" && role["name"] != "decode") continue;
        role["replicas"] = 31;
        role["spec"]["replicas"] = 32;
        for (auto& c : role["spec"]["template"]["spec"]["containers"]) c.erase("resources");
      }
    }
    dir.write(std::to_string(n++) + ".json", obj.dump());
  }
  const auto start = std::chrono::steady_clock::now();
  const auto applied = sb.admin({"apply", "--server-side", "--field-manager", "kubectl-mindie", "-f", dir.path()});
  if (applied.exit_code != 0) {
    std::cerr << applied.err;
    return 1;
  }
  sb.wait_ready("mindie-demo", "30m");
  const double ready_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string selector = "infer.huawei.com/inferservice-name=mindie-motor-vllm-0";
  const auto pods = sb.admin({"get", "pods", "-n", "mindie-demo", "-l", selector, "--no-headers", "-o", "name"});
  const auto pod_count = std::count(pods.out.begin(), pods.out.end(), '\n');
  std::printf("%ld pods Ready %.0f s after the apply\n\n", static_cast<long>(pod_count), ready_s);

  std::printf("| %ld pods, 64 instances | requests | median CPU, ms | median wall, ms | median peak RSS, MiB |\n"
              "|---|---|---|---|---|\n",
              static_cast<long>(pod_count));
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"kubectl mindie status", sb.mindie_argv({"status", "-n", "mindie-demo"})},
      {"kubectl mindie status -o json", sb.mindie_argv({"status", "-n", "mindie-demo", "-o", "json"})},
      {"kubectl get pods -o json -l " + selector,
       {e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "get", "pods", "-n", "mindie-demo", "-o", "json",
        "-l", selector}},
  };
  for (const auto& [name, argv_] : commands) {
    std::vector<double> cpu, wall, rss;
    std::size_t requests = 0;
    for (int i = 0; i < runs; ++i) {
      const std::size_t mark = sb.requests().size();
      const Sample s = run_measured(argv_);
      requests = std::max(requests, sb.requests_since(mark).size());
      cpu.push_back(s.cpu_ms);
      wall.push_back(s.wall_ms);
      rss.push_back(s.rss_mib);
    }
    std::printf("| `%s` | %zu | %.1f | %.1f | %.1f |\n", name.c_str(), requests, median(cpu), median(wall),
                median(rss));
  }
  const auto memory = e2e::run_process(
      {"/bin/bash", std::string(MINDIE_SOURCE_DIR) + "/tests/cluster/cluster.sh", "status", sb.cluster_dir()});
  std::printf("\ncontrol plane with the fleet (cluster.sh status):\n```\n%s```\n", memory.out.c_str());
}
