// kubectl mindie list (and status -A) on the real control plane: an infer_service_set deployment in mindie-demo and a
// multi_deployment one in mindie-motor, listed across namespaces with one LIST per kind, in one namespace, as JSON,
// by a user who may read only mindie-demo; and the "did you mean -n X?" hint of status, scale and delete.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

/// The example into mindie-demo (infer_service_set), and as multi_deployment into mindie-motor, both ready.
void deploy_two(const Cluster& sb, const e2e::TempDir& dir) {
  auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["job_id"] = "mindie-motor";
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  // nodePorts are cluster-wide: the first deployment holds the defaults 31015, 31017 and 31027.
  cfg["motor_deploy_config"]["infer_node_port"] = 31016;
  cfg["motor_deploy_config"]["obs_node_port"] = 31018;
  cfg["motor_deploy_config"]["controller_obs_node_port"] = 31028;
  run = sb.mindie({"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready("mindie-demo");
  sb.wait_ready("mindie-motor");
}

/// The items of `list -o json` output in the test's namespaces (a namespace an earlier test left may still be going).
std::vector<json> ours(const std::string& out) {
  std::vector<json> items;
  const json list = json::parse(out);
  for (const auto& i : list.at("items"))
    if (i["namespace"] == "mindie-demo" || i["namespace"] == "mindie-motor") items.push_back(i);
  return items;
}

/// A copy of the test's kubeconfig whose user is ServiceAccount `reader` of mindie-demo, allowed to get and list
/// what list reads in mindie-demo only, its context namespace mindie-demo.
std::string namespace_reader(const Cluster& sb, const e2e::TempDir& dir) {
  const std::string rbac = R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"reader","namespace":"mindie-demo"}},
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"reader","namespace":"mindie-demo"},
     "rules":[{"apiGroups":["","apps","mindcluster.huawei.com","orchestration.aibrix.ai"],
      "resources":["configmaps","pods","deployments","statefulsets","inferservicesets","inferservices",
                   "instancesets","stormservices"],"verbs":["get","list"]}]},
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
     "metadata":{"name":"reader","namespace":"mindie-demo"},
     "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},
     "subjects":[{"kind":"ServiceAccount","name":"reader","namespace":"mindie-demo"}]}]})";
  sb.admin_ok({"apply", "-f", dir.write("rbac.json", rbac)});
  std::string token = sb.admin_ok({"create", "token", "reader", "-n", "mindie-demo"});
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const std::string kubeconfig = dir.write("reader-kubeconfig", e2e::read_file(sb.kubeconfig()));
  for (std::vector<std::string> args :
       {std::vector<std::string>{"config", "set-credentials", "reader", "--token", token},
        {"config", "set-context", "--current", "--user", "reader", "--namespace", "mindie-demo"}}) {
    args.insert(args.begin(), {e2e::kubectl_binary(), "--kubeconfig", kubeconfig});
    const auto run = e2e::run_process(args);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  }
  return kubeconfig;
}

}  // namespace

TEST_CASE("list -A: both deployments, ready, with one LIST per kind across namespaces; -n shows one; status -A") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_two(sb, dir);

  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"list", "-A", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto items = ours(run.out);
  REQUIRE_MESSAGE(items.size() == 2, run.out << run.err);
  CHECK(items[0]["namespace"] == "mindie-demo");
  CHECK(items[0]["mode"] == "infer_service_set");
  CHECK(items[0]["name"] == "mindie-motor-vllm");
  CHECK(items[1]["namespace"] == "mindie-motor");
  CHECK(items[1]["mode"] == "multi_deployment");
  for (const auto& i : items) {
    CHECK(i["framework"] == "mindie");
    CHECK(i["ready"] == true);
    CHECK(i["readyInstances"] == i["desiredInstances"]);
    CHECK(i["desiredInstances"].get<int>() >= 4);  // controller, coordinator, prefill, decode
    CHECK(i["outOfDateInstances"] == 0);
  }
  CHECK(json::parse(run.out)["kind"] == "DeploymentList");
  // One LIST per kind over all namespaces, none per namespace.
  const auto reqs = sb.requests_since(mark);
  CHECK(reqs.size() <= 12);
  for (const auto& r : reqs) {
    CHECK(r.method == "GET");
    CHECK_MESSAGE(r.path.find("/namespaces/") == std::string::npos, r.path);
  }

  run = sb.mindie({"list", "-A"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.rfind("NAMESPACE", 0) == 0);
  CHECK(run.out.find("\nmindie-demo ") != std::string::npos);
  CHECK(run.out.find("controller,coordinator,prefill,decode") != std::string::npos);

  // One namespace: no NAMESPACE column, as kubectl get.
  run = sb.mindie({"list", "-n", "mindie-motor", "-o", "wide"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.rfind("NAME ", 0) == 0);
  CHECK(run.out.find("multi_deployment") != std::string::npos);
  CHECK(run.out.find("infer_service_set") == std::string::npos);
  CHECK(run.out.find("prefill=1/1") != std::string::npos);

  // status -A is list -A.
  const auto alias = sb.mindie({"status", "-A", "-o", "json"});
  REQUIRE_MESSAGE(alias.exit_code == 0, alias.err);
  CHECK(ours(alias.out) == ours(sb.mindie({"list", "-A", "-o", "json"}).out));

  run = sb.mindie({"list", "-n", "mindie-none"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.empty());
  CHECK(run.err == "No resources found in mindie-none namespace.\n");
}

TEST_CASE("list -A by a user who may read only mindie-demo: a warning and that namespace, no crash") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_two(sb, dir);
  const std::string kubeconfig = namespace_reader(sb, dir);
  const auto run = e2e::run_process({e2e::mindie_binary(), "list", "-A", "--kubeconfig", kubeconfig});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: you may not list all namespaces (") != std::string::npos, run.err);
  CHECK(run.err.find("only namespace mindie-demo is shown") != std::string::npos);
  CHECK(run.out.find("mindie-demo") != std::string::npos);
  CHECK(run.out.find("mindie-motor ") == std::string::npos);
  CHECK(run.out.find("infer_service_set") != std::string::npos);
}

TEST_CASE("no deployment found: status, scale and delete suggest the namespaces holding one") {
  Cluster sb({"--namespace", "mindie-none"});
  e2e::TempDir dir;
  deploy_two(sb, dir);
  auto run = sb.mindie({"status", "-n", "mindie-none"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("no deployment found in namespace mindie-none") != std::string::npos, run.err);
  CHECK(run.err.find("; did you mean -n mindie-demo or -n mindie-motor?\n") != std::string::npos);
  run = sb.mindie({"scale", "-n", "mindie-none", "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("did you mean -n mindie-demo or -n mindie-motor?") != std::string::npos, run.err);
  run = sb.mindie({"delete", "-n", "mindie-none"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "No resources found in mindie-none namespace.\n");
  CHECK(run.err.find("did you mean -n mindie-demo or -n mindie-motor?") != std::string::npos);
}
