// rollout restart, resume and abort (issue 31), end to end on the real control plane with the fake infer-operator:
// a new image reaches every pod in each deploy mode while a watch of the pods sees each role keep a ready instance;
// a full NPU pool rolls with --no-surge; a gang role is refused without --stop-operator (rollout_gang_test.cpp rolls
// it), nothing written; a rollout killed half-way is continued by `rollout resume` from another process; a rollout
// and a rival command exclude each other.
#include <doctest/doctest.h>

#include <csignal>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "rollout_support.h"

using e2e::Cluster;
using e2e::rollout::check_new_image;
using e2e::rollout::deploy;
using e2e::rollout::deploy_then_change_image;
using e2e::rollout::example;
using e2e::rollout::kNewImage;
using e2e::rollout::ReadyWatch;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

/// Overrides under which engine pods stay Terminating, never ready, for 3 s once deleted, as a kubelet keeps them
/// for their grace period: a replacement that took a role's last pod away shows in a watch.
constexpr const char* kSlowTermination =
    "roles:\n  prefill:\n    annotations:\n      kwok.x-k8s.io/sim-terminate: 3s\n"
    "  decode:\n    annotations:\n      kwok.x-k8s.io/sim-terminate: 3s\n";

/// No temporary instance: every role of the InferServiceSet runs the one instance (or, kv-pool and kv-conductor,
/// none) the example gives it.
void check_no_temporary_instance(const Cluster& sb) {
  const json sets = e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs, "");
  REQUIRE(sets.size() == 1);
  for (const auto& role : sets[0]["spec"]["template"]["roles"]) {
    CAPTURE(role["name"]);
    CHECK(role.value("replicas", 1) <= 1);
  }
}

}  // namespace

TEST_CASE("rollout restart, infer_service_set: a new image reaches every pod, each role keeps a ready instance") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"),
                           {"--overrides", dir.write("overrides.yaml", kSlowTermination)});
  std::map<std::string, std::unique_ptr<ReadyWatch>> watches;
  for (const char* role : {"controller", "coordinator", "prefill", "decode"}) {
    watches[role] = std::make_unique<ReadyWatch>(sb, e2e::role_pods(role), dir);
    REQUIRE(watches[role]->initial() >= 1);
  }

  const auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const char* role : {"controller", "coordinator", "prefill", "decode"}) {
    CAPTURE(role);
    const bool engine = std::string(role) == "prefill" || std::string(role) == "decode";
    const std::string workload = (engine ? "statefulset.apps" : "deployment.apps") +
                                 std::string("/mindie-motor-vllm-0-") + role + "-0";
    CHECK_MESSAGE(run.out.find(workload + " restarted") != std::string::npos, run.out);
    CHECK_MESSAGE(run.err.find("role " + std::string(role) + ": added a temporary instance (replicas 1 -> 2)") !=
                      std::string::npos,
                  run.err);
    CHECK(run.err.find("role " + std::string(role) + ": removed the temporary instance (replicas 2 -> 1)") !=
          std::string::npos);
  }
  // A role of one instance never went without a ready pod: the temporary instance served meanwhile.
  for (auto& [role, watch] : watches) {
    CAPTURE(role);
    CHECK(watch->fewest_ready() >= 1);
  }
  for (const char* role : {"controller", "coordinator", "prefill", "decode"})
    check_new_image(sb, e2e::role_pods(role, 0));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);  // the temporary instances are gone again

  // Nothing left on an earlier template: nothing to do, nothing written.
  const std::size_t mark = sb.requests().size();
  const auto again = sb.mindie({"rollout", "restart", "-n", kNs});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out.find("nothing to roll") != std::string::npos);
  CHECK(e2e::writes_since(sb, mark).empty());
}

TEST_CASE("rollout restart, multi_deployment on a full NPU pool: the surge is refused, --no-surge rolls it") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = example("multi_deployment");
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  e2e::fill_npu_pool(sb, dir, 8);
  cfg["motor_deploy_config"]["image_name"] = kNewImage;
  run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  e2e::eventually(
      [&] {
        const auto s = sb.mindie({"status", "-n", kNs, "-o", "json"});
        return s.out.find("Insufficient huawei.com/Ascend910") != std::string::npos;
      },
      "the surge pods unschedulable", 120);

  run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "prefill", "--role", "decode", "--timeout", "2m"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("pass --no-surge") != std::string::npos, run.err);
  CHECK(run.err.find("Insufficient huawei.com/Ascend910") != std::string::npos);

  // One instance per role: in place means down while it is replaced, which must be allowed.
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "prefill", "--role", "decode", "--no-surge"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("* role prefill: it runs 1 instance: replacing one leaves fewer than 1 ready "
                             "(--no-surge); pass --no-surge --allow-downtime") != std::string::npos,
                run.err);
  CHECK(e2e::writes_since(sb, mark).empty());

  run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "prefill", "--role", "decode", "--no-surge",
                   "--allow-downtime", "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("deployment.apps/vllm-p0 restarted") != std::string::npos);
  CHECK(run.out.find("deployment.apps/vllm-d0 restarted") != std::string::npos);
  sb.wait_ready(kNs);
  check_new_image(sb, "app in (vllm-p0,vllm-d0)");
  // The strategy is the Deployment's own again.
  const json d = json::parse(sb.admin_ok({"get", "deployment", "vllm-p0", "-n", kNs, "-o", "json"}));
  CHECK(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%");
}

TEST_CASE("rollout restart, single_container: the new image reaches the pod; --all restarts a current one too") {
  Cluster sb({"--no-crd"});  // this mode needs no infer-operator
  e2e::TempDir dir;
  json cfg = example("single_container");
  cfg["motor_deploy_config"]["d_pod_npu_num"] = 8;
  deploy_then_change_image(sb, dir, cfg);
  auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  check_new_image(sb, "");
  const auto uid_of_pod = [&] {
    return sb.admin_ok({"get", "pods", "-n", kNs, "-o", "jsonpath={.items[*].metadata.uid}"});
  };
  const std::string before = uid_of_pod();

  // Current already: --all replaces it all the same, through kubectl's restartedAt annotation.
  run = sb.mindie({"rollout", "restart", "-n", kNs, "--all", "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.out.find("deployment.apps/mindie-demo-single-container restarted") != std::string::npos, run.out);
  sb.wait_ready(kNs);
  CHECK(uid_of_pod() != before);
  check_new_image(sb, "");
}

TEST_CASE("rollout restart refuses a gang-scheduled role before any write, naming the way that ends no loop") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
  deploy_then_change_image(sb, dir, cfg);
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "decode"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("* role decode: its instances are gang-scheduled") != std::string::npos, run.err);
  CHECK(run.err.find("restart infer-operator") != std::string::npos);
  CHECK(e2e::writes_since(sb, mark).empty());
  // The other roles roll.
  const auto prefill = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "prefill", "--timeout", "5m"});
  CHECK_MESSAGE(prefill.exit_code == 0, prefill.err);
  check_new_image(sb, e2e::role_pods("prefill", 0));
}

TEST_CASE("rollout restart killed half-way: the next command takes back the surge; resume continues from another") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"));
  // Killed once the deletion of the first instance's workload (the controller's) has reached the server.
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/(deployments|statefulsets)/.*:hold-reply:1");
  e2e::Background restart(sb.mindie_argv({"rollout", "restart", "-n", kNs, "--timeout", "5m"}));
  sb.wait_held(1);
  restart.signal(SIGKILL);
  CHECK(restart.finish().exit_code == 128 + SIGKILL);
  sb.clear_faults();
  sb.release_held();
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  REQUIRE(lease["metadata"]["annotations"].contains("kubectl-mindie/intent"));
  const json intent = json::parse(lease["metadata"]["annotations"]["kubectl-mindie/intent"].get<std::string>());
  CHECK(intent["command"] == "rollout");
  CHECK(intent["surged"].size() == 1);  // the role whose instance was being replaced

  const auto resumed = sb.mindie({"rollout", "resume", "-n", kNs, "--timeout", "5m"});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK_MESSAGE(resumed.err.find("recovered an interrupted rollout") != std::string::npos, resumed.err);
  CHECK(resumed.err.find("removed the temporary instance of role ") != std::string::npos);
  for (const char* role : {"controller", "coordinator", "prefill", "decode"})
    check_new_image(sb, e2e::role_pods(role, 0));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);

  // Nothing is left to resume or abort.
  const auto none = sb.mindie({"rollout", "resume", "-n", kNs});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("error: no interrupted rollout in namespace " + kNs + " to resume") != std::string::npos);
  CHECK(sb.mindie({"rollout", "abort", "-n", kNs}).exit_code == 1);
}

TEST_CASE("rollout restart: flags that do not go together are refused before any request") {
  Cluster sb;
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--allow-downtime"}, "--allow-downtime needs --no-surge"},
           {{"--surge", "--no-surge"}, "--surge and --no-surge cannot be used together"},
           {{"--max-unavailable", "0"}, "--max-unavailable 0 is out of range"},
       }) {
    std::vector<std::string> argv = {"rollout", "restart", "-n", kNs};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::size_t mark = sb.requests().size();
    const auto run = sb.mindie(argv);
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.find(message) != std::string::npos, run.err);
    CHECK(sb.requests_since(mark).empty());
  }
  const auto run = sb.mindie({"rollout", "status", "-n", kNs, "--all"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("--all applies to rollout restart, not to rollout status") != std::string::npos);
}

TEST_CASE("rollout pause stops a running rollout between instances without its temporary one; resume finishes it") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"));
  // The pause comes while the first instance (the controller's) is being replaced.
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/deployments/.*:hold:1");
  e2e::Background restart(sb.mindie_argv({"rollout", "restart", "-n", kNs, "--timeout", "5m"}));
  sb.wait_held(1);
  const auto paused = sb.mindie({"rollout", "pause", "-n", kNs});
  CHECK_MESSAGE(paused.exit_code == 0, paused.err);
  CHECK(paused.out.find("asked the rollout in namespace " + kNs + " to pause") != std::string::npos);
  sb.release_held();
  const auto stopped = restart.finish();
  CHECK_MESSAGE(stopped.exit_code == 0, stopped.err);
  CHECK_MESSAGE(stopped.out.find("paused after replacing 1 instance: kubectl mindie rollout resume -n " + kNs) !=
                    std::string::npos,
                stopped.out);
  CHECK(stopped.err.find("role controller: removed the temporary instance") != std::string::npos);
  check_no_temporary_instance(sb);
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  CHECK_FALSE(lease["spec"].contains("holderIdentity"));
  const json intent = json::parse(lease["metadata"]["annotations"]["kubectl-mindie/intent"].get<std::string>());
  CHECK(intent["done"] == json::array({"deployment/mindie-motor-vllm-0-controller-0"}));
  // Nothing runs to pause now.
  CHECK(sb.mindie({"rollout", "pause", "-n", kNs}).exit_code == 1);

  const auto resumed = sb.mindie({"rollout", "resume", "-n", kNs, "--timeout", "5m"});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(resumed.out.find("controller-0 restarted") == std::string::npos);  // replaced before the pause
  CHECK(resumed.out.find("deployment.apps/mindie-motor-vllm-0-coordinator-0 restarted") != std::string::npos);
  for (const char* role : {"controller", "coordinator", "prefill", "decode"})
    check_new_image(sb, e2e::role_pods(role, 0));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

TEST_CASE("rollout abort takes back a killed rollout's temporary instance and forgets it; other roles keep theirs") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"));
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/deployments/.*:hold:1");
  e2e::Background restart(sb.mindie_argv({"rollout", "restart", "-n", kNs}));
  sb.wait_held(1);
  restart.signal(SIGKILL);
  restart.finish();
  sb.clear_faults();
  sb.release_held();
  const auto aborted = sb.mindie({"rollout", "abort", "-n", kNs});
  REQUIRE_MESSAGE(aborted.exit_code == 0, aborted.err);
  CHECK_MESSAGE(aborted.err.find("recovered an interrupted rollout") != std::string::npos, aborted.err);
  CHECK(aborted.err.find("removed the temporary instance of role controller; 0 instances had been replaced") !=
        std::string::npos);
  CHECK(aborted.out.find("was aborted") != std::string::npos);
  check_no_temporary_instance(sb);
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  CHECK_FALSE(lease["metadata"]["annotations"].contains("kubectl-mindie/intent"));
  CHECK(sb.mindie({"rollout", "resume", "-n", kNs}).exit_code == 1);
}

TEST_CASE("deploy --rollout: a new image is deployed and then reaches every pod; --dry-run refuses it") {
  Cluster sb;
  e2e::TempDir dir;
  json cfg = example("infer_service_set");
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["image_name"] = kNewImage;
  const auto dry = deploy(sb, dir, cfg, {"--rollout", "--dry-run=server"});
  CHECK(dry.exit_code == 1);
  CHECK(dry.err.find("--rollout cannot be used with --dry-run") != std::string::npos);
  run = deploy(sb, dir, cfg, {"--rollout", "--wait", "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm serverside-applied") !=
        std::string::npos);
  CHECK(run.out.find("statefulset.apps/mindie-motor-vllm-0-decode-0 restarted") != std::string::npos);
  for (const char* role : {"controller", "coordinator", "prefill", "decode"})
    check_new_image(sb, e2e::role_pods(role, 0));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

TEST_CASE("deploy --rollout: a refusal of the rollout's lock take says the deploy stays applied") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"));
  json cfg = example("infer_service_set");
  cfg["motor_deploy_config"]["image_name"] = kNewImage;
  // How many times a deploy that changes nothing writes the Lease: the rollout's take is the next write.
  const std::string lease = "/apis/coordination.k8s.io/v1/namespaces/" + kNs + "/leases/kubectl-mindie";
  const std::size_t mark = sb.requests().size();
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  std::size_t patches = 0;
  for (const auto& r : sb.requests_since(mark)) patches += r.path == lease && r.method == "PATCH" ? 1 : 0;
  sb.add_fault("PATCH:" + lease + ":403:1:" + std::to_string(patches));
  run = deploy(sb, dir, cfg, {"--rollout"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("may not create or update leases there") != std::string::npos, run.err);
  CHECK_MESSAGE(run.err.find("; the deploy stays applied and no pod was replaced") != std::string::npos, run.err);
  CHECK(run.err.find("nothing was changed") == std::string::npos);
}

TEST_CASE("rollout restart and another mutating command: whichever comes second names the first, nothing written") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, example("infer_service_set"));
  const auto only_reads = [&](std::size_t mark) {
    for (const auto& r : sb.requests_since(mark)) CHECK_MESSAGE(r.method == "GET", (r.method + " " + r.path));
  };

  // A scale holds the lock, stopped at its InferServiceSet write: the rollout names it and writes nothing.
  sb.add_fault("PATCH:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*:hold:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--decode", "2"}));
  sb.wait_held(1);
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--lock-timeout", "0"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.starts_with(
                    "error: another kubectl-mindie command is changing namespace mindie-demo: scale by "),
                run.err);
  only_reads(mark);
  sb.clear_faults();
  sb.release_held();
  CHECK(scale.finish().exit_code == 0);

  // A rollout holds the lock, stopped at its first workload delete: a scale names it and writes nothing.
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/(deployments|statefulsets)/.*:hold:1");
  e2e::Background rollout(sb.mindie_argv({"rollout", "restart", "-n", kNs, "--timeout", "5m"}));
  sb.wait_held(1);
  mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--decode", "1", "--lock-timeout", "0"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.starts_with(
                    "error: another kubectl-mindie command is changing namespace mindie-demo: rollout by "),
                run.err);
  only_reads(mark);
  sb.clear_faults();
  sb.release_held();
  const auto rolled = rollout.finish();
  CHECK_MESSAGE(rolled.exit_code == 0, rolled.err);
}
