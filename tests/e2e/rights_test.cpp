// deploy and scale check the user's rights before their first write (issue 33: a namespace-restricted user's deploy
// wrote motor-config and the ServiceAccount, then got 403 on the ClusterRole, and only an admin could clean up).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

/// A token of a new ServiceAccount `sa` of namespace `ns`, bound there to ClusterRole or Role `role`.
std::string token_bound_to(const Cluster& sb, const std::string& sa, const std::string& kind, const std::string& role,
                           const std::string& ns = kNs) {
  sb.admin_ok({"create", "serviceaccount", sa, "-n", ns});
  sb.admin_ok({"create", "rolebinding", sa, "-n", ns, "--" + kind, role, "--serviceaccount", ns + ":" + sa});
  std::string token = sb.admin_ok({"create", "token", sa, "-n", ns});
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return token;
}

}  // namespace

TEST_CASE("rights: a namespace admin's deploy is refused before any write, naming every right it lacks") {
  Cluster sb;
  // Kubernetes' `admin` ClusterRole bound in the namespace: everything there but the CRDs, nothing cluster-wide.
  const std::string token = token_bound_to(sb, "ns-admin", "clusterrole", "admin");
  const std::size_t mark = sb.requests().size();
  const e2e::Run run =
      sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts, "--token", token});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: deploy needs rights your user does not have (in namespace " + kNs +
                             ", or cluster-wide where said): ") != std::string::npos,
                run.err);
  for (const char* right : {"create,patch inferservicesets.mindcluster.huawei.com",
                            "create,patch clusterroles.rbac.authorization.k8s.io (cluster-wide)",
                            "create,patch clusterrolebindings.rbac.authorization.k8s.io (cluster-wide)",
                            "get,list,watch nodes (cluster-wide)"})
    CHECK_MESSAGE(run.err.find(right) != std::string::npos, right << " in " << run.err);
  CHECK(run.err.find("`kubectl mindie doctor --print-rbac -n " + kNs + "` prints; nothing was written\n") !=
        std::string::npos);
  CHECK(run.err.find(token) == std::string::npos);
  // Nothing written, not even the lock; no motor-config, ServiceAccount or workload.
  const auto reqs = sb.requests_since(mark);
  CHECK(e2e::count_writes(reqs) == 0);
  for (const auto& r : reqs) CHECK_MESSAGE(!(r.is_lock() && r.method != "GET"), r.method << " " << r.path);
  CHECK(sb.admin({"get", "configmap", "motor-config", "-n", kNs}).exit_code != 0);
  CHECK(sb.admin({"get", "serviceaccount", "mindie-motor-controller", "-n", kNs}).exit_code != 0);
  CHECK(e2e::kubectl_items(sb, "inferservicesets", kNs).empty());
  // The check asked in few requests: the namespace's rules (the cluster-wide ones it lacks need no more).
  std::size_t reviews = 0;
  for (const auto& r : reqs) reviews += r.is_review() ? 1 : 0;
  CHECK(reviews == 1);
}

TEST_CASE("rights: a scale by a user who may not patch the InferServiceSet is refused before any write") {
  Cluster sb;
  e2e::TempDir dir;
  REQUIRE(sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts}).exit_code == 0);
  // Everything scale reads and the lock, motor-config's patch, but only reads of the InferServiceSet.
  const std::string role = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
    "metadata":{"name":"scaler","namespace":")" +
                           kNs + R"("},"rules":[
    {"apiGroups":[""],"resources":["configmaps","pods","events","services"],"verbs":["get","list","watch","patch"]},
    {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","create","patch"]},
    {"apiGroups":["mindcluster.huawei.com"],"resources":["inferservicesets","instancesets","inferservices"],
     "verbs":["get","list","watch"]}]})";
  sb.admin_ok({"apply", "-f", dir.write("role.json", role)});
  const std::string token = token_bound_to(sb, "scaler", "role", "scaler");
  const std::size_t mark = sb.requests().size();
  const e2e::Run run = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--skip-node-check", "--token", token});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err ==
                    "error: scale needs rights your user does not have (in namespace " + kNs +
                        ", or cluster-wide where said): patch inferservicesets.mindcluster.huawei.com; an "
                        "administrator can bind the Role and ClusterRole that `kubectl mindie doctor --print-rbac -n " +
                        kNs + "` prints; nothing was written\n",
                run.err);
  const auto reqs = sb.requests_since(mark);
  CHECK(e2e::count_writes(reqs) == 0);
  for (const auto& r : reqs) CHECK_MESSAGE(!(r.is_lock() && r.method != "GET"), r.method << " " << r.path);
  const json iss = e2e::kubectl_items(sb, "inferservicesets", kNs).at(0);
  for (const auto& role_spec : iss["spec"]["template"]["roles"]) CHECK(role_spec["replicas"] != 2);
  // With the patch granted, the same scale goes through.
  sb.admin_ok({"create", "role", "iss-patch", "-n", kNs, "--verb", "patch", "--resource",
               "inferservicesets.mindcluster.huawei.com"});
  sb.admin_ok(
      {"create", "rolebinding", "iss-patch", "-n", kNs, "--role", "iss-patch", "--serviceaccount", kNs + ":scaler"});
  const e2e::Run again = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--skip-node-check", "--token", token});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
}

TEST_CASE("rights: an AIBrix deploy and scale by a user who may only read StormServices are refused before any write") {
  Cluster sb({"--namespace", "vllm-test"});
  const std::string storm = std::string(MINDIE_SOURCE_DIR) + "/examples/aibrix/stormservice.yaml";
  REQUIRE(sb.mindie({"deploy", "--framework", "aibrix", "-f", storm}).exit_code == 0);
  // Services, pods and the lock's Lease, but only reads of StormServices.
  e2e::TempDir dir;
  sb.admin_ok({"apply", "-f", dir.write("role.json", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
    "metadata":{"name":"storm-reader","namespace":"vllm-test"},"rules":[
    {"apiGroups":[""],"resources":["services","pods","events"],"verbs":["*"]},
    {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["*"]},
    {"apiGroups":["orchestration.aibrix.ai"],"resources":["stormservices"],"verbs":["get","list","watch"]}]})")});
  const std::string token = token_bound_to(sb, "storm-reader", "role", "storm-reader", "vllm-test");
  std::size_t mark = sb.requests().size();
  e2e::Run run = sb.mindie({"deploy", "--framework", "aibrix", "-f", storm, "--token", token});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err ==
                    "error: deploy needs rights your user does not have (in namespace vllm-test, or cluster-wide "
                    "where said): patch stormservices.orchestration.aibrix.ai; ask an administrator to grant "
                    "them; nothing was written\n",
                run.err);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
  mark = sb.requests().size();
  run = sb.mindie({"scale", "--framework", "aibrix", "-n", "vllm-test", "--app", "qwen3-pd", "--role", "prefill",
                   "--replicas", "3", "--allow-restart", "--token", token});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: scale needs rights your user does not have (in namespace vllm-test, or "
                             "cluster-wide where said): patch stormservices.orchestration.aibrix.ai;") == 0,
                run.err);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
}
