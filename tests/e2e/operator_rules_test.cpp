// What the real infer-operator refuses or never changes (Ascend/mind-cluster component/infer-operator), end to end: the
// fake operator on the local cluster follows those rules (ValidateError events, Services before workloads, labels fixed
// at creation, PodGroups left behind), and deploy, scale, status and wait must act on them before a user meets them on
// a cluster.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::item_names;
using e2e::kScripts;
using e2e::writes_since;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

json example() { return json::parse(e2e::read_file(e2e::kExample)); }

/// The example with gang-scheduled decode instances (2 pods each), `instances` of them.
json gang_example(int instances) {
  json cfg = example();
  cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
  cfg["motor_deploy_config"]["d_instances_num"] = instances;
  return cfg;
}

/// The nodePort of the coordinator's inference Service the operator made.
json infer_node_port(const Cluster& sb) {
  for (const auto& s : e2e::kubectl_items(sb, "services", kNs))
    if (s["metadata"]["name"] == "infer-mindie-motor-vllm-0-coordinator") return s["spec"]["ports"][0]["nodePort"];
  return nullptr;
}

e2e::Run kubectl(const Cluster& sb, std::vector<std::string> args) {
  std::vector<std::string> argv = {e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return e2e::run_process(argv);
}

e2e::Run deploy(const Cluster& sb, const e2e::TempDir& dir, const json& cfg, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir",
                                   kScripts};
  args.insert(args.end(), extra.begin(), extra.end());
  return sb.mindie(args);
}

/// The objects deploy would write, applied by kubectl instead (as someone bypassing kubectl-mindie's checks would),
/// after `edit` changed the InferServiceSet.
void apply_bypassing_checks(const Cluster& sb, const e2e::TempDir& dir, const std::function<void(json&)>& edit) {
  const auto rendered = sb.mindie(
      {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", kScripts, "--dry-run=client", "-o", "json"});
  REQUIRE_MESSAGE(rendered.exit_code == 0, rendered.err);
  json list = json::parse(rendered.out);
  for (auto& item : list["items"])
    if (item["kind"] == "InferServiceSet") edit(item);
  const auto applied =
      kubectl(sb, {"apply", "--server-side", "--validate=false", "-f", dir.write("objects.json", list.dump())});
  REQUIRE_MESSAGE(applied.exit_code == 0, applied.err);
}

/// Creates NodePort Service `name` in namespace mindie-motor holding `node_port`, through kubectl: another
/// deployment's port.
void hold_node_port(const Cluster& sb, const e2e::TempDir& dir, const std::string& name, int node_port) {
  const json holder = {{"apiVersion", "v1"},
                       {"kind", "Service"},
                       {"metadata", {{"name", name}, {"namespace", "mindie-motor"}}},
                       {"spec",
                        {{"type", "NodePort"},
                         {"selector", {{"app", "x"}}},
                         {"ports", {{{"port", 80}, {"targetPort", 80}, {"nodePort", node_port}}}}}}};
  const auto created = kubectl(sb, {"create", "--validate=false", "-f", dir.write(name + ".json", holder.dump())});
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
}

json role_report(const json& report, const std::string& name) {
  for (const auto& r : report.at("roles"))
    if (r.at("name") == name) return r;
  return nullptr;
}

json status_json(const Cluster& sb) {
  const auto run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

}  // namespace

TEST_CASE("the example deploys a coordinator: the infer NodePort has a nodePort the operator accepts") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example(), {"--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(infer_node_port(sb) == 31015);
  // A redeploy keeps its own port: the Service holding 31015 is the deployment's own.
  run = deploy(sb, dir, example());
  CHECK_MESSAGE(run.exit_code == 0, run.err);
}

TEST_CASE("a nodePort another Service holds is refused before any write, naming that Service") {
  Cluster sb;
  e2e::TempDir dir;
  hold_node_port(sb, dir, "someone-else", 31015);
  hold_node_port(sb, dir, "someone-next", 31016);
  const std::size_t mark = sb.requests().size();
  auto run = deploy(sb, dir, example());
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("nodePort 31015 of service/infer-mindie-motor-vllm-0-coordinator in namespace "
                             "mindie-demo is already allocated to service/someone-else in namespace mindie-motor") !=
                    std::string::npos,
                run.err);
  // A free port suggested: not 31016 (another Service's), not 31017 (the deployment's own obs_node_port).
  CHECK_MESSAGE(run.err.find("\nset motor_deploy_config.infer_node_port to a free port of 30000..32767: 31018 is "
                             "free; nothing was written\n") != std::string::npos,
                run.err);
  CHECK(writes_since(sb, mark).empty());

  json cfg = example();
  cfg["motor_deploy_config"]["infer_node_port"] = 31018;
  run = deploy(sb, dir, cfg, {"--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

TEST_CASE("when listing Services is forbidden, deploy warns that it could not check the nodePort and goes on") {
  Cluster sb({"--fault", "GET:/api/v1/services:403"});
  e2e::TempDir dir;
  const auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: cannot check that nodePorts 31015, 31017, 31027 are free") != std::string::npos,
                run.err);
  CHECK(run.err.find("motor_deploy_config.obs_node_port") != std::string::npos);
}

TEST_CASE("node preflight: engine pods that do not fit the nodes' NPUs are refused before any write, naming the role") {
  Cluster sb;  // 8 fake 800I_A2 nodes of 8 NPUs each
  e2e::TempDir dir;
  // 9 prefill pods of 8 NPUs and 1 decode pod of 4: the prefill pods take every node, the decode pod finds none.
  json cfg = example();
  cfg["motor_deploy_config"]["p_instances_num"] = 9;
  cfg["motor_deploy_config"]["p_pod_npu_num"] = 8;
  const std::size_t mark = sb.requests().size();
  auto run = deploy(sb, dir, cfg);
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: the engine pods do not fit the NPUs free on the cluster's nodes") !=
                    std::string::npos,
                run.err);
  CHECK_MESSAGE(run.err.find("* role decode: 1 pod x 4 huawei.com/Ascend910 on nodes labelled "
                             "accelerator=huawei-Ascend910,accelerator-type=module-910b-8: the 8 matching nodes (64 "
                             "allocatable) take 0 of them alongside the other roles; 1 pod (4 NPUs) does not fit") !=
                    std::string::npos,
                run.err);
  CHECK(writes_since(sb, mark).empty());
  // A server dry run checks too; --skip-node-check deploys anyway (the decode pod then stays Pending).
  run = deploy(sb, dir, cfg, {"--dry-run=server"});
  CHECK(run.exit_code == 1);
  run = deploy(sb, dir, cfg, {"--skip-node-check"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  // What fits deploys without a word about nodes (--prune: two of the nine prefill instances go).
  cfg["motor_deploy_config"]["p_instances_num"] = 7;
  run = deploy(sb, dir, cfg, {"--prune"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("do not fit") == std::string::npos);
}

/// The writes after `mark` other than the namespace lock's Lease (taken and freed by a refused command).
std::vector<std::string> writes_but_lease(const Cluster& sb, std::size_t mark) {
  std::vector<std::string> out;
  for (const auto& r : writes_since(sb, mark))
    if (r.path.find("/leases/") == std::string::npos) out.push_back(r.method + " " + r.path);
  return out;
}

TEST_CASE(
    "node preflight counts free NPUs: a scale-out and a second deployment onto a pool other pods hold are refused "
    "before any write; a redeploy's own pods count as free") {
  Cluster sb;  // 8 fake 800I_A2 nodes of 8 NPUs each
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example(), {"--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // issue 33: -f without -e and without motor_deploy_config.env_path stored no env.json and said nothing.
  CHECK_MESSAGE(run.err.find("Warning: no env.json is stored: the engine containers get none of its environment (pass "
                             "-e env.json, or name it in motor_deploy_config.env_path)") != std::string::npos,
                run.err);
  e2e::fill_npu_pool(sb, dir, 8);  // the example's prefill and decode pods hold 4 NPUs each

  // issue 33: scale had no preflight; it wrote, waited 30 s and timed out on "Insufficient huawei.com/Ascend910".
  std::size_t mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: the added instances' pods do not fit the NPUs free on the cluster's nodes "
                             "(allocatable less what their pods hold); nothing was written:\n* role prefill: 1 pod x "
                             "4 huawei.com/Ascend910 on nodes labelled accelerator=huawei-Ascend910,accelerator-type="
                             "module-910b-8: the 8 matching nodes (64 allocatable, 64 held by the pods on them) take 0 "
                             "of them alongside the other roles; 1 pod (4 NPUs) does not fit") != std::string::npos,
                run.err);
  CHECK(run.err.find("--skip-node-check") != std::string::npos);
  CHECK(writes_but_lease(sb, mark).empty());

  // A redeploy replaces its own pods: what they hold counts as free.
  run = deploy(sb, dir, example());
  CHECK_MESSAGE(run.exit_code == 0, run.err);

  // issue 33: a second deployment onto the full pool passed the preflight, which counted allocatable NPUs.
  sb.admin_ok({"create", "namespace", "second"});
  json second = example();
  second["motor_deploy_config"]["job_id"] = "second";
  second["motor_deploy_config"]["infer_node_port"] = 31115;
  second["motor_deploy_config"]["obs_node_port"] = 31117;
  second["motor_deploy_config"]["controller_obs_node_port"] = 31127;
  mark = sb.requests().size();
  run = deploy(sb, dir, second);
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: the engine pods do not fit the NPUs free on the cluster's nodes (allocatable "
                             "less what the pods of other namespaces hold); nothing was written:\n* role ") !=
                    std::string::npos,
                run.err);
  CHECK(writes_but_lease(sb, mark).empty());

  // --skip-node-check scales anyway: the new instance's pod waits for room.
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--skip-node-check"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
}

TEST_CASE("a workload resource the server does not serve is refused before any write, though its group is served") {
  Cluster sb;
  e2e::TempDir dir;
  // issue 33: with the InstanceSet and InferService CRDs installed but not the InferServiceSet's, deploy checked the
  // API group, wrote motor-config and the RBAC, then failed on the workload's 404.
  sb.remove_crd("inferservicesets.mindcluster.huawei.com");
  const std::size_t mark = sb.requests().size();
  const auto run = deploy(sb, dir, example());
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err ==
                    "error: the server does not serve inferservicesets.mindcluster.huawei.com (InferServiceSet, "
                    "mindcluster.huawei.com/v1), though it serves other resources of mindcluster.huawei.com/v1: "
                    "install MindCluster infer-operator and its CRDs first (kubectl get crd lists those "
                    "installed); nothing was written\n",
                run.err);
  CHECK(writes_but_lease(sb, mark).empty());
}

TEST_CASE("node preflight: when listing nodes is forbidden, deploy warns with a hint and goes on") {
  Cluster sb({"--fault", "GET:/api/v1/nodes:403"});
  e2e::TempDir dir;
  const auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: cannot check that the engine pods fit the nodes' free NPUs: ") !=
                    std::string::npos,
                run.err);
  CHECK(run.err.find("--skip-node-check") != std::string::npos);
}

TEST_CASE("status and wait say why the operator created nothing: its ValidateError and ServiceCreateError events") {
  Cluster sb;
  e2e::TempDir dir;
  SUBCASE("a NodePort entry without nodePort (an InferServiceSet not written by kubectl-mindie)") {
    apply_bypassing_checks(sb, dir, [](json& iss) {
      for (auto& role : iss["spec"]["template"]["roles"])
        if (role.contains("services"))
          for (auto& s : role["services"]) s["spec"]["ports"][0].erase("nodePort");
    });
    sb.wait_event(kNs, "ValidateError");
    const json report = status_json(sb);
    const json coordinator = role_report(report, "coordinator");
    REQUIRE(coordinator["operatorEvents"].size() >= 1);
    CHECK(coordinator["operatorEvents"][0]["reason"] == "ValidateError");
    CHECK(coordinator["operatorEvents"][0]["instanceSet"] == "mindie-motor-vllm-0-coordinator");
    bool said = false;
    for (const auto& u : report["unready"])
      said = said || u.get<std::string>().find(
                         "role coordinator: infer-operator refuses "
                         "instanceset/mindie-motor-vllm-0-coordinator") != std::string::npos;
    CHECK(said);
    const auto table = sb.mindie({"status", "-n", kNs});
    CHECK(table.out.find("nodePort of service<infer> should config as non-zero") != std::string::npos);
    const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "1s"});
    CHECK(waited.exit_code == 1);
    CHECK_MESSAGE(waited.err.find("(ValidateError") != std::string::npos, waited.err);
    CHECK(waited.err.find("nodePort of service<infer> should config as non-zero") != std::string::npos);
  }
  SUBCASE("a nodePort taken by another Service: the operator stops before the coordinator's workload") {
    hold_node_port(sb, dir, "holder", 31015);
    apply_bypassing_checks(sb, dir, [](json&) {});
    sb.wait_event(kNs, "ServiceCreateError");
    const json report = status_json(sb);
    const json coordinator = role_report(report, "coordinator");
    CHECK(coordinator["pods"] == 0);
    REQUIRE(coordinator["operatorEvents"].size() >= 1);
    CHECK(coordinator["operatorEvents"][0]["reason"] == "ServiceCreateError");
    const auto table = sb.mindie({"status", "-n", kNs});
    CHECK_MESSAGE(table.out.find("could not create a Service of instanceset/mindie-motor-vllm-0-coordinator") !=
                      std::string::npos,
                  table.out);
    CHECK(table.out.find("provided port is already allocated") != std::string::npos);

    // The operator retries with controller-runtime's backoff (5 ms doubling; capped for the tests): once three
    // attempts failed, freeing the port lets a later one create the Service and the coordinator.
    e2e::eventually(
        [&] {
          const json c = role_report(status_json(sb), "coordinator");
          return !c["operatorEvents"].empty() && c["operatorEvents"][0]["count"].get<int>() >= 3;
        },
        "three failed attempts to create the coordinator's Service", 120);
    REQUIRE(kubectl(sb, {"delete", "service", "holder", "-n", "mindie-motor"}).exit_code == 0);
    sb.wait_ready(kNs);
  }
}

TEST_CASE("gang-scheduled roles need Volcano's PodGroup CRD: deploy refuses before any write without it") {
  Cluster sb({Cluster::kNoVolcano});
  e2e::TempDir dir;
  const std::size_t mark = sb.requests().size();
  const auto run = deploy(sb, dir, gang_example(1));
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("role decode run") != std::string::npos, run.err);
  CHECK(run.err.find("podgroups.scheduling.volcano.sh") != std::string::npos);
  CHECK(writes_since(sb, mark).empty());
  // Without gang roles Volcano's CRD is not needed.
  const auto plain = deploy(sb, dir, example());
  CHECK_MESSAGE(plain.exit_code == 0, plain.err);
}

TEST_CASE("scale-in of a gang role deletes the PodGroups the operator leaves behind") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  auto run = deploy(sb, dir, gang_example(3));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_objects("podgroups", kNs, "", 3);
  CHECK(item_names(e2e::kubectl_items(sb, "podgroups", kNs)) ==
        std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-0", "pg-mindie-motor-vllm-0-decode-1",
                                 "pg-mindie-motor-vllm-0-decode-2"});
  run = sb.mindie({"scale", "-n", kNs, "--decode", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\n"
        "podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-1 deleted\n"
        "podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-2 deleted\n");
  CHECK(item_names(e2e::kubectl_items(sb, "podgroups", kNs)) ==
        std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-0"});
  // A non-gang role's scale-in deletes nothing else.
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\n");
}

TEST_CASE("a redeploy that would change what a live InstanceSet fixed at creation is refused before any write") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  SUBCASE("pods per instance 1 -> 2 turns gang scheduling on") {
    json cfg = example();
    cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
    const std::size_t mark = sb.requests().size();
    run = deploy(sb, dir, cfg);
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.find("role decode: this deploy changes gang scheduling (label "
                               "infer.huawei.com/gang-schedule) from \"false\" to \"true\"") != std::string::npos,
                  run.err);
    CHECK(run.err.find("kubectl mindie delete -n mindie-demo") != std::string::npos);
    CHECK(writes_since(sb, mark).empty());
  }
  SUBCASE("another hardware_type changes the schedule policy") {
    json cfg = example();
    cfg["motor_deploy_config"]["hardware_type"] = "800I_A3";
    const std::size_t mark = sb.requests().size();
    run = deploy(sb, dir, cfg);
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.find("from \"chip8-node8\" to \"chip2-node16\"") != std::string::npos, run.err);
    CHECK(writes_since(sb, mark).empty());
  }
}

TEST_CASE("a new pod template reaches only new instances: deploy says how many keep the old one, status shows it") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  json report = status_json(sb);
  CHECK(role_report(report, "prefill")["instancesOnOtherTemplates"] == 0);
  CHECK(sb.mindie({"status", "-n", kNs}).out.find("live state matches the baseline") != std::string::npos);

  json cfg = example();
  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:next";
  run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: 4 instances on an earlier pod template (controller 1, coordinator 1, decode 1, "
                             "prefill 1): run \"kubectl mindie rollout restart -n mindie-demo\" to roll them\n") !=
                    std::string::npos,
                run.err);
  report = status_json(sb);
  const json prefill = role_report(report, "prefill");
  CHECK(prefill["instancesOnOtherTemplates"] == 1);
  CHECK(prefill["otherImages"] == json::array({"mindie-motor-vllm:2.3.RC1-800I-A2-py311-ubuntu24.04-aarch64"}));
  const auto table = sb.mindie({"status", "-n", kNs}).out;
  CHECK(table.find("live state matches the baseline") == std::string::npos);
  CHECK(table.find("not ready: role prefill: 1 of 1 instances run an earlier pod template") != std::string::npos);
  CHECK(table.find("drift: role prefill: pods run image mindie-motor-vllm:2.3.RC1") != std::string::npos);

  // A new instance is made from the new template; the old one still keeps the deployment from being ready.
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_pods(kNs, e2e::role_pods("prefill", 1), 1);
  e2e::eventually([&] { return role_report(status_json(sb), "prefill")["instancesOnCurrentTemplate"] == 1; },
                  "the new prefill instance on the current template", 120);
  report = status_json(sb);
  CHECK(report["ready"] == false);
  CHECK(role_report(report, "prefill")["readyInstances"] == 1);
  CHECK(role_report(report, "prefill")["instancesOnOtherTemplates"] == 1);
}

TEST_CASE("status flags InstanceSets without the priority-scheduling-strategy label and says what to do") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  const auto labelled = kubectl(sb, {"-n", kNs, "label", "instancesets.mindcluster.huawei.com",
                                     "mindie-motor-vllm-0-prefill", "infer.huawei.com/priority-scheduling-strategy-"});
  REQUIRE_MESSAGE(labelled.exit_code == 0, labelled.err);
  const json report = status_json(sb);
  CHECK(role_report(report, "prefill")["instanceSetsWithoutStrategy"] == json::array({"mindie-motor-vllm-0-prefill"}));
  const auto table = sb.mindie({"status", "-n", kNs}).out;
  CHECK_MESSAGE(table.find("instanceset/mindie-motor-vllm-0-prefill has no "
                           "infer.huawei.com/priority-scheduling-strategy label") != std::string::npos,
                table);
  CHECK(table.find("kubectl label instancesets.mindcluster.huawei.com -n mindie-demo mindie-motor-vllm-0-prefill "
                   "infer.huawei.com/priority-scheduling-strategy=Parallel") != std::string::npos);
}

TEST_CASE(
    "a redeploy with another nodePort says the live Service keeps its port, and is not refused for a port it "
    "will not use") {
  Cluster sb;
  e2e::TempDir dir;
  json cfg = example();
  cfg["motor_deploy_config"]["infer_node_port"] = 30000;
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // The operator makes the role Service after deploy returns; until it exists the new spec's port is what would be
  // created, and refusing a held one is right (found when a loaded CI run redeployed first).
  sb.admin_ok({"wait", "-n", kNs, "--for=create", "service/infer-mindie-motor-vllm-0-coordinator", "--timeout=120s"});
  hold_node_port(sb, dir, "holder", 31015);
  run = deploy(sb, dir, example());  // infer_node_port absent: 31015, which another Service holds
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: service/infer-mindie-motor-vllm-0-coordinator keeps nodePort 30000, not 31015: "
                             "infer-operator never updates a role Service") != std::string::npos,
                run.err);
  CHECK(infer_node_port(sb) == 30000);
}

TEST_CASE("a redeploy with fewer gang instances deletes their PodGroups; a failed delete names every one left") {
  Cluster sb({"--fault", "DELETE:.*/podgroups/pg-mindie-motor-vllm-0-decode-2:500:100", Cluster::kFreshOperator});
  e2e::TempDir dir;
  auto run = deploy(sb, dir, gang_example(2));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_objects("podgroups", kNs, "", 2);
  run = deploy(sb, dir, gang_example(1), {"--prune"});  // confirmed: decode instance 1 goes
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-1 deleted\n") != std::string::npos);
  CHECK(item_names(e2e::kubectl_items(sb, "podgroups", kNs)) ==
        std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-0"});

  // scale 4 -> 1: instances 1..3 lose their PodGroups; the one whose delete fails is named with the command. Scaling
  // out onto the removed instance 1 needs the operator to forget its fault record first (gang_rebuild_test.cpp).
  sb.wait_pods_gone(kNs, e2e::role_pods("decode", 1));
  sb.restart_operator();
  run = sb.mindie({"scale", "-n", kNs, "--decode", "4", "--operator-restarted"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_objects("podgroups", kNs, "", 4);
  run = sb.mindie({"scale", "-n", kNs, "--decode", "1"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("the scale is done") != std::string::npos, run.err);
  CHECK(run.err.find("podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-2") != std::string::npos);
  CHECK(run.err.find("kubectl delete podgroups.scheduling.volcano.sh -n mindie-demo pg-mindie-motor-vllm-0-decode-2") !=
        std::string::npos);
  CHECK(item_names(e2e::kubectl_items(sb, "podgroups", kNs)) ==
        std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-0", "pg-mindie-motor-vllm-0-decode-2"});
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

TEST_CASE("pods per instance 2 -> 3 reaches only new instances: deploy warns, status counts the old instance whole") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  json cfg = gang_example(1);
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 3;
  run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("Warning: 1 instance on an earlier pod template (decode 1): run \"kubectl mindie rollout "
                             "restart -n mindie-demo\" to roll them\n") != std::string::npos,
                run.err);
  // Not the delete of its workload (a gang role: infer-operator would rebuild it in a loop) but the rollout.
  CHECK(run.err.find("kubectl delete -n mindie-demo statefulset/mindie-motor-vllm-0-decode-0") == std::string::npos);
  // Its 2 pods are all its workload asks for (no missing pod), but it is out of date, so not ready (issue 31).
  const json report = status_json(sb);
  CHECK(role_report(report, "decode")["instancesOnOtherTemplates"] == 1);
  CHECK(role_report(report, "decode")["readyPods"] == 2);
  CHECK(role_report(report, "decode")["readyInstances"] == 0);
  CHECK(report["unready"].dump().find("pods exist") == std::string::npos);
  CHECK(report["unready"].dump().find("role decode: 1 of 1 instances run an earlier pod template") !=
        std::string::npos);
}

TEST_CASE("wait names an InstanceSet without the strategy label as the reason new instances never come") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  REQUIRE(kubectl(sb, {"-n", kNs, "label", "instancesets.mindcluster.huawei.com", "mindie-motor-vllm-0-decode",
                       "infer.huawei.com/priority-scheduling-strategy-"})
              .exit_code == 0);
  run = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "1s"});
  CHECK(waited.exit_code == 1);
  CHECK_MESSAGE(waited.err.find("instanceset/mindie-motor-vllm-0-decode has no "
                                "infer.huawei.com/priority-scheduling-strategy label") != std::string::npos,
                waited.err);
}

TEST_CASE("status without permission to list StatefulSets says what it cannot judge and shows the rest") {
  Cluster sb({"--fault", "GET:/apis/apps/v1/namespaces/mindie-demo/statefulsets:403"});
  e2e::TempDir dir;
  auto run = deploy(sb, dir, example());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  run = deploy(sb, dir, example());  // a redeploy lists them too
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("Warning: cannot list statefulsets in namespace mindie-demo") != std::string::npos);
  const auto table = sb.mindie({"status", "-n", kNs});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("warning: cannot list statefulsets in namespace mindie-demo") != std::string::npos);
  CHECK(table.out.find("which pod template each instance runs is unknown") != std::string::npos);
  CHECK(table.out.find("every desired pod exists and is ready") != std::string::npos);
}
