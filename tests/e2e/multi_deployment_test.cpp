// deploy_mode multi_deployment end to end: the real binary against the local cluster, whose Deployment and
// ReplicaSet controllers, scheduler and KWOK make the pods. No InferServiceSet CRD is installed (--no-crd): this
// mode needs no infer-operator.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kCm = e2e::kExampleConfigMapPath;
const std::string kDeployments = "/apis/apps/v1/namespaces/mindie-demo/deployments/";

std::string multi_config(const e2e::TempDir& dir) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  return dir.write("user_config.json", cfg.dump(2));
}

json items(const Cluster& sb, const std::string& kind) { return e2e::kubectl_items(sb, kind, "mindie-demo"); }

/// "METHOD path" of every write after `mark`.
std::vector<std::string> write_lines_since(const Cluster& sb, std::size_t mark) {
  std::vector<std::string> out;
  for (const auto& r : e2e::writes_since(sb, mark)) out.push_back(r.method + " " + r.path);
  return out;
}

/// Pods per engine Deployment (by the app label the Deployment selects).
std::size_t pods_of(const json& pods, const std::string& deployment) {
  return static_cast<std::size_t>(std::count_if(pods.begin(), pods.end(), [&](const json& p) {
    return p["metadata"]["labels"].value("app", "") == deployment;
  }));
}

}  // namespace

TEST_CASE("multi_deployment: deploy -> scale out -> status -> scale in -> delete, objects and requests") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  const std::string config = multi_config(dir);
  const std::string out_dir = dir.path() + "/rendered";

  // deploy: server-side apply of every object, the ConfigMap first; files named as deploy.py's.
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--output-dir", out_dir});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "configmap/motor-config serverside-applied\n"
        "serviceaccount/mindie-motor-controller serverside-applied\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo serverside-applied\n"
        "clusterrolebinding.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo serverside-applied\n"
        "role.rbac.authorization.k8s.io/mindie-motor-controller serverside-applied\n"
        "rolebinding.rbac.authorization.k8s.io/mindie-motor-controller serverside-applied\n"
        "deployment.apps/mindie-motor-controller serverside-applied\n"
        "service/mindie-motor-controller-service serverside-applied\n"
        "service/mindie-motor-controller-observability-service serverside-applied\n"
        "deployment.apps/mindie-motor-coordinator serverside-applied\n"
        "service/mindie-motor-coordinator-mgmt serverside-applied\n"
        "service/mindie-motor-coordinator-infer serverside-applied\n"
        "service/mindie-motor-coordinator-obs serverside-applied\n"
        "deployment.apps/vllm-p0 serverside-applied\n"
        "deployment.apps/vllm-d0 serverside-applied\n");
  auto writes = write_lines_since(sb, mark);
  REQUIRE(writes.size() == 15);
  CHECK(writes.front() == "PATCH " + kCm);
  for (const auto& w : writes) CHECK(w.rfind("PATCH ", 0) == 0);  // apply patches only
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(out_dir)) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"controller.yaml", "coordinator.yaml", "engine_d0.yaml", "engine_p0.yaml",
                                          "motor_config.yaml"});

  CHECK(e2e::item_names(items(sb, "deployments")) ==
        std::vector<std::string>{"mindie-motor-controller", "mindie-motor-coordinator", "vllm-d0", "vllm-p0"});
  sb.wait_ready("mindie-demo");
  json pods = items(sb, "pods");
  CHECK(pods.size() == 4);
  CHECK(pods_of(pods, "vllm-p0") == 1);
  // The NodePort was left to Kubernetes.
  for (const auto& s : items(sb, "services"))
    if (s["metadata"]["name"] == "mindie-motor-coordinator-infer") CHECK(s["spec"]["type"] == "NodePort");

  // scale out: the new engine Deployments by server-side apply, then the baseline.
  mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "3", "--decode", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "deployment.apps/vllm-p1 created\n"
        "deployment.apps/vllm-p2 created\n"
        "deployment.apps/vllm-d1 created\n");
  writes = write_lines_since(sb, mark);
  CHECK(writes == std::vector<std::string>{"PATCH " + kDeployments + "vllm-p1", "PATCH " + kDeployments + "vllm-p2",
                                           "PATCH " + kDeployments + "vllm-d1", "PATCH " + kCm});
  sb.wait_ready("mindie-demo");
  pods = items(sb, "pods");
  CHECK(pods.size() == 7);
  CHECK(pods_of(pods, "vllm-p2") == 1);

  // wait watches the Deployments and pods (there is no InferServiceSet).
  run = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "--timeout", "1m"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  // Each Deployment met the condition, as kubectl wait names them (issue 33: "deployments/mindie-motor-vllm" named
  // an object that does not exist).
  CHECK(run.out.find("deployment.apps/vllm-p0 condition met\n") != std::string::npos);
  CHECK(run.out.find("deployment.apps/mindie-motor-controller condition met\n") != std::string::npos);
  CHECK(run.out.find("deployments/") == std::string::npos);

  // status groups pods by Deployment, role and index; the baseline agrees.
  run = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json report = json::parse(run.out);
  CHECK(report["deployMode"] == "multi_deployment");
  CHECK(report["found"] == true);
  CHECK(report["ready"] == true);
  CHECK(report["drift"].empty());
  CHECK(report["deployments"].size() == 7);
  // Our Services (PyMotor 7d15c04 §U6 names), as kubectl get service shows them.
  std::vector<std::string> services;
  for (const auto& svc : report["services"]) services.push_back(svc["name"]);
  CHECK(services == std::vector<std::string>{"mindie-motor-controller-observability-service",
                                             "mindie-motor-controller-service", "mindie-motor-coordinator-infer",
                                             "mindie-motor-coordinator-mgmt", "mindie-motor-coordinator-obs"});
  for (const auto& role : report["roles"]) {
    if (role["name"] != "prefill") continue;
    CHECK(role["baselineInstances"] == 3);
    CHECK(role["specInstances"] == 3);
    CHECK(role["readyInstances"] == 3);
    CHECK(role["wantedInstances"] == 3);  // once 0: the table read "3/0" instances ready
    CHECK(role["desiredPods"] == 3);
    REQUIRE(role["instances"].size() == 3);
    CHECK(role["instances"][2]["deployment"] == "vllm-p2");
    CHECK(role["instances"][2]["pods"].size() == 1);
  }
  run = sb.mindie({"status", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployments of mindie-motor-vllm in namespace mindie-demo (multi_deployment): Ready") == 0);
  CHECK(run.out.find("instance 2 (deployment/vllm-p2)") != std::string::npos);
  CHECK(run.out.find("\nmindie-motor-coordinator-infer ") != std::string::npos);

  // scale in: the highest indices go first, then the baseline.
  mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "deployment.apps/vllm-p2 deleted\ndeployment.apps/vllm-p1 deleted\n");
  writes = write_lines_since(sb, mark);
  CHECK(writes == std::vector<std::string>{"DELETE " + kDeployments + "vllm-p2", "DELETE " + kDeployments + "vllm-p1",
                                           "PATCH " + kCm});
  CHECK(e2e::item_names(items(sb, "deployments")) == std::vector<std::string>{"mindie-motor-controller",
                                                                              "mindie-motor-coordinator", "vllm-d0",
                                                                              "vllm-d1", "vllm-p0"});
  // The owned ReplicaSets and pods go with their Deployments (the garbage collector, then KWOK).
  sb.wait_pods_gone("mindie-demo", "app in (vllm-p1,vllm-p2)");
  CHECK(items(sb, "pods").size() == 5);
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, "mindie-demo", why), why);

  // update-config: the ConfigMap only, with the counts the cluster now has; no Deployment is touched.
  json updated = json::parse(e2e::read_file(config));
  updated["motor_deploy_config"]["d_instances_num"] = 2;
  updated["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "-f", dir.write("updated.json", updated.dump(2))});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured\n");
  CHECK(write_lines_since(sb, mark) == std::vector<std::string>{"PATCH " + kCm});

  // delete: everything deploy and scale made, the ConfigMap last.
  run = sb.mindie({"delete", "-n", "mindie-demo", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-d1 deleted\n") != std::string::npos);
  // Every Service by its labels, the PyMotor 7d15c04 ones too (§U6, U14).
  for (const char* svc :
       {"mindie-motor-coordinator-infer", "mindie-motor-coordinator-mgmt", "mindie-motor-coordinator-obs",
        "mindie-motor-controller-service", "mindie-motor-controller-observability-service"}) {
    CAPTURE(svc);
    CHECK(run.out.find("service/" + std::string(svc) + " deleted\n") != std::string::npos);
  }
  CHECK(run.out.find("clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo deleted\n") !=
        std::string::npos);
  CHECK(run.out.size() >= std::string("configmap/motor-config deleted\n").size());
  CHECK(run.out.substr(run.out.size() - std::string("configmap/motor-config deleted\n").size()) ==
        "configmap/motor-config deleted\n");
  CHECK(items(sb, "deployments").empty());
  CHECK(items(sb, "services").empty());
  CHECK(items(sb, "pods").empty());
  CHECK(items(sb, "configmaps").empty());
  // Deleting again finds nothing, as in the other modes: "No resources found", exit 0, nothing written.
  mark = sb.requests().size();
  run = sb.mindie({"delete", "-n", "mindie-demo"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "No resources found in mindie-demo namespace.\n");
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
}

TEST_CASE("multi_deployment PD-hybrid: union Deployments <base>-u<i>, scale --hybrid, status, delete (U4)") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  auto& d = cfg["motor_deploy_config"];
  d["deploy_mode"] = "multi_deployment";
  for (const char* key : {"p_instances_num", "d_instances_num", "single_p_instance_pod_num",
                          "single_d_instance_pod_num", "p_pod_npu_num", "d_pod_npu_num"})
    d.erase(key);
  d["hybrid_instances_num"] = 1;
  d["single_hybrid_instance_pod_num"] = 1;
  d["hybrid_pod_npu_num"] = 4;
  cfg["motor_coordinator_config"]["scheduler_config"]["deploy_mode"] = "single_node";  // U4 rule 6
  const std::string config = dir.write("user_config.json", cfg.dump(2));
  const std::string out_dir = dir.path() + "/rendered";
  auto run = sb.mindie(
      {"deploy", "-f", config, "--scripts-dir", kScripts, "--output-dir", out_dir, "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-u0 serverside-applied\n") != std::string::npos);
  CHECK(run.out.find("vllm-p0") == std::string::npos);
  CHECK(std::filesystem::exists(out_dir + "/engine_u0.yaml"));

  run = sb.mindie({"scale", "-n", "mindie-demo", "--hybrid", "2", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-u1") != std::string::npos);
  CHECK(e2e::item_names(items(sb, "deployments")) ==
        std::vector<std::string>{"mindie-motor-controller", "mindie-motor-coordinator", "vllm-u0", "vllm-u1"});
  const json union_pods = items(sb, "pods");
  CHECK(pods_of(union_pods, "vllm-u1") == 1);

  run = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json report = json::parse(run.out);
  CHECK(report["ready"] == true);
  CHECK(report["drift"].empty());
  bool seen = false;
  for (const auto& role : report["roles"]) {
    if (role["name"] != "union") continue;
    seen = true;
    CHECK(role["baselineInstances"] == 2);
    CHECK(role["readyInstances"] == 2);
    REQUIRE(role["instances"].size() == 2);
    CHECK(role["instances"][1]["deployment"] == "vllm-u1");
  }
  CHECK(seen);
  // --prefill is refused for a PD-hybrid deployment, naming --hybrid.
  run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("--hybrid") != std::string::npos);

  run = sb.mindie({"scale", "-n", "mindie-demo", "--hybrid", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-u1 deleted") != std::string::npos);
  run = sb.mindie({"delete", "-n", "mindie-demo", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-u0 deleted\n") != std::string::npos);
  CHECK(items(sb, "deployments").empty());
}

TEST_CASE("multi_deployment encode instances: <base>-e<i>, scale --encode, status, update-config refuses (U5)") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  cfg["motor_deploy_config"]["e_instances_num"] = 1;
  cfg["motor_deploy_config"]["e_pod_npu_num"] = 2;
  const std::string config = dir.write("user_config.json", cfg.dump(2));
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-e0 serverside-applied\ndeployment.apps/vllm-p0 serverside-applied\n") !=
        std::string::npos);

  run = sb.mindie({"scale", "-n", "mindie-demo", "--encode", "2", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-e1") != std::string::npos);
  run = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json report = json::parse(run.out);
  CHECK(report["drift"].empty());
  bool seen = false;
  for (const auto& role : report["roles"]) {
    if (role["name"] != "encode") continue;
    seen = true;
    CHECK(role["baselineInstances"] == 2);
    CHECK(role["readyInstances"] == 2);
  }
  CHECK(seen);
  // The baseline carries the new count; update-config may not change it.
  cfg["motor_deploy_config"]["e_instances_num"] = 3;
  run = sb.mindie({"update-config", "-f", dir.write("changed.json", cfg.dump(2))});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("encode instances cannot change with update-config: the baseline has 2") !=
                    std::string::npos,
                run.err);
  run = sb.mindie({"scale", "-n", "mindie-demo", "--encode", "0"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "deployment.apps/vllm-e1 deleted\ndeployment.apps/vllm-e0 deleted\n");
}

TEST_CASE("multi_deployment: a scale whose baseline write fails is undone") {
  // The baseline PATCH fails once (403: not retried); the created Deployment must go again.
  Cluster sb({"--no-crd", "--fault", "PATCH:" + kCm + ":403:1:1"});
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", multi_config(dir), "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", "mindie-demo", "--decode", "2"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("the scale was undone") != std::string::npos);
  CHECK(write_lines_since(sb, mark) == std::vector<std::string>{"PATCH " + kDeployments + "vllm-d1", "PATCH " + kCm,
                                                                "DELETE " + kDeployments + "vllm-d1"});
  CHECK(e2e::item_names(items(sb, "deployments")) ==
        std::vector<std::string>{"mindie-motor-controller", "mindie-motor-coordinator", "vllm-d0", "vllm-p0"});
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, "mindie-demo", why), why);
}

TEST_CASE("multi_deployment: a redeploy with lower counts than a scale set is refused, then --prune removes them") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  const std::string config = multi_config(dir);
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // The stale file: refused before any write, naming the engine that would go.
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"deploy", "-f", config});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("\n  deployment.apps/vllm-p1\n") != std::string::npos, run.err);
  for (const auto& r : e2e::writes_since(sb, mark))  // deploy's field-conflict probe is a dry run: nothing written
    CHECK_MESSAGE(r.query.find("dryRun=All") != std::string::npos, (r.method + " " + r.path));
  CHECK(e2e::item_names(items(sb, "deployments")) == std::vector<std::string>{"mindie-motor-controller",
                                                                              "mindie-motor-coordinator", "vllm-d0",
                                                                              "vllm-p0", "vllm-p1"});
  // diff shows it going, as a diff to nothing.
  run = sb.mindie({"diff", "-f", config});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.out.find("--- LIVE/apps.v1.Deployment.mindie-demo.vllm-p1\n+++ MERGED/apps.v1.Deployment.mindie-"
                             "demo.vllm-p1\n@@ -1,") != std::string::npos,
                run.out);
  run = sb.mindie({"deploy", "-f", config, "--prune"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-p1 deleted\n") != std::string::npos);
  CHECK(e2e::item_names(items(sb, "deployments")) ==
        std::vector<std::string>{"mindie-motor-controller", "mindie-motor-coordinator", "vllm-d0", "vllm-p0"});
}

TEST_CASE("multi_deployment: status explains an unhealthy engine instance by role and index") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", multi_config(dir), "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready("mindie-demo");
  sb.set_pod_state("mindie-demo", "app=vllm-d0", "CrashLoopBackOff");
  run = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json report = json::parse(run.out);
  CHECK(report["ready"] == false);
  REQUIRE(report["unready"].size() == 1);
  const std::string line = report["unready"][0];
  CHECK(line.rfind("pod vllm-d0-", 0) == 0);
  CHECK(line.find("(role decode, instance 0): crash loop") != std::string::npos);
  for (const auto& role : report["roles"])
    if (role["name"] == "decode") CHECK(role["healthy"] == false);
    else if (role["name"] == "prefill") CHECK(role["healthy"] == true);
}
