// status on a large fleet of the local cluster (tests/cluster: real kube-apiserver, controllers, scheduler, KWOK
// nodes; the fake infer-operator): 16 prefill and 16 decode instances of P pods plus controller and coordinator,
// made by the real StatefulSet controller and made Ready by KWOK. P = 62 (the default) gives 1,986 pods, the largest
// fleet within kubectl-mindie's limits (16 instances per role, 64 pods per instance); P = 312 gives 9,986 pods,
// beyond the pods-per-instance limit (status says so, and reads and draws them all the same).
// Measures per call, median of N runs: requests (counted by the fault proxy), CPU time (user + system), wall time and
// peak RSS of the kubectl-mindie process, for the tree and -o json, side by side with the cluster's own
// `kubectl get pods -o json -l <the same selector>` and the ratio; then the control plane's memory (cluster.sh status).
// Usage: status_bench [runs [pods-per-instance]]   (default 5 and 62). Prints Markdown tables. Its cluster has
// Atlas 800I A2 nodes only (the engines' profile), as many as the pods need at 110 per node (unless
// MINDIE_CLUSTER_NODES_PER_PROFILE or MINDIE_CLUSTER_PROFILES is set, or MINDIE_E2E_CLUSTER names a running cluster).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

/// The block of manifests/hardware_profiles.yaml that describes `name` ("- name: NAME" up to the next profile), as a
/// profiles file of its own for cluster.sh (MINDIE_CLUSTER_PROFILES). Empty when there is no such profile.
std::string profile_block(const std::string& name) {
  std::ifstream in(std::string(MINDIE_SOURCE_DIR) + "/manifests/hardware_profiles.yaml");
  std::string out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("- name:", 0) == 0) inside = line == "- name: " + name;
    if (inside) out += line + "\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const int pods_per_instance = argc > 2 ? std::max(1, std::atoi(argv[2])) : 62;
  constexpr int kInstancesPerRole = 16;
  const long fleet = 2L * kInstancesPerRole * pods_per_instance + 2;
  // Nodes of the engines' hardware profile (800I_A2) only, one more than the pods need at 110 per node: the other
  // profiles' nodes would only load the control plane (KWOK renews every node's lease).
  e2e::TempDir profiles;
  const std::string a2 = profile_block("800I_A2");
  if (a2.empty()) {
    std::cerr << "no 800I_A2 profile in manifests/hardware_profiles.yaml\n";
    return 1;
  }
  setenv("MINDIE_CLUSTER_PROFILES", profiles.write("profiles.yaml", a2).c_str(), 0);
  setenv("MINDIE_CLUSTER_NODES_PER_PROFILE", std::to_string(fleet / 110 + 2).c_str(), 0);
  e2e::Cluster sb;
  // The rendered objects, with the engine roles blown up, applied as kubectl would: the fleet exists before the
  // first status call, so only status is measured. The engines ask for no NPUs here (at 4 NPUs a pod, 2,000 of them
  // would need 1,000 8-NPU servers); what status reads does not change.
  const auto rendered = sb.mindie(
      {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts, "--dry-run=client", "-o", "json"});
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
        role["replicas"] = kInstancesPerRole;
        role["spec"]["replicas"] = pods_per_instance;
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
  sb.wait_ready("mindie-demo", "60m");
  const double ready_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string selector = "infer.huawei.com/inferservice-name=mindie-motor-vllm-0";
  const auto pods = sb.admin({"get", "pods", "-n", "mindie-demo", "-l", selector, "--no-headers", "-o", "name"});
  const auto pod_count = std::count(pods.out.begin(), pods.out.end(), '\n');
  std::printf(
      "%ld pods (%d prefill and %d decode instances of %d pods, controller, coordinator) Ready %.0f s after "
      "the apply, %ld expected\n\n",
      static_cast<long>(pod_count), kInstancesPerRole, kInstancesPerRole, pods_per_instance, ready_s, fleet);
  if (pod_count != fleet) {
    std::cerr << "the fleet has " << pod_count << " pods, not " << fleet << "\n";
    return 1;
  }

  std::printf(
      "| %ld pods, %d instances | requests | median CPU, ms | median wall, ms | median peak RSS, MiB |\n"
      "|---|---|---|---|---|\n",
      static_cast<long>(pod_count), 2 * kInstancesPerRole + 2);
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"kubectl mindie status", sb.mindie_argv({"status", "-n", "mindie-demo"})},
      {"kubectl mindie status -o json", sb.mindie_argv({"status", "-n", "mindie-demo", "-o", "json"})},
      {"kubectl get pods -o json -l " + selector,
       {e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "get", "pods", "-n", "mindie-demo", "-o", "json", "-l",
        selector}},
  };
  std::vector<Sample> medians;
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
    medians.push_back({median(cpu), median(wall), median(rss)});
    std::printf("| `%s` | %zu | %.1f | %.1f | %.1f |\n", name.c_str(), requests, medians.back().cpu_ms,
                medians.back().wall_ms, medians.back().rss_mib);
  }
  const Sample& status = medians.front();
  const Sample& kubectl = medians.back();
  std::printf("\nkubectl get pods / kubectl mindie status: CPU %.1fx, wall %.1fx, peak RSS %.1fx\n",
              kubectl.cpu_ms / status.cpu_ms, kubectl.wall_ms / status.wall_ms, kubectl.rss_mib / status.rss_mib);
  const auto memory = e2e::run_process(
      {"/bin/bash", std::string(MINDIE_SOURCE_DIR) + "/tests/cluster/cluster.sh", "status", sb.cluster_dir()});
  std::printf("\ncontrol plane with the fleet (cluster.sh status):\n```\n%s```\n", memory.out.c_str());
}
