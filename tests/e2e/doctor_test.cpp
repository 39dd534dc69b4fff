// kubectl mindie doctor on the real control plane (issue 33): a cluster ready for a deploy, one without
// infer-operator's or Volcano's APIs, a user without the rights, and the Role --print-rbac prints, which must be
// enough for that user to deploy.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"
#include "schema_check.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

/// `doctor -o json` with `args`: the report, checked against its documented schema, and the run.
std::pair<json, e2e::Run> doctor(const Cluster& sb, std::vector<std::string> args) {
  args.insert(args.begin(), {"doctor", "-o", "json"});
  const e2e::Run run = sb.mindie(args);
  REQUIRE_MESSAGE(!run.out.empty(), run.err);
  const json report = json::parse(run.out);
  e2e::check_schema("doctor", report);
  return {report, run};
}

/// The check named `name` of a report (null when absent).
json check_of(const json& report, const std::string& name) {
  for (const auto& c : report["checks"])
    if (c["name"] == name) return c;
  return nullptr;
}

/// A token of ServiceAccount `sa` in the example's namespace, made there.
std::string token_of(const Cluster& sb, const std::string& sa) {
  sb.admin_ok({"create", "serviceaccount", sa, "-n", kNs});
  e2e::Run run = sb.kubectl({"create", "token", sa, "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  std::string token = run.out;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return token;
}

}  // namespace

TEST_CASE("doctor: a cluster ready for the example passes, each check named, with the nodes' free NPUs") {
  Cluster sb;  // infer-operator's and Volcano's CRDs; 8 fake 800I_A2 nodes of 8 NPUs
  auto [report, run] = doctor(sb, {"-f", e2e::kExample});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(report["kind"] == "DoctorReport");
  CHECK(report["apiVersion"] == "kubectl-mindie/v1");
  CHECK(report["passed"] == true);
  CHECK(check_of(report, "server")["status"] == "ok");
  CHECK(check_of(report, "api/infer-operator")["status"] == "ok");
  CHECK(check_of(report, "api/volcano")["status"] == "ok");
  CHECK(check_of(report, "namespace")["status"] == "ok");
  CHECK_MESSAGE(check_of(report, "rbac")["status"] == "ok", report.dump(2));
  CHECK(check_of(report, "rbac/stop-operator")["message"] ==
        "rollout restart --stop-operator may stop and start infer-operator (in namespace mindx-dl)");
  CHECK(check_of(report, "nodes/800I_A2")["message"] ==
        "8 schedulable nodes, 64 huawei.com/Ascend910 allocatable, 64 free");
  CHECK(check_of(report, "fit")["status"] == "ok");
  CHECK(check_of(report, "nodeports")["message"] == "nodePorts 31015, 31017, 31027 free");
  // The fake operator runs beside the cluster, not as its Deployment: a warning with the fix, not a failure.
  CHECK(check_of(report, "controller/infer-operator")["status"] == "warning");

  // Deployed, the deployment is checked too, and its own pods' NPUs are counted as used.
  REQUIRE(sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts}).exit_code == 0);
  sb.wait_ready(kNs);
  std::tie(report, run) = doctor(sb, {"-n", kNs});
  CHECK(check_of(report, "deployment")["status"] == "ok");
  CHECK(check_of(report, "nodes/800I_A2")["message"] ==
        "8 schedulable nodes, 64 huawei.com/Ascend910 allocatable, 56 free");
  const e2e::Run table = sb.mindie({"doctor", "-n", kNs});
  CHECK(table.exit_code == 0);
  CHECK(table.out.rfind("CHECK", 0) == 0);
  CHECK(table.out.find("fix: install it (MindCluster infer-operator runs infer_service_set deployments)") !=
        std::string::npos);
}

TEST_CASE(
    "doctor: without infer-operator's APIs a config for infer_service_set fails; without Volcano's, a gang "
    "config fails") {
  Cluster sb({"--no-crd", Cluster::kNoVolcano});
  auto [report, run] = doctor(sb, {"-f", e2e::kExample});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "error: 1 of " + std::to_string(report["checks"].size()) + " checks failed\n");
  const json api = check_of(report, "api/infer-operator");
  CHECK(api["status"] == "failed");
  CHECK(api["message"] == "mindcluster.huawei.com/v1 does not serve inferservicesets, instancesets, inferservices");
  CHECK(api["fix"] == "install MindCluster infer-operator and its CRDs (deploy_mode infer_service_set needs them)");
  // Without a config it is only a warning: multi_deployment needs no operator.
  std::tie(report, run) = doctor(sb, {"-n", kNs});
  CHECK(run.exit_code == 0);
  CHECK(check_of(report, "api/infer-operator")["status"] == "warning");
  // Decode instances of two pods are gang-scheduled: Volcano's PodGroups are needed.
  std::tie(report, run) = doctor(sb, {"-f", e2e::kExample});
  CHECK(check_of(report, "api/volcano")["status"] == "warning");  // no gang-scheduled role: a warning
  e2e::TempDir dir;
  json gang = json::parse(e2e::read_file(e2e::kExample));
  gang["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
  std::tie(report, run) = doctor(sb, {"-f", dir.write("gang.json", gang.dump())});
  CHECK(run.err.find("error: 2 of ") == 0);
  CHECK(check_of(report, "api/volcano")["status"] == "failed");
}

TEST_CASE("doctor: a user without the rights is told which; --print-rbac's Role and ClusterRole let them deploy") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string token = token_of(sb, "deployer");
  auto [report, run] = doctor(sb, {"-n", kNs, "--token", token});
  CHECK(run.exit_code == 1);
  const json rbac = check_of(report, "rbac");
  CHECK(rbac["status"] == "failed");
  CHECK_MESSAGE(rbac["message"].get<std::string>().find(
                    "get,list,create,patch,delete clusterroles.rbac.authorization.k8s.io "
                    "(cluster-wide)") != std::string::npos,
                rbac.dump());
  // Only the rollout of gang roles needs the operator's namespace: a warning.
  const json stop = check_of(report, "rbac/stop-operator");
  CHECK(stop["status"] == "warning");
  CHECK_MESSAGE(stop["message"] ==
                    "missing get,patch deployments.apps; list,watch pods in namespace mindx-dl: rollout restart "
                    "--stop-operator (gang-scheduled roles) cannot run",
                stop.dump());
  // What the user may not read is not checked, in the server's words: a warning, the rbac check is the verdict.
  CHECK(check_of(report, "nodes")["status"] == "warning");
  CHECK(check_of(report, "nodes")["message"].get<std::string>().find("not checked: Error from server (Forbidden)") ==
        0);

  // What --print-rbac prints, bound to the user by an administrator, is enough to deploy.
  const e2e::Run printed = sb.mindie({"doctor", "--print-rbac", "-n", kNs});
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(printed.out.find("kind: ClusterRole") != std::string::npos);
  sb.admin_ok({"apply", "-f", dir.write("rbac.yaml", printed.out)});
  sb.admin_ok({"create", "rolebinding", "deployer", "-n", kNs, "--role", "kubectl-mindie-deployer", "--serviceaccount",
               kNs + ":deployer"});
  sb.admin_ok({"create", "clusterrolebinding", "deployer", "--clusterrole", "kubectl-mindie-deployer",
               "--serviceaccount", kNs + ":deployer"});
  std::tie(report, run) = doctor(sb, {"-n", kNs, "--token", token});
  CHECK_MESSAGE(check_of(report, "rbac")["status"] == "ok", report.dump(2));
  CHECK_MESSAGE(run.exit_code == 0, report.dump(2));
  CHECK(check_of(report, "nodes/800I_A2")["status"] == "ok");  // nodes and pods are listed with those rights
  run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts, "--token", token});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"delete", "-n", kNs, "--token", token});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
}
