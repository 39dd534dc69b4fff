// deploy --overrides end to end: the real binary against the local cluster, objects read back with the real kubectl.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string kNs = "mindie-demo";

constexpr const char* kOverrides = R"(# operator changes for the demo cluster
roles:
  prefill:
    labels: {team: llm}
    annotations: {example.com/owner: alice}
    nodeSelector: {example.com/pool: llm}
    resources: {limits: {memory: 512Gi}}
    faultScheduling: force
    faultRetryTimes: 3
  coordinator:
    tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
)";

json kubectl_json(const Cluster& sb, std::vector<std::string> args) {
  std::vector<std::string> argv = {e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", kNs};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"-o", "json"});
  const auto run = e2e::run_process(argv);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

json config_map(const Cluster& sb) { return kubectl_json(sb, {"get", "configmap", "motor-config"}); }

json role(const Cluster& sb, const std::string& name) {
  const auto iss = kubectl_json(sb, {"get", "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm"});
  for (const auto& r : iss["spec"]["template"]["roles"])
    if (r["name"] == name) return r;
  FAIL("no role " << name);
  return {};
}

// The pods of `role` (infer-operator's instanceset-name label).
json pods_of(const Cluster& sb, const std::string& role) {
  return kubectl_json(sb, {"get", "pods", "-l", "infer.huawei.com/instanceset-name=" + role})["items"];
}

e2e::Run deploy(const Cluster& sb, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts};
  args.insert(args.end(), extra.begin(), extra.end());
  return sb.mindie(args);
}

void check_prefill_overridden(const Cluster& sb) {
  const auto tpl = role(sb, "prefill")["spec"]["template"];
  CHECK(tpl["metadata"]["labels"]["team"] == "llm");
  CHECK(tpl["metadata"]["labels"]["fault-scheduling"] == "force");
  CHECK(tpl["metadata"]["labels"]["fault-retry-times"] == "3");
  CHECK(tpl["spec"]["nodeSelector"]["example.com/pool"] == "llm");
  CHECK(tpl["spec"]["nodeSelector"]["accelerator-type"] == "module-910b-8");  // the profile's stays
  CHECK(tpl["spec"]["containers"][0]["resources"]["limits"]["memory"] == "512Gi");
  const auto pods = pods_of(sb, "prefill");
  REQUIRE_FALSE(pods.empty());
  for (const auto& pod : pods) {
    CHECK(pod["metadata"]["labels"]["team"] == "llm");
    CHECK(pod["metadata"]["labels"]["fault-scheduling"] == "force");
    CHECK(pod["metadata"]["annotations"]["example.com/owner"] == "alice");
    CHECK(pod["metadata"]["annotations"]["huawei.com/schedule_policy"] == "chip8-node8");
  }
  for (const auto& pod : pods_of(sb, "decode")) {
    CHECK_FALSE(pod["metadata"]["labels"].contains("team"));
    CHECK(pod["metadata"]["labels"]["fault-scheduling"] == "grace");
  }
  bool tolerated = false;
  const json coordinator = role(sb, "coordinator");  // a named copy: the loop below must not outlive it
  for (const auto& t : coordinator["spec"]["template"]["spec"]["tolerations"])
    tolerated = tolerated || t["key"] == "dedicated";
  CHECK(tolerated);
}

}  // namespace

TEST_CASE("deploy --overrides: the changes reach the InferServiceSet and its pods; the file is kept in motor-config") {
  Cluster sb;
  e2e::TempDir dir;
  const auto file = dir.write("overrides.yaml", kOverrides);
  // No node has prefill's pool label: the node preflight would refuse, so it is skipped here (the pods stay Pending).
  const auto run = deploy(sb, {"--overrides", file, "--skip-node-check"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // The operator and the StatefulSet controller make the pods (prefill's stay Pending: no node has its pool label).
  sb.wait_pods(kNs, e2e::role_pods("prefill"), 1, "");
  sb.wait_pods(kNs, e2e::role_pods("decode"), 1, "");
  CHECK(config_map(sb)["data"]["overrides.yaml"] == kOverrides);
  check_prefill_overridden(sb);

  SUBCASE("a redeploy, a scale and an update-config without the file keep the overrides") {
    // The stored overrides are rendered again, so the node preflight still sees prefill's pool label.
    CHECK(deploy(sb).err.find("role prefill: 1 pod x 4 huawei.com/Ascend910 on nodes labelled "
                              "accelerator=huawei-Ascend910,accelerator-type=module-910b-8,example.com/pool=llm") !=
          std::string::npos);
    const auto again = deploy(sb, {"--skip-node-check"});
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(config_map(sb)["data"]["overrides.yaml"] == kOverrides);
    check_prefill_overridden(sb);

    // --skip-node-check, as the deploy: no node carries the overrides' example.com/pool label.
    const auto scaled = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--skip-node-check"});
    REQUIRE_MESSAGE(scaled.exit_code == 0, scaled.err);
    // The new instance is created from the stored template: it carries the overrides too.
    sb.wait_pods(kNs, e2e::role_pods("prefill"), 2, "");
    CHECK(pods_of(sb, "prefill").size() == 2);
    check_prefill_overridden(sb);
    CHECK(config_map(sb)["data"]["overrides.yaml"] == kOverrides);

    json cfg = json::parse(e2e::read_file(kExampleDir + "/user_config.json"));
    cfg["motor_deploy_config"]["p_instances_num"] = 2;
    const auto cfg_file = dir.write("user_config.json", cfg.dump(2));
    const auto updated = sb.mindie({"update-config", "-f", cfg_file});
    REQUIRE_MESSAGE(updated.exit_code == 0, updated.err);
    CHECK(config_map(sb)["data"]["overrides.yaml"] == kOverrides);
  }

  SUBCASE("new overrides replace the stored ones, with a warning that running instances keep the old template") {
    const auto empty = dir.write("empty.yaml", "# no overrides\n");
    const auto replaced = deploy(sb, {"--overrides", empty});
    REQUIRE_MESSAGE(replaced.exit_code == 0, replaced.err);
    // infer-operator applies a template only to instances it makes: deploy says which run an earlier one and how to
    // roll them (issue 31).
    CHECK_MESSAGE(replaced.err.find("on an earlier pod template (") != std::string::npos, replaced.err);
    CHECK(replaced.err.find("run \"kubectl mindie rollout restart -n " + e2e::kExampleNamespace + "\" to roll them") !=
          std::string::npos);
    CHECK(config_map(sb)["data"]["overrides.yaml"] == "# no overrides\n");
    CHECK_FALSE(role(sb, "prefill")["spec"]["template"]["metadata"]["labels"].contains("team"));
  }
}

TEST_CASE("deploy --overrides with unknown roles or fields, or fields the tool owns, writes nothing") {
  Cluster sb;
  e2e::TempDir dir;
  SUBCASE("unknown role and field: every problem with its path") {
    const auto file = dir.write("bad.yaml",
                                "roles:\n  prefil: {}\n  decode: {labelz: {a: b}, faultRetryTimes: 1000}\n");
    const auto run = deploy(sb, {"--overrides", file});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("3 problems") != std::string::npos);
    CHECK(run.err.find("* roles.prefil: unknown role; known roles: controller, coordinator, prefill, decode") !=
          std::string::npos);
    CHECK(run.err.find("* roles.decode.labelz: is not a known key") != std::string::npos);
    CHECK(run.err.find("* roles.decode.faultRetryTimes: must be an integer 0..100") != std::string::npos);
  }
  SUBCASE("a collision names both sides") {
    const auto file = dir.write("clash.yaml", "roles: {prefill: {labels: {fault-scheduling: force}}}\n");
    const auto run = deploy(sb, {"--overrides", file});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("* roles.prefill.labels.fault-scheduling: collides with the pod label "
                       "fault-scheduling=grace that kubectl-mindie sets") != std::string::npos);
  }
  SUBCASE("a missing file") {
    const auto run = deploy(sb, {"--overrides", dir.path() + "/missing.yaml"});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("missing.yaml") != std::string::npos);
  }
  CHECK(sb.requests().empty());
}
