// deploy --adopt end to end: a deployment written the way PyMotor's deploy.py 7d15c04 writes it (client-side
// `kubectl apply` of its files: no kubectl-mindie labels or records, its per-namespace RBAC names, a Deployment
// label of its own, an old-named Service a redeploy of an older release left) is refused without --adopt, taken
// over with it, and then scaled, shown and deleted like one kubectl-mindie made.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

// Drops kubectl-mindie's labels and annotations wherever labels/annotations appear (object and pod templates).
void strip_ours(json& node) {
  if (node.is_array()) {
    for (auto& v : node) strip_ours(v);
    return;
  }
  if (!node.is_object()) return;
  for (const char* key : {"labels", "annotations"}) {
    if (!node.contains(key) || !node[key].is_object()) continue;
    json kept = json::object();
    for (auto& [k, v] : node[key].items())
      if (k.rfind("app.kubernetes.io/", 0) != 0 && k.rfind("kubectl-mindie/", 0) != 0) kept[k] = v;
    node[key] = kept;
  }
  for (auto& [k, v] : node.items()) strip_ours(v);
}

/// Writes `config`'s deployment into the cluster as deploy.py 7d15c04 would: what kubectl-mindie renders for it,
/// without our records, with deploy.py's names and extras, by client-side `kubectl apply` as the admin.
void deploy_like_deploy_py(const Cluster& sb, const e2e::TempDir& dir, const std::string& config) {
  const auto rendered =
      sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--dry-run=client", "-o", "json"});
  REQUIRE_MESSAGE(rendered.exit_code == 0, rendered.err);
  json list = json::parse(rendered.out);
  for (auto& obj : list["items"]) {
    strip_ours(obj);
    const std::string kind = obj["kind"];
    if (kind == "ClusterRole") obj["metadata"]["name"] = "mindie-controller-role-" + kNs;
    if (kind == "ClusterRoleBinding") {
      obj["metadata"]["name"] = "mindie-controller-binding-" + kNs;
      obj["roleRef"]["name"] = "mindie-controller-role-" + kNs;
    }
    if (kind == "Deployment") obj["metadata"]["labels"]["job-name"] = "deploy-py-20260601";
    if (kind == "ConfigMap") {
      // deploy.py stores its own serialisation (deploy_mode written in) and no env_functions.sh.
      obj["data"]["user_config.json"] = json::parse(std::string(obj["data"]["user_config.json"])).dump(2) + "\n";
      obj["data"].erase("env_functions.sh");
    }
  }
  if (list["items"][0]["data"].contains("user_config.json") &&
      json::parse(std::string(list["items"][0]["data"]["user_config.json"]))["motor_deploy_config"]["deploy_mode"] ==
          "multi_deployment")
    list["items"].push_back({{"apiVersion", "v1"},
                             {"kind", "Service"},
                             {"metadata", {{"name", "mindie-motor-coordinator-service"}, {"namespace", kNs}}},
                             {"spec",
                              {{"selector", {{"app", "mindie-motor-coordinator"}}},
                               {"ports", {{{"name", "manage"}, {"port", 1026}, {"targetPort", 1026}}}}}}});
  sb.admin_ok({"apply", "-f", dir.write("deploy-py.json", list.dump())});
}

std::string multi_config(const e2e::TempDir& dir) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  return dir.write("user_config.json", cfg.dump(2));
}

/// `kubectl get KIND [NAME] -o json` in kNs with managedFields, which kubectl hides by default.
json get(const Cluster& sb, const std::string& kind, const std::string& name) {
  std::vector<std::string> args = {"get", kind, "-n", kNs, "-o", "json", "--show-managed-fields"};
  if (!name.empty()) args.insert(args.begin() + 2, name);
  return json::parse(sb.admin_ok(args));
}

bool has_manager(const json& obj, const std::string& manager) {
  for (const auto& e : obj["metadata"].value("managedFields", json::array()))
    if (e.value("manager", "") == manager) return true;
  return false;
}

}  // namespace

TEST_CASE("deploy.py's multi_deployment: refused without --adopt, taken over with it, then scale, status, delete") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  const std::string config = multi_config(dir);
  deploy_like_deploy_py(sb, dir, config);

  // Without --adopt: what it found, the way out, zero writes. scale and update-config refuse the same way.
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("holds a deployment kubectl-mindie did not make") != std::string::npos, run.err);
  CHECK(run.err.find("deployment.apps/vllm-p0 (taken over)") != std::string::npos);
  CHECK(run.err.find("clusterrolebinding.rbac.authorization.k8s.io/mindie-controller-binding-" + kNs + " (replaced") !=
        std::string::npos);
  CHECK(run.err.find("service/mindie-motor-coordinator-service (replaced") != std::string::npos);
  CHECK(run.err.find("re-run with --adopt") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("deploy -f user_config.json --adopt") != std::string::npos, run.err);
  run = sb.mindie({"update-config", "-f", config});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("which update-config does not act on") != std::string::npos, run.err);
  run = sb.mindie({"status", "-n", kNs});
  CHECK_MESSAGE(run.err.find("was not written by kubectl-mindie (deploy.py?)") != std::string::npos, run.err);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);

  // A server dry run shows the takeover and changes nothing.
  run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt", "--dry-run=server"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.out.find("deployment.apps/vllm-p0 adopted (server dry run)\n") != std::string::npos, run.out);
  json p0 = get(sb, "deployment", "vllm-p0");
  CHECK(p0["metadata"]["labels"].contains("job-name"));
  CHECK(has_manager(p0, "kubectl-client-side-apply"));

  // --adopt: fields handed over, everything applied with our labels, deploy.py's renamed objects deleted.
  run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("Warning: adopting what another tool (deploy.py) made in namespace " + kNs) != std::string::npos);
  for (const char* line :
       {"configmap/motor-config adopted\n", "deployment.apps/vllm-p0 adopted\n",
        "service/mindie-motor-coordinator-mgmt adopted\n", "deployment.apps/vllm-d0 serverside-applied\n",
        "service/mindie-motor-coordinator-service deleted\n"})
    CHECK_MESSAGE(run.out.find(line) != std::string::npos, line, "\n", run.out);
  CHECK(run.out.find("clusterrole.rbac.authorization.k8s.io/mindie-controller-role-" + kNs + " deleted\n") !=
        std::string::npos);
  CHECK(run.out.find("clusterrolebinding.rbac.authorization.k8s.io/mindie-controller-binding-" + kNs + " deleted\n") !=
        std::string::npos);
  for (const char* kind : {"deployments", "services", "configmaps", "serviceaccounts"}) {
    const json items = get(sb, kind, "")["items"];
    CHECK_MESSAGE(items.size() > 1, kind);  // each kind has ours besides Kubernetes' own
    for (const auto& obj : items) {
      const std::string name = obj["metadata"]["name"];
      if (name == "kube-root-ca.crt" || name == "default") continue;  // Kubernetes' own
      CHECK_MESSAGE(obj["metadata"]["labels"].value("app.kubernetes.io/managed-by", "") == "kubectl-mindie", kind, "/",
                    name);
      // deploy.py's own fields went with client-side apply's ownership: its label and the last-applied record.
      CHECK_MESSAGE(!obj["metadata"]["labels"].contains("job-name"), kind, "/", name);
      CHECK_MESSAGE(!obj["metadata"]
                         .value("annotations", json::object())
                         .contains("kubectl.kubernetes.io/last-applied-configuration"),
                    kind, "/", name);
      CHECK_MESSAGE(!has_manager(obj, "kubectl-client-side-apply"), kind, "/", name);
      CHECK_MESSAGE(has_manager(obj, "kubectl-mindie"), kind, "/", name);
    }
  }
  json cm = json::parse(sb.admin_ok({"get", "configmap", "-n", kNs, "motor-config", "-o", "json"}));
  CHECK(cm["metadata"]["annotations"].value("kubectl-mindie/deploy-mode", "") == "multi_deployment");
  CHECK(cm["data"]["user_config.json"] == e2e::read_file(config));  // the user's bytes, not deploy.py's
  CHECK(sb.admin({"get", "clusterrole", "mindie-controller-role-" + kNs}).exit_code != 0);

  // A second --adopt has nothing left to take over; a plain redeploy works as on any deployment of ours.
  run = sb.mindie({"deploy", "-f", config, "--adopt"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("adopted") == std::string::npos);
  CHECK(run.err.find("adopting") == std::string::npos);

  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"status", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("not written by kubectl-mindie") == std::string::npos);
  CHECK_MESSAGE(run.out.find("vllm-p1") != std::string::npos, run.out);
  run = sb.mindie({"delete", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(e2e::kubectl_items(sb, "deployments", kNs).empty());
  CHECK(e2e::kubectl_items(sb, "services", kNs).empty());
  CHECK(e2e::kubectl_items(sb, "configmaps", kNs).empty());
}

TEST_CASE("deploy.py's infer_service_set: --adopt takes over the InferServiceSet; counts agree, scale works") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string config = dir.write("user_config.json", e2e::read_file(e2e::kExample));
  deploy_like_deploy_py(sb, dir, config);
  sb.wait_ready(kNs);  // running, as deploy.py's deployments are: the operator made every instance from its template
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm (taken over)") !=
                    std::string::npos,
                run.err);
  run = sb.mindie({"delete", "-n", kNs});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("which delete does not act on") != std::string::npos);

  run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm adopted\n") != std::string::npos,
                run.out);
  json iss = get(sb, "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm");
  CHECK(iss["metadata"]["labels"].value("app.kubernetes.io/managed-by", "") == "kubectl-mindie");
  CHECK(!has_manager(iss, "kubectl-client-side-apply"));
  // deploy.py's pod templates are not ours: the running instances keep them (infer-operator never updates one),
  // deploy says so and status counts them as on other templates; the counts agree.
  CHECK_MESSAGE(run.err.find("prefill 1): run \"kubectl mindie rollout restart -n mindie-demo\" to roll them\n") !=
                    std::string::npos,
                run.err);
  const auto roles_of = [&] {
    const auto status = sb.mindie({"status", "-n", kNs, "-o", "json"});
    REQUIRE_MESSAGE(status.exit_code == 0, status.err);
    CHECK(status.err.empty());
    return json::parse(status.out)["roles"];
  };
  for (const auto& role : roles_of()) {
    if (role["specInstances"].is_null()) {  // a role the set does not hold (union, mf-store)
      CHECK(role["baselineInstances"] == 0);
      continue;
    }
    CHECK(role["baselineInstances"] == role["specInstances"]);
    CHECK(role["instancesOnCurrentTemplate"] == 0);
  }
  // A scale then works as on any deployment of ours; the new instance runs our template.
  run = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const auto& role : roles_of())
    if (role["name"] == "decode") {
      CHECK(role["baselineInstances"] == 2);
      CHECK(role["specInstances"] == 2);
    }
}

TEST_CASE("--adopt: a refused hand-over is re-read and retried; three refusals stop it, and a re-run finishes") {
  const std::string p0 = "/apis/apps/v1/namespaces/" + kNs + "/deployments/vllm-p0";
  {
    // One 422 (what a JSON patch's failed resourceVersion test gets): read again, patched on the second try.
    Cluster sb({"--no-crd", "--fault", "PATCH:" + p0 + ":422:1"});
    e2e::TempDir dir;
    const std::string config = multi_config(dir);
    deploy_like_deploy_py(sb, dir, config);
    const auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(run.out.find("deployment.apps/vllm-p0 adopted\n") != std::string::npos);
    CHECK(!has_manager(get(sb, "deployment", "vllm-p0"), "kubectl-client-side-apply"));
  }
  Cluster sb({"--no-crd", "--fault", "PATCH:" + p0 + ":422:3"});
  e2e::TempDir dir;
  const std::string config = multi_config(dir);
  deploy_like_deploy_py(sb, dir, config);
  auto run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("deploy --adopt stopped after handing over the fields of:\n  configmap/motor-config") !=
                    std::string::npos,
                run.err);
  CHECK(run.err.find("re-run: kubectl mindie deploy -n " + kNs) != std::string::npos);
  CHECK(run.err.find("--adopt") != std::string::npos);
  // Nothing was applied: the ConfigMap still lacks our records, so a plain deploy still refuses.
  CHECK(sb.mindie({"deploy", "-f", config}).err.find("re-run with --adopt") != std::string::npos);
  run = sb.mindie({"deploy", "-f", config, "--scripts-dir", kScripts, "--adopt"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("configmap/motor-config adopted\n") == std::string::npos);  // handed over by the first run
  CHECK(run.out.find("deployment.apps/vllm-p0 adopted\n") != std::string::npos);
  // Bound to a name: a range-for over a member of a temporary dangles (the CI's AddressSanitizer run caught it).
  const json deployments = get(sb, "deployments", "");
  for (const auto& obj : deployments.at("items"))
    CHECK(obj["metadata"]["labels"].value("app.kubernetes.io/managed-by", "") == "kubectl-mindie");
}
