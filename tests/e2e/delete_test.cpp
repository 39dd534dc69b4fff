// kubectl mindie delete end to end: the real binary against the local cluster (the fake infer-operator on).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kCm = e2e::kExampleConfigMapPath;

void deploy_example(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// Deploys the example into namespace mindie-motor (job_id changed), as a second, unrelated deployment.
void deploy_second(const Cluster& sb, const e2e::TempDir& dir) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["job_id"] = "mindie-motor";
  // nodePorts are cluster-wide: the first deployment holds the defaults 31015, 31017 and 31027.
  cfg["motor_deploy_config"]["infer_node_port"] = 31016;
  cfg["motor_deploy_config"]["obs_node_port"] = 31018;
  cfg["motor_deploy_config"]["controller_obs_node_port"] = 31028;
  const std::string path = dir.write("user_config.json", cfg.dump(2));
  const auto run = sb.mindie({"deploy", "-f", path, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// `kubectl get KIND -n NS -o json` item names (cluster-scoped when ns is empty).
std::vector<std::string> names(const Cluster& sb, const std::string& kind, const std::string& ns) {
  return e2e::item_names(e2e::kubectl_items(sb, kind, ns));
}

}  // namespace

TEST_CASE("delete removes the deployment of one namespace, motor-config last, and leaves another deployment alone") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_example(sb);
  deploy_second(sb, dir);
  sb.wait_ready("mindie-demo");
  sb.wait_ready("mindie-motor");
  REQUIRE(!names(sb, "pods", "mindie-demo").empty());
  const std::size_t mark = sb.requests().size();

  const auto run = sb.mindie({"delete", "-n", "mindie-demo", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm deleted\n"
        "serviceaccount/mindie-motor-controller deleted\n"
        "rolebinding.rbac.authorization.k8s.io/mindie-motor-controller deleted\n"
        "role.rbac.authorization.k8s.io/mindie-motor-controller deleted\n"
        "clusterrolebinding.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31015 deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31017 deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31027 deleted\n"
        "configmap/motor-config deleted\n");

  // Only DELETEs, one per object, the ConfigMap the last write; nothing outside mindie-demo's own.
  std::vector<std::string> deletes;
  for (const auto& r : sb.requests_since(mark)) {
    if (!r.is_write()) continue;
    CHECK(r.method == "DELETE");
    deletes.push_back(r.path);
  }
  REQUIRE(deletes.size() == 10);  // with the Role, RoleBinding and nodePort claims (cmd/node_port_claims.h)
  CHECK(deletes.back() == kCm);
  for (const auto& p : deletes) CHECK(p.find("mindie-motor-controller-mindie-motor") == std::string::npos);

  CHECK(names(sb, "pods", "mindie-demo").empty());
  CHECK(names(sb, "deployments", "mindie-demo").empty());
  CHECK(names(sb, "configmaps", "mindie-demo").empty());
  CHECK(names(sb, "inferservicesets", "mindie-demo").empty());
  const auto roles = names(sb, "clusterroles", "");
  CHECK(std::find(roles.begin(), roles.end(), "mindie-motor-controller-mindie-demo") == roles.end());
  CHECK(std::find(roles.begin(), roles.end(), "mindie-motor-controller-mindie-motor") != roles.end());
  CHECK(std::find(roles.begin(), roles.end(), "mindie-motor-nodeport-31015") == roles.end());
  CHECK(std::find(roles.begin(), roles.end(), "mindie-motor-nodeport-31016") != roles.end());
  // The other deployment is whole.
  CHECK(names(sb, "inferservicesets", "mindie-motor") == std::vector<std::string>{"mindie-motor-vllm"});
  CHECK(!names(sb, "pods", "mindie-motor").empty());
  CHECK(names(sb, "configmaps", "mindie-motor") == std::vector<std::string>{"motor-config"});

  // Idempotent: a second delete finds nothing and succeeds without writing.
  const std::size_t mark2 = sb.requests().size();
  const auto again = sb.mindie({"delete", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "No resources found in mindie-demo namespace.\n");
  CHECK(e2e::count_writes(sb.requests_since(mark2)) == 0);
}

TEST_CASE("delete --dry-run=client sends no write; --dry-run=server sends dryRun=All and keeps everything") {
  Cluster sb;
  deploy_example(sb);
  std::size_t mark = sb.requests().size();
  const auto client = sb.mindie({"delete", "-n", "mindie-demo", "--dry-run=client"});
  REQUIRE_MESSAGE(client.exit_code == 0, client.err);
  CHECK(client.out.find("configmap/motor-config deleted (dry run)\n") != std::string::npos);
  CHECK(client.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm deleted (dry run)") !=
        std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);

  mark = sb.requests().size();
  const auto server = sb.mindie({"delete", "-n", "mindie-demo", "--dry-run=server"});
  REQUIRE_MESSAGE(server.exit_code == 0, server.err);
  CHECK(server.out.find("configmap/motor-config deleted (server dry run)\n") != std::string::npos);
  for (const auto& r : sb.requests_since(mark))
    if (r.is_write()) CHECK(r.query.find("dryRun=All") != std::string::npos);
  CHECK(names(sb, "configmaps", "mindie-demo") == std::vector<std::string>{"motor-config"});
  CHECK(names(sb, "inferservicesets", "mindie-demo") == std::vector<std::string>{"mindie-motor-vllm"});
}

TEST_CASE("a delete that fails half-way keeps motor-config, says so, and a re-run finishes the job") {
  // The first DELETE of a ClusterRole fails (a DELETE is sent once: it is not among the requests retried).
  Cluster sb({"--fault", "DELETE:/apis/rbac.authorization.k8s.io/v1/clusterroles/.*:500:1"});
  deploy_example(sb);
  const auto failed = sb.mindie({"delete", "-n", "mindie-demo"});
  CHECK(failed.exit_code == 1);
  CHECK(failed.err.find("delete stopped at clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo "
                        "after writing:\n  inferserviceset.mindcluster.huawei.com/mindie-motor-vllm deleted") !=
        std::string::npos);
  CHECK(failed.err.find("configmap/motor-config (the record of the deployment) is kept") != std::string::npos);
  CHECK(failed.err.find("kubectl mindie delete -n mindie-demo") != std::string::npos);
  CHECK(names(sb, "configmaps", "mindie-demo") == std::vector<std::string>{"motor-config"});
  CHECK(names(sb, "inferservicesets", "mindie-demo").empty());

  const auto rerun = sb.mindie({"delete", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  CHECK(rerun.out ==
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31015 deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31017 deleted\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31027 deleted\n"
        "configmap/motor-config deleted\n");
  CHECK(names(sb, "configmaps", "mindie-demo").empty());
}

TEST_CASE("delete refuses a motor-config that kubectl-mindie did not write, and needs -n") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string cm = dir.write("cm.json", R"({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":"motor-config","namespace":"mindie-demo"},"data":{"user_config.json":"{}"}})");
  const auto created = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "create", "-f", cm});
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"delete", "-n", "mindie-demo"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("was not written by kubectl-mindie") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);

  const auto no_ns = sb.mindie({"delete"});
  CHECK(no_ns.exit_code == 1);
  CHECK(no_ns.err.find("-n NAMESPACE is required") != std::string::npos);
}

TEST_CASE("a server dry run of delete that fails says nothing changed, not how to recover") {
  Cluster sb({"--fault", "DELETE:/apis/rbac.authorization.k8s.io/v1/clusterroles/.*:500:1"});
  deploy_example(sb);
  const auto failed = sb.mindie({"delete", "-n", "mindie-demo", "--dry-run=server"});
  CHECK(failed.exit_code == 1);
  CHECK(failed.err.find("Error from server (InternalError)") != std::string::npos);
  CHECK(failed.err.find("server dry run: no changes were made") != std::string::npos);
  CHECK(failed.err.find("re-run") == std::string::npos);
  CHECK(names(sb, "inferservicesets", "mindie-demo") == std::vector<std::string>{"mindie-motor-vllm"});
}
