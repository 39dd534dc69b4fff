// The main job end to end: the real kubectl-mindie binary against the local cluster (through its fault proxy) over
// HTTPS.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "harness.h"

using e2e::Cluster;
using e2e::kExample;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string kIss = "/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/inferservicesets/mindie-motor-vllm";
const std::string& kConfigMap = e2e::kExampleConfigMapPath;

json status_json(const Cluster& sb, const std::string& ns) {
  const auto run = sb.mindie({"status", "-n", ns, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

json role(const json& report, const std::string& name) {
  for (const auto& r : report["roles"])
    if (r["name"] == name) return r;
  FAIL("role " << name << " missing from status");
  return {};
}

void deploy_example(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// The shared example config with `image_name` set (the published vllm example leaves it empty).
std::string with_image(const std::string& path, const std::string& image) {
  json cfg = json::parse(e2e::read_file(path));
  cfg["motor_deploy_config"]["image_name"] = image;
  return cfg.dump(2);
}

}  // namespace

TEST_CASE("deploy writes the baseline first, then RBAC and the InferServiceSet, by server-side apply") {
  Cluster sb;
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("configmap/motor-config serverside-applied") != std::string::npos);
  CHECK(run.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm serverside-applied") !=
        std::string::npos);

  const auto reqs = sb.requests();
  // discovery, baseline GET, the user's rights (a SelfSubjectRulesReview and, for the cluster-wide ones, one
  // SelfSubjectAccessReview of everything: cmd/rights.h), the Service LIST (nodePort), a GET per nodePort claim, the
  // Node and Pod LISTs (free NPUs), 3 claims (cmd/node_port_claims.h) and 7 applies; the baseline's revision (a LIST
  // and its apply); and the namespace lock read, created and freed
  CHECK(reqs.size() <= 25);
  std::vector<std::string> writes;
  for (const auto& r : reqs) {
    if (!r.is_write()) continue;
    CHECK(r.method == "PATCH");
    CHECK(r.content_type == "application/apply-patch+yaml");
    CHECK(r.query.find("fieldManager=kubectl-mindie") != std::string::npos);
    writes.push_back(r.path);
  }
  REQUIRE(writes.size() == 10);
  // The nodePorts are claimed first, each under the namespace's own field manager.
  for (int i = 0; i < 3; ++i)
    CHECK(writes[i].rfind("/apis/rbac.authorization.k8s.io/v1/clusterroles/mindie-motor-nodeport-", 0) == 0);
  CHECK(writes[3] == kConfigMap);
  CHECK(writes.back() == kIss);

  // The baseline is the input, byte for byte.
  for (const auto& r : reqs) {
    if (r.path != kConfigMap || !r.is_write()) continue;
    const auto body = json::parse(r.body);
    CHECK(body["data"]["user_config.json"] == e2e::read_file(kExample));
    CHECK(body["metadata"]["annotations"]["kubectl-mindie/deploy-mode"] == "infer_service_set");
  }

  // The fake operator, the real controllers, scheduler and KWOK make the pods.
  sb.wait_ready("mindie-demo");
  const auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
  CHECK(role(report, "prefill")["readyPods"] == 1);
  CHECK(role(report, "decode")["specInstances"] == 1);
}

TEST_CASE("deploy is idempotent and a second deploy over the same baseline converges") {
  Cluster sb;
  deploy_example(sb);
  const auto again = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
}

TEST_CASE("the shared example configs deploy once an image is set") {
  e2e::TempDir dir;
  // Both examples use job_id mindie-motor: each gets a fresh namespace.
  for (const std::string name : {"deepseek_v3_1", "vllm"}) {
    Cluster sb;
    const std::string base = std::string(MINDIE_SHARED_DIR) + "/reference/user_configs/" + name;
    const auto cfg = dir.write(name + "/user_config.json", with_image(base + "/user_config.json", "mindie:test"));
    const auto run = sb.mindie({"deploy", "-f", cfg, "-e", base + "/env.json", "--scripts-dir", kScripts});
    CHECK_MESSAGE(run.exit_code == 0, name << ": " << run.err);
    sb.wait_ready("mindie-motor");
    const auto report = status_json(sb, "mindie-motor");
    CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
    const json cfg_json = json::parse(e2e::read_file(cfg));
    const auto pods_per_decode = cfg_json["motor_deploy_config"]["single_d_instance_pod_num"].get<int>();
    CHECK(role(report, "decode")["pods"] ==
          pods_per_decode * cfg_json["motor_deploy_config"]["d_instances_num"].get<int>());
  }
}

TEST_CASE("the published vllm example as is fails validation naming image_name, with zero requests") {
  Cluster sb;
  const std::string base = std::string(MINDIE_SHARED_DIR) + "/reference/user_configs/vllm";
  const auto run = sb.mindie({"deploy", "-f", base + "/user_config.json", "-e", base + "/env.json"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("motor_deploy_config.image_name") != std::string::npos);
  CHECK(sb.requests().empty());
}

TEST_CASE("scale prefill 1 to 3 sends exactly one JSON Patch of the InferServiceSet, guarded by test ops") {
  Cluster sb;
  deploy_example(sb);
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "3"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\n");

  const auto reqs = sb.requests_since(mark);
  // 2 reads, the user's rights (a SelfSubjectRulesReview: cmd/rights.h), the Node and Pod LISTs (free NPUs), 2
  // patches, the revision's LIST and apply; the lock read, taken and freed
  CHECK(reqs.size() <= 12);
  std::size_t iss_patches = 0;
  for (const auto& r : reqs) {
    if (r.path != kIss || r.method == "GET") continue;
    ++iss_patches;
    CHECK(r.method == "PATCH");
    CHECK(r.content_type == "application/json-patch+json");
    const auto ops = json::parse(r.body);
    std::size_t tests = 0;
    for (const auto& op : ops) {
      tests += op["op"] == "test" ? 1 : 0;
      CHECK(op["path"].get<std::string>().find("/spec/template/roles/") == 0);
    }
    CHECK(tests == 2);
    CHECK(r.body.find("\"roles\":[") == std::string::npos);  // never the whole roles array
  }
  CHECK(iss_patches == 1);
  sb.wait_ready("mindie-demo");

  const auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
  CHECK(role(report, "prefill")["specInstances"] == 3);
  CHECK(role(report, "prefill")["baselineInstances"] == 3);
  CHECK(role(report, "prefill")["pods"] == 3);
}

TEST_CASE("scale -f that also changes the image is refused with zero writes") {
  Cluster sb;
  deploy_example(sb);
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(kExample));
  cfg["motor_deploy_config"]["p_instances_num"] = 2;
  cfg["motor_deploy_config"]["image_name"] = "other:1";
  const auto file = dir.write("user_config.json", cfg.dump(2));
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"scale", "-f", file});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("motor_deploy_config.image_name") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
}

TEST_CASE("update-config that changes deploy_mode is refused with zero writes; a log level change lands") {
  Cluster sb;
  deploy_example(sb);
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  const auto bad = dir.write("bad.json", cfg.dump(2));
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"update-config", "-f", bad});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("deploy_mode") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);

  cfg = json::parse(e2e::read_file(kExample));
  cfg["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
  const auto good = dir.write("good.json", cfg.dump(2));
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "-f", good});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured\n");
  const auto reqs = sb.requests_since(mark);
  REQUIRE(e2e::count_writes(reqs) == 1);
  for (const auto& r : reqs) {
    if (!r.is_write()) continue;
    CHECK(r.content_type == "application/merge-patch+json");
    CHECK(json::parse(r.body)["metadata"].contains("resourceVersion"));
  }
}

TEST_CASE("deploy without the infer-operator CRD writes nothing and says what to install") {
  Cluster sb({"--no-crd"});
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("infer-operator") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests()) == 0);
}

TEST_CASE("scale in a namespace without a deployment fails and says to deploy first") {
  Cluster sb;
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--decode", "2"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("no deployment found in namespace mindie-demo") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests()) == 0);
}

TEST_CASE("when the baseline update fails, scale undoes the InferServiceSet patch") {
  // The deploy's apply of the ConfigMap is the first PATCH of that path; scale's baseline updates (a conflict is
  // re-read and retried, three attempts) the next ones.
  Cluster sb({"--fault", "PATCH:" + kConfigMap + ":409:3:1"});
  deploy_example(sb);
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("Error from server (Conflict)") != std::string::npos);
  CHECK(run.err.find("undone") != std::string::npos);
  const auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
  CHECK(role(report, "prefill")["specInstances"] == 1);
}

TEST_CASE("-n that disagrees with job_id is an error naming both, before any request") {
  Cluster sb;
  const auto run = sb.mindie({"deploy", "-n", "other", "--config-dir", kExampleDir});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("other") != std::string::npos);
  CHECK(run.err.find("mindie-demo") != std::string::npos);
  CHECK(sb.requests().empty());
}

TEST_CASE("--dry-run=server sends dryRun=All and stores nothing") {
  Cluster sb;
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--dry-run=server"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("(server dry run)") != std::string::npos);
  for (const auto& r : sb.requests())
    if (r.is_write()) CHECK(r.query.find("dryRun=All") != std::string::npos);
  const auto status = sb.mindie({"status", "-n", "mindie-demo"});
  CHECK(status.exit_code != 0);
}

TEST_CASE("when the baseline update and the undo both fail, the error gives the state and the recovery commands") {
  // PATCHes of the InferServiceSet: deploy's apply, scale's patch (both pass), then the undo fails with a
  // Forbidden, which no retry hides.
  Cluster sb({"--fault", "PATCH:" + kConfigMap + ":409:3:1", "--fault", "PATCH:" + kIss + ":403:1:2"});
  deploy_example(sb);
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("now runs prefill 2, decode 1") != std::string::npos);
  CHECK(run.err.find("still says prefill 1, decode 1") != std::string::npos);
  CHECK(run.err.find("kubectl mindie scale -n mindie-demo --prefill 1 --decode 1") != std::string::npos);

  // The recovery command it prints works: live goes back to the baseline.
  const auto recover = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "1", "--decode", "1"});
  CHECK_MESSAGE(recover.exit_code == 0, recover.err);
  const auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
}

TEST_CASE("--dry-run=client prints every object without a kubeconfig or a server") {
  const auto run = e2e::run_process({e2e::mindie_binary(), "--kubeconfig", "/nonexistent/kubeconfig", "deploy",
                                     "--config-dir", kExampleDir, "--dry-run=client", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("\"kind\": \"InferServiceSet\"") != std::string::npos);
  CHECK(run.out.find("\"kind\": \"ClusterRoleBinding\"") != std::string::npos);
}

TEST_CASE("status shows drift between the baseline and the live InferServiceSet") {
  Cluster sb;
  deploy_example(sb);
  // Someone scales the live object behind the tool's back (a plain JSON patch, as kubectl patch would send).
  e2e::TempDir dir;
  const auto run = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo",
                                     "patch", "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm",
                                     "--type=json", "-p",
                                     R"([{"op":"replace","path":"/spec/template/roles/3/replicas","value":2}])"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto table = sb.mindie({"status", "-n", "mindie-demo"});
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("drift: role decode: baseline 1 instances, spec.template.roles[3].replicas 2") !=
        std::string::npos);
}

TEST_CASE("deploy after scale takes back its own fields; a conflict with another manager needs --force-conflicts") {
  Cluster sb;
  deploy_example(sb);
  auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // The original file again: the scale's writes were the tool's own, so deploy converges without force (--prune
  // confirms the instance it removes).
  run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--prune"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
  CHECK(role(report, "prefill")["specInstances"] == 1);

  // Another field manager changes the roles: deploy reports the conflict, naming that manager.
  const auto patched = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo",
                                         "patch", "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm",
                                         "--type=json", "-p",
                                         R"([{"op":"replace","path":"/spec/template/roles/3/replicas","value":2}])"});
  REQUIRE_MESSAGE(patched.exit_code == 0, patched.err);
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("Error from server (Conflict)") != std::string::npos);
  CHECK(run.err.find("kubectl-patch") != std::string::npos);
  CHECK(run.err.find("--force-conflicts") != std::string::npos);
  // Found by a server dry run before the baseline was touched.
  for (const auto& r : sb.requests_since(mark))
    if (r.is_write()) CHECK(r.query.find("dryRun=All") != std::string::npos);
  run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--force-conflicts", "--prune"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
}

TEST_CASE("--scripts-dir files land in motor-config; --output-dir gets every rendered object") {
  Cluster sb;
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "scripts");
  dir.write("scripts/boot.sh", "#!/bin/bash\necho boot\n");
  dir.write("scripts/probe.sh", "#!/bin/bash\nexit 0\n");
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", dir.path() + "/scripts",
                              "--output-dir", dir.path() + "/out"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const auto& r : sb.requests()) {
    if (r.path != kConfigMap || !r.is_write()) continue;
    const auto body = json::parse(r.body);
    CHECK(body["data"]["boot.sh"] == "#!/bin/bash\necho boot\n");
    CHECK(body["data"]["probe.sh"] == "#!/bin/bash\nexit 0\n");
  }
  // deploy.py's file names: infer_service.yaml holds the ServiceAccount, cluster RBAC and the InferServiceSet.
  const std::string iss_file = e2e::read_file(dir.path() + "/out/infer_service.yaml");
  CHECK(iss_file.find("kind: InferServiceSet") != std::string::npos);
  CHECK(iss_file.find("kind: ServiceAccount") != std::string::npos);
  CHECK(iss_file.find("\n---\n") != std::string::npos);
  CHECK(iss_file.find("kind: ClusterRole\n") != std::string::npos);
  CHECK(e2e::read_file(dir.path() + "/out/motor_config.yaml").find("kind: ConfigMap") != std::string::npos);
}

TEST_CASE("a ConfigMap over the API's 1 MiB limit is refused before any request, with size and limit") {
  Cluster sb;
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "scripts");
  dir.write("scripts/hccl_tools.py", std::string(1100 * 1024, '#'));
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", dir.path() + "/scripts"});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("1 MiB") != std::string::npos);
  CHECK(sb.requests().empty());
}

TEST_CASE("deploy over a baseline of another deploy_mode is refused with zero writes") {
  Cluster sb;
  const std::vector<std::string> kubectl = {e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n",
                                            "mindie-demo"};
  auto create = kubectl;
  create.insert(create.end(), {"create", "configmap", "motor-config", "--from-file=user_config.json=" + kExample});
  REQUIRE(e2e::run_process(create).exit_code == 0);
  auto annotate = kubectl;
  annotate.insert(annotate.end(),
                  {"annotate", "configmap", "motor-config", "kubectl-mindie/deploy-mode=multi_deployment"});
  REQUIRE(e2e::run_process(annotate).exit_code == 0);

  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("deploy_mode cannot change") != std::string::npos);
  CHECK(run.err.find("multi_deployment") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
}

TEST_CASE("a conflict on the baseline is re-read and retried, not overwritten blindly") {
  Cluster sb({"--fault", "PATCH:" + kConfigMap + ":409:1:1"});
  deploy_example(sb);
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto reqs = sb.requests_since(mark);
  std::size_t rereads = 0;
  for (const auto& r : reqs) rereads += (r.method == "GET" && r.path == kConfigMap) ? 1 : 0;
  CHECK(rereads == 2);  // the first read and one re-read after the conflict
  const auto report = status_json(sb, "mindie-demo");
  CHECK_MESSAGE(report["drift"].empty(), report["drift"].dump());
  CHECK(role(report, "prefill")["baselineInstances"] == 2);
}

TEST_CASE("scale touches only the roles it is asked to") {
  Cluster sb;
  deploy_example(sb);
  // prefill drifts to 2 behind the tool's back; scaling decode must leave it alone.
  const auto patched = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo",
                                         "patch", "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm",
                                         "--type=json", "-p",
                                         R"([{"op":"replace","path":"/spec/template/roles/2/replicas","value":2}])"});
  REQUIRE_MESSAGE(patched.exit_code == 0, patched.err);
  const auto run = sb.mindie({"scale", "-n", "mindie-demo", "--decode", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto report = status_json(sb, "mindie-demo");
  CHECK(role(report, "prefill")["specInstances"] == 2);
  CHECK(role(report, "decode")["specInstances"] == 2);
  CHECK(report["drift"].size() == 1);  // prefill: baseline 1, live 2 — still reported, not silently reset
}

TEST_CASE("flag mistakes are errors, not guesses: abbreviations, stray arguments, negative counts") {
  Cluster sb;
  deploy_example(sb);
  const std::size_t mark = sb.requests().size();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"scale", "-n", "mindie-demo", "--pre", "2"},
                                             {"scale", "-n", "mindie-demo", "--prefill", "2", "extra"},
                                             {"scale", "-n", "mindie-demo", "--prefill", "-1", "--decode", "2"},
                                             {"status", "mindie-demo"}}) {
    const auto run = sb.mindie(args);
    CHECK_MESSAGE(run.exit_code != 0, args[3]);
    CHECK(run.err.rfind("error: ", 0) == 0);
  }
  CHECK(sb.requests_since(mark).empty());
}

TEST_CASE("deploy refuses to write a motor-config without the scripts the pods run") {
  Cluster sb;
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir});
  CHECK(run.exit_code != 0);
  CHECK(run.err.find("boot.sh, common.sh, probe.sh, controller.sh, coordinator.sh, engine.sh") != std::string::npos);
  CHECK(run.err.find("--scripts-dir") != std::string::npos);
  CHECK(e2e::count_writes(sb.requests()) == 0);
}

TEST_CASE("a redeploy without -e or --scripts-dir keeps the stored files and warns about what it changes") {
  Cluster sb;
  deploy_example(sb);
  auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "3"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"deploy", "-f", kExample, "--prune"});  // back to 1 prefill instance, confirmed
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("Warning: deploy replaces the baseline") != std::string::npos);
  CHECK(run.err.find("motor_deploy_config.p_instances_num") != std::string::npos);
  CHECK(run.err.find("prefill instances change") != std::string::npos);
  for (const auto& r : sb.requests_since(mark)) {
    if (r.path != kConfigMap || !r.is_write()) continue;
    const auto body = json::parse(r.body);
    CHECK(body["data"].contains("boot.sh"));
    CHECK(body["data"].contains("probe.sh"));
    CHECK(body["data"]["env.json"] == e2e::read_file(kExampleDir + "/env.json"));
  }
}

TEST_CASE("status still shows the live state when the stored baseline was broken by hand") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  const auto patched = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo",
                                         "patch", "configmap", "motor-config", "--type=merge", "-p",
                                         R"({"data":{"user_config.json":"{ not json"}})"});
  REQUIRE_MESSAGE(patched.exit_code == 0, patched.err);
  const auto run = sb.mindie({"status", "-n", "mindie-demo"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("drift: the baseline is not usable") != std::string::npos);
  CHECK(run.out.find("mindie-motor-vllm-0-prefill-0-0") != std::string::npos);
  // Scaling has nothing to compare with and refuses, naming the broken baseline.
  const auto scale = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2"});
  CHECK(scale.exit_code != 0);
  CHECK(scale.err.find("baseline is not usable") != std::string::npos);
}
