// The deploy modes and components beyond the plain prefill/decode InferServiceSet, end to end against the local
// cluster: PD-hybrid (one union role, scale --hybrid), single_container (one Deployment, scale refused) and sglang's
// mf-store (a role, or a Deployment and Service in multi_deployment). Each runs deploy -> (scale) -> update-config
// -> delete and checks objects and the request log.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "schema_check.h"

using e2e::Cluster;
using e2e::item_names;
using e2e::kScripts;
using e2e::writes_since;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;
const std::string& kCm = e2e::kExampleConfigMapPath;
const std::string kIss = "/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/inferservicesets/mindie-motor-vllm";

json example() { return json::parse(e2e::read_file(e2e::kExample)); }

json hybrid_example() {
  json cfg = example();
  auto& d = cfg["motor_deploy_config"];
  for (const char* k : {"p_instances_num", "d_instances_num", "single_p_instance_pod_num", "single_d_instance_pod_num",
                        "p_pod_npu_num", "d_pod_npu_num"})
    d.erase(k);
  d["hybrid_instances_num"] = 1;
  d["single_hybrid_instance_pod_num"] = 2;
  d["hybrid_pod_npu_num"] = 8;
  cfg["motor_coordinator_config"]["scheduler_config"]["deploy_mode"] = "single_node";  // U4 rule 6
  return cfg;
}

json items(const Cluster& sb, const std::string& kind) { return e2e::kubectl_items(sb, kind, kNs); }

/// The status report's role named `name`, or null.
json role_report(const json& report, const std::string& name) {
  for (const auto& r : report.at("roles"))
    if (r.at("name") == name) return r;
  return nullptr;
}

/// A config whose controller log level differs (a setting update-config accepts).
std::string with_debug_logs(const e2e::TempDir& dir, json cfg) {
  cfg["motor_controller_config"]["logging_config"]["log_level"] = "DEBUG";
  return dir.write("user_config_debug.json", cfg.dump(2));
}

/// Runs update-config and checks it wrote motor-config only, once.
void check_update_config(const Cluster& sb, const e2e::TempDir& dir, const json& cfg) {
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"update-config", "-f", with_debug_logs(dir, cfg)});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured\n");
  const auto writes = writes_since(sb, mark);
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].path == kCm);
}

/// A second delete finds nothing: "No resources found", exit 0, nothing written (in every mode; --ignore-not-found
/// changes nothing).
void check_deleted_again(const Cluster& sb) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"delete", "-n", kNs},
                                               std::vector<std::string>{"delete", "-n", kNs, "--ignore-not-found"}}) {
    const std::size_t mark = sb.requests().size();
    const auto run = sb.mindie(args);
    CHECK_MESSAGE(run.exit_code == 0, run.err);
    CHECK(run.out == "No resources found in " + kNs + " namespace.\n");
    CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
  }
}

/// delete --wait removes everything; the ConfigMap goes last. Then deleting again finds nothing.
void check_delete(const Cluster& sb) {
  const auto run = sb.mindie({"delete", "-n", kNs, "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::string last = "configmap/motor-config deleted\n";
  REQUIRE(run.out.size() >= last.size());
  CHECK(run.out.substr(run.out.size() - last.size()) == last);
  CHECK(items(sb, "deployments").empty());
  CHECK(items(sb, "services").empty());
  CHECK(items(sb, "pods").empty());
  CHECK(items(sb, "configmaps").empty());
  check_deleted_again(sb);
}

}  // namespace

TEST_CASE("PD-hybrid: deploy a union role, scale it with --hybrid by one guarded JSON patch, update-config, delete") {
  Cluster sb;
  e2e::TempDir dir;
  const json cfg = hybrid_example();
  const std::string file = dir.write("user_config.json", cfg.dump(2));

  auto run = sb.mindie({"deploy", "-f", file, "--scripts-dir", kScripts, "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json iss =
      json::parse(e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", kNs, "get",
                                    "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm", "-o", "json"})
                      .out);
  std::size_t union_index = 0;
  const auto& roles = iss["spec"]["template"]["roles"];
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (roles[i]["name"] == "union") union_index = i;
    if (roles[i]["name"] == "prefill" || roles[i]["name"] == "decode") CHECK(roles[i]["replicas"] == 0);
  }
  REQUIRE(roles.at(union_index)["name"] == "union");
  CHECK(roles[union_index]["replicas"] == 1);
  CHECK(roles[union_index]["spec"]["replicas"] == 2);

  // status: the union role with its instance of two pods; nothing for prefill/decode.
  run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json report = json::parse(run.out);
  e2e::check_schema("status", report);
  CHECK(report["ready"] == true);
  CHECK(report["drift"].empty());
  const json u = role_report(report, "union");
  REQUIRE(u.is_object());
  CHECK(u["baselineInstances"] == 1);
  CHECK(u["readyPods"] == 2);
  run = sb.mindie({"status", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("union") != std::string::npos);
  e2e::check_report_schemas(sb, kNs);
  // -o name: the baseline and the workload, as kubectl get -o name prints them (once refused outside AIBrix).
  run = sb.mindie({"status", "-n", kNs, "-o", "name"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config\ninferserviceset.mindcluster.huawei.com/mindie-motor-vllm\n");

  // --prefill on a PD-hybrid deployment: refused, nothing written.
  std::size_t mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("--hybrid") != std::string::npos);
  CHECK(writes_since(sb, mark).empty());

  // scale --hybrid 3: one JSON patch of the union role (guarded by tests), then the baseline.
  mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--hybrid", "3", "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\n") == 0);
  auto writes = writes_since(sb, mark);
  REQUIRE(writes.size() == 2);
  CHECK(writes[0].path == kIss);
  CHECK(writes[0].content_type == "application/json-patch+json");
  const json patch = json::parse(writes[0].body);
  const std::string at = "/spec/template/roles/" + std::to_string(union_index);
  CHECK(patch ==
        json::parse(R"([{"op":"test","path":")" + at + R"(/name","value":"union"},)" + R"({"op":"test","path":")" + at +
                    R"(/replicas","value":1},)" + R"({"op":"replace","path":")" + at + R"(/replicas","value":3}])"));
  CHECK(writes[1].path == kCm);
  run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  report = json::parse(run.out);
  e2e::check_schema("status", report);
  CHECK(role_report(report, "union")["readyInstances"] == 3);
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
  // The baseline now says 3, the operator's text otherwise intact.
  const json cm = json::parse(e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", kNs,
                                                "get", "configmap", "motor-config", "-o", "json"})
                                  .out);
  CHECK(json::parse(cm["data"]["user_config.json"].get<std::string>())["motor_deploy_config"]["hybrid_instances_num"] ==
        3);

  // scale in from an edited config, then by flag.
  json more = cfg;
  more["motor_deploy_config"]["hybrid_instances_num"] = 2;
  run = sb.mindie({"scale", "-f", dir.write("more.json", more.dump())});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  CHECK(role_report(json::parse(run.out), "union")["specInstances"] == 2);
  run = sb.mindie({"scale", "-n", kNs, "--hybrid", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);

  // update-config may not change the union's count.
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "-f", dir.write("more.json", more.dump())});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("hybrid_instances_num") != std::string::npos);
  CHECK(writes_since(sb, mark).empty());
  check_update_config(sb, dir, cfg);
  check_delete(sb);
}

TEST_CASE("single_container: one Deployment and NodePort Service; scale refused; update-config; delete") {
  Cluster sb({"--no-crd"});  // this mode needs no infer-operator
  e2e::TempDir dir;
  json cfg = example();
  cfg["motor_deploy_config"]["deploy_mode"] = "single_container";
  cfg["motor_deploy_config"]["d_pod_npu_num"] = 8;
  const std::string file = dir.write("user_config.json", cfg.dump(2));
  const std::string out_dir = dir.path() + "/rendered";

  auto run = sb.mindie({"deploy", "-f", file, "--scripts-dir", kScripts, "--output-dir", out_dir});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "configmap/motor-config serverside-applied\n"
        "serviceaccount/mindie-motor-controller serverside-applied\n"
        "clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo serverside-applied\n"
        "clusterrolebinding.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo serverside-applied\n"
        "role.rbac.authorization.k8s.io/mindie-motor-controller serverside-applied\n"
        "rolebinding.rbac.authorization.k8s.io/mindie-motor-controller serverside-applied\n"
        "deployment.apps/mindie-demo-single-container serverside-applied\n"
        "service/mindie-demo-coordinator-service serverside-applied\n");
  CHECK(e2e::read_file(out_dir + "/single_container.yaml").find("SINGLE_CONTAINER") != std::string::npos);
  const json deployments = items(sb, "deployments");
  REQUIRE(deployments.size() == 1);
  const auto& container = deployments[0]["spec"]["template"]["spec"]["containers"][0];
  CHECK(container["resources"]["limits"]["huawei.com/Ascend910"] == "8");
  CHECK(item_names(items(sb, "services")) == std::vector<std::string>{"mindie-demo-coordinator-service"});
  CHECK(items(sb, "pods").size() == 1);

  run = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "1m"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json report = json::parse(run.out);
  e2e::check_schema("status", report);
  CHECK(report["deployMode"] == "single_container");
  CHECK(report["ready"] == true);
  CHECK(report["drift"].empty());
  const json role = role_report(report, "single-container");
  REQUIRE(role.is_object());
  CHECK(role["baselineInstances"] == 1);
  CHECK(role["readyPods"] == 1);
  CHECK(role["wantedInstances"] == 1);  // once 0: the table read "1/0"
  CHECK(role["desiredPods"] == 1);
  e2e::check_report_schemas(sb, kNs);
  // The table names the one Deployment that runs (the failing input named the workload label's value).
  run = sb.mindie({"status", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment/mindie-demo-single-container in namespace mindie-demo (single_container): Ready") ==
        0);
  run = sb.mindie({"status", "-n", kNs, "-o", "name"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config\ndeployment.apps/mindie-demo-single-container\n");

  // scale: refused with the reason, nothing written.
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("single_container") != std::string::npos);
  CHECK(run.err.find("cannot be scaled") != std::string::npos);
  CHECK(writes_since(sb, mark).empty());

  check_update_config(sb, dir, cfg);
  check_delete(sb);
}

TEST_CASE("sglang: the mf-store is deployed as a role (infer_service_set) or a Deployment + Service (multi)") {
  for (const char* mode : {"infer_service_set", "multi_deployment"}) {
    CAPTURE(mode);
    const bool multi = std::string_view(mode) == "multi_deployment";
    Cluster sb(multi ? std::vector<std::string>{"--no-crd"} : std::vector<std::string>{});
    e2e::TempDir dir;
    json cfg = example();
    cfg["motor_deploy_config"]["deploy_mode"] = mode;
    cfg["motor_engine_prefill_config"]["engine_type"] = "sglang";
    cfg["motor_engine_decode_config"]["engine_type"] = "sglang";
    auto run = sb.mindie({"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir", kScripts,
                          "--wait", "--timeout", "2m"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    if (multi) {
      CHECK(run.out.find("deployment.apps/mindie-motor-mf-store serverside-applied\n") != std::string::npos);
      CHECK(run.out.find("service/mf-store serverside-applied\n") != std::string::npos);
    }
    // The store's pod runs, and status counts it.
    run = sb.mindie({"status", "-n", kNs, "-o", "json"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const json report = json::parse(run.out);
    e2e::check_schema("status", report);
    CHECK(report["ready"] == true);
    const json store = role_report(report, "mf-store");
    REQUIRE(store.is_object());
    CHECK(store["baselineInstances"] == 1);
    CHECK(store["readyPods"] == 1);
    e2e::check_report_schemas(sb, kNs);
    // Engines were handed its address.
    bool engine_seen = false;
    for (const auto& pod : items(sb, "pods")) {
      const std::string name = pod["metadata"]["name"];
      if (name.find("prefill") == std::string::npos && name.find("sglang-p") == std::string::npos) continue;
      engine_seen = true;
      std::string url;
      for (const auto& e : pod["spec"]["containers"][0]["env"])
        if (e["name"] == "ASCEND_MF_STORE_URL") url = e.value("value", "");
      CHECK(url.find(":50089") != std::string::npos);
      CHECK(url.find("mf-store") != std::string::npos);
    }
    CHECK(engine_seen);
    check_delete(sb);
  }
}

TEST_CASE("multi_deployment: a redeploy with a component turned off removes its Deployment and Service") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = example();
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  json with = cfg;
  with["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"]["kv_connector"] = "MultiConnector";
  with["kv_cache_pool_config"] = {{"eviction_high_watermark_ratio", 0.9}, {"eviction_ratio", 0.1}};
  with["kv_conductor_config"] = {{"http_server_port", 8080}};
  auto run = sb.mindie({"deploy", "-f", dir.write("with.json", with.dump(2)), "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(item_names(items(sb, "services")) ==
        std::vector<std::string>{"kv-conductor", "kvp-master", "mindie-motor-controller-observability-service",
                                 "mindie-motor-controller-service", "mindie-motor-coordinator-infer",
                                 "mindie-motor-coordinator-mgmt", "mindie-motor-coordinator-obs"});

  // The failing input: both components kept running after this redeploy, unseen by the baseline.
  // --prune: the components go, as the config now says (without it the redeploy is refused, naming them).
  run = sb.mindie({"deploy", "-f", dir.write("without.json", cfg.dump(2)), "--prune"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const char* line :
       {"deployment.apps/mindie-motor-kv-pool deleted\n", "deployment.apps/mindie-motor-kv-conductor deleted\n",
        "service/kvp-master deleted\n", "service/kv-conductor deleted\n"}) {
    CAPTURE(line);
    CHECK(run.out.find(line) != std::string::npos);
  }
  CHECK(item_names(items(sb, "deployments")) ==
        std::vector<std::string>{"mindie-motor-controller", "mindie-motor-coordinator", "vllm-d0", "vllm-p0"});
  CHECK(item_names(items(sb, "services")) ==
        std::vector<std::string>{"mindie-motor-controller-observability-service", "mindie-motor-controller-service",
                                 "mindie-motor-coordinator-infer", "mindie-motor-coordinator-mgmt",
                                 "mindie-motor-coordinator-obs"});
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

// PyMotor 7d15c04 §U6 renamed mindie-motor-coordinator-service to mindie-motor-coordinator-mgmt: a redeploy removes
// the old one when it is kubectl-mindie's (its labels) and only warns about one that is not.
TEST_CASE("multi_deployment: a redeploy over the old coordinator Service name removes ours, warns about another's") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = example();
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  const std::string file = dir.write("multi.json", cfg.dump(2));
  auto run = sb.mindie({"deploy", "-f", file, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto old_service = [&](bool ours) {
    json labels = {{"app", "mindie-motor-coordinator"}};
    if (ours) {
      labels["app.kubernetes.io/managed-by"] = "kubectl-mindie";
      labels["app.kubernetes.io/instance"] = "mindie-motor-vllm";
      labels["app.kubernetes.io/component"] = "coordinator";
    }
    const json svc = {{"apiVersion", "v1"},
                      {"kind", "Service"},
                      {"metadata",
                       {{"name", "mindie-motor-coordinator-service"}, {"namespace", kNs}, {"labels", labels}}},
                      {"spec",
                       {{"type", "ClusterIP"},
                        {"selector", {{"app", "mindie-motor-coordinator"}}},
                        {"ports", {{{"name", "manage"}, {"port", 1026}, {"targetPort", 1026}}}}}}};
    sb.admin_ok({"create", "--validate=false", "-f",
                 dir.write(std::string("old-") + (ours ? "ours" : "theirs") + ".json", svc.dump())});
  };
  // What the release before §U6 left (ours): deleted by the redeploy.
  old_service(true);
  run = sb.mindie({"deploy", "-f", file});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.out.find("service/mindie-motor-coordinator-service deleted\n") != std::string::npos, run.out);
  CHECK(run.err.find("Warning: service/mindie-motor-coordinator-service") == std::string::npos);
  CHECK(item_names(items(sb, "services")) ==
        std::vector<std::string>{"mindie-motor-controller-observability-service", "mindie-motor-controller-service",
                                 "mindie-motor-coordinator-infer", "mindie-motor-coordinator-mgmt",
                                 "mindie-motor-coordinator-obs"});
  // deploy.py's (no kubectl-mindie labels): left, with a one-line warning.
  old_service(false);
  run = sb.mindie({"deploy", "-f", file});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("service/mindie-motor-coordinator-service deleted") == std::string::npos);
  CHECK_MESSAGE(run.err.find("Warning: service/mindie-motor-coordinator-service in namespace mindie-demo is not this "
                             "deployment's") != std::string::npos,
                run.err);
  const auto names = item_names(items(sb, "services"));
  CHECK(std::find(names.begin(), names.end(), "mindie-motor-coordinator-service") != names.end());
}

TEST_CASE("messages name the real way out: PD-hybrid switches, single_container counts, its --name") {
  e2e::TempDir dir;
  const std::string pd = dir.write("pd.json", example().dump(2));
  const std::string hybrid = dir.write("hybrid.json", hybrid_example().dump(2));
  {
    Cluster sb;
    auto run = sb.mindie({"deploy", "-f", hybrid, "--scripts-dir", kScripts});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    // update-config and scale cannot switch the workload; they point at a redeploy (not at each other).
    const std::size_t mark = sb.requests().size();
    run = sb.mindie({"update-config", "-f", pd});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("cannot switch between PD-hybrid") != std::string::npos);
    CHECK(run.err.find("kubectl mindie deploy") != std::string::npos);
    run = sb.mindie({"scale", "-f", pd});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("redeploy with kubectl mindie deploy -f " + pd) != std::string::npos);
    CHECK(writes_since(sb, mark).empty());
    // A redeploy does switch (--prune: the union instance goes), and says so instead of pointing at scale.
    run = sb.mindie({"deploy", "-f", pd, "--prune"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(run.err.find("switches from PD-hybrid to prefill/decode") != std::string::npos);
    CHECK(run.err.find("use kubectl mindie scale") == std::string::npos);
    std::string why;
    CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
  }
  {
    Cluster sb({"--no-crd"});
    json sc = example();
    sc["motor_deploy_config"]["deploy_mode"] = "single_container";
    auto run = sb.mindie({"deploy", "-f", dir.write("sc.json", sc.dump(2)), "--scripts-dir", kScripts});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    json more = sc;
    more["motor_deploy_config"]["p_instances_num"] = 2;
    const std::size_t mark = sb.requests().size();
    run = sb.mindie({"update-config", "-f", dir.write("sc2.json", more.dump(2))});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("single_container runs one pod") != std::string::npos);
    CHECK(run.err.find("use kubectl mindie scale") == std::string::npos);
    // A different workload name: the Deployments are named, not an InferServiceSet this mode does not have.
    json renamed = sc;
    renamed["motor_engine_prefill_config"]["engine_type"] = "mindie-llm";
    renamed["motor_engine_decode_config"]["engine_type"] = "mindie-llm";
    run = sb.mindie({"deploy", "-f", dir.write("sc3.json", renamed.dump(2))});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("belongs to the deployments of mindie-motor-vllm") != std::string::npos);
    CHECK(writes_since(sb, mark).empty());
  }
}

TEST_CASE("--scripts-dir: a file named env_functions.sh or a broken link fails before any request") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string scripts = dir.path() + "/scripts";
  std::filesystem::create_directories(scripts);
  for (const auto& f : std::filesystem::directory_iterator(kScripts))
    std::filesystem::copy_file(f.path(), scripts + "/" + f.path().filename().string());
  const std::string config = dir.write("user_config.json", example().dump(2));
  {
    std::ofstream(scripts + "/env_functions.sh") << "x\n";
    const std::size_t mark = sb.requests().size();
    const auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", scripts});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("env_functions.sh is generated by kubectl-mindie") != std::string::npos);
    CHECK(sb.requests_since(mark).empty());
    std::filesystem::remove(scripts + "/env_functions.sh");
  }
  {
    std::filesystem::create_symlink(dir.path() + "/missing.sh", scripts + "/extra.sh");
    const std::size_t mark = sb.requests().size();
    const auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", scripts});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("extra.sh is a broken symbolic link") != std::string::npos);
    CHECK(sb.requests_since(mark).empty());
  }
}
