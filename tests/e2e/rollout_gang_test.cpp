// rollout restart --stop-operator on gang-scheduled roles (issue 31), end to end, with infer-operator running as the
// pod of its Deployment (Cluster::kOperatorDeployment): the fake operator's rescheduler records a fault for every
// deleted pod of a gang instance it sees and rebuilds that workload whenever it exists (after Ascend/mind-cluster
// component/infer-operator/pkg/controller/rescheduling/rescheduling.go), and keeps the records only while its
// process runs. A rollout that lets the old pods go while the operator is stopped must end with each new instance
// made once, left alone, and the operator running again; a rollout killed while the operator is stopped must be
// taken back by the next command, the operator started again.
#include <doctest/doctest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "rollout_support.h"

using e2e::Cluster;
using e2e::rollout::check_new_image;
using e2e::rollout::deploy_then_change_image;
using e2e::rollout::ReadyWatch;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

/// The example with gang-scheduled prefill (one instance of 2 pods) and decode (two instances of 2 pods) roles.
json gang_example() {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["single_p_instance_pod_num"] = 2;
  cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
  cfg["motor_deploy_config"]["d_instances_num"] = 2;
  return cfg;
}

/// Engine pods stay Terminating for 3 s once deleted, as a kubelet keeps them for their grace period: the old pods
/// go after the workload, when a running operator would see them go.
constexpr const char* kSlowTermination =
    "roles:\n  prefill:\n    annotations:\n      kwok.x-k8s.io/sim-terminate: 3s\n"
    "  decode:\n    annotations:\n      kwok.x-k8s.io/sim-terminate: 3s\n";

std::string operator_replicas(const Cluster& sb) {
  return sb.admin_ok(
      {"get", "deployment", "infer-operator-manager", "-n", "mindx-dl", "-o", "jsonpath={.spec.replicas}"});
}

/// The uid of StatefulSet `name` in the example's namespace.
std::string statefulset_uid(const Cluster& sb, const std::string& name) {
  return sb.admin_ok({"get", "statefulset", name, "-n", kNs, "-o", "jsonpath={.metadata.uid}"});
}

/// The uid of PodGroup `name` in the example's namespace.
std::string pod_group_uid(const Cluster& sb, const std::string& name) {
  return sb.admin_ok({"get", "podgroup", name, "-n", kNs, "-o", "jsonpath={.metadata.uid}"});
}

}  // namespace

TEST_CASE("rollout restart --stop-operator rolls gang roles without infer-operator's rebuild loop") {
  Cluster sb({Cluster::kOperatorDeployment});
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, gang_example(), {"--overrides", dir.write("overrides.yaml", kSlowTermination)});
  ReadyWatch decode(sb, e2e::role_pods("decode"), dir);
  ReadyWatch prefill(sb, e2e::role_pods("prefill"), dir);
  REQUIRE(decode.initial() == 4);

  const auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--stop-operator"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const char* w : {"prefill-0", "decode-0", "decode-1"})
    CHECK_MESSAGE(run.out.find("statefulset.apps/mindie-motor-vllm-0-" + std::string(w) + " restarted") !=
                      std::string::npos,
                  run.out);
  CHECK_MESSAGE(run.err.find("infer-operator stopped (deployment.apps/infer-operator-manager -n mindx-dl scaled to "
                             "0)") != std::string::npos,
                run.err);
  CHECK(run.err.find("infer-operator started again (deployment.apps/infer-operator-manager -n mindx-dl scaled to "
                     "1)") != std::string::npos);
  CHECK(run.err.find("role prefill: added a temporary instance (replicas 1 -> 2)") != std::string::npos);
  // One decode instance (2 pods) and the prefill instance or its temporary one served throughout.
  CHECK(decode.fewest_ready() >= 2);
  CHECK(prefill.fewest_ready() >= 2);
  check_new_image(sb, e2e::role_pods("decode"));
  check_new_image(sb, e2e::role_pods("prefill"));
  CHECK(operator_replicas(sb) == "1");

  // Made once and left alone: the operator holds no record of the old pods, so the new workloads stay (a rebuild
  // would replace them within a reconcile), the temporary instance's record was forgotten by a restart, and a
  // scale-out onto its index needs no --operator-restarted.
  const std::string uid = statefulset_uid(sb, "mindie-motor-vllm-0-decode-0");
  const auto out = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--wait", "--timeout", "3m"});
  CHECK_MESSAGE(out.exit_code == 0, out.err);
  sb.wait_ready(kNs);
  CHECK(statefulset_uid(sb, "mindie-motor-vllm-0-decode-0") == uid);
  const json report = json::parse(sb.mindie({"status", "-n", kNs, "-o", "json"}).out);
  for (const auto& role : report["roles"])
    for (const auto& inst : role["instances"]) {
      CAPTURE(inst);
      CHECK(inst["rebuild"].is_null());
    }
}

TEST_CASE("rollout restart --stop-operator killed while the operator is stopped: the next command starts it again") {
  Cluster sb({Cluster::kOperatorDeployment});
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, gang_example());
  const std::string pg_uid = pod_group_uid(sb, "pg-mindie-motor-vllm-0-decode-0");
  // Killed once the deletion of the first decode instance's workload reached the server: the operator is stopped.
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/statefulsets/.*:hold-reply:1");
  e2e::Background restart(sb.mindie_argv({"rollout", "restart", "-n", kNs, "--role", "decode", "--stop-operator"}));
  sb.wait_held(1);
  restart.signal(SIGKILL);
  restart.finish();
  sb.clear_faults();
  sb.release_held();
  CHECK(operator_replicas(sb) == "0");

  // A user of the namespace alone cannot start the operator: the recovery says so and keeps the intent.
  sb.admin_ok({"create", "serviceaccount", "ns-user", "-n", kNs});
  sb.admin_ok({"create", "rolebinding", "ns-user", "-n", kNs, "--clusterrole", "cluster-admin", "--serviceaccount",
               kNs + ":ns-user"});
  std::string token = sb.admin_ok({"create", "token", "ns-user", "-n", kNs});
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const auto refused = sb.mindie({"rollout", "abort", "-n", kNs, "--token", token});
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(refused.err.find(
                    "infer-operator stays stopped (deployment.apps/infer-operator-manager -n mindx-dl at 0 "
                    "replicas) by the interrupted rollout in namespace " +
                    kNs + ", and your user may not start it again: ") != std::string::npos,
                refused.err);
  CHECK(refused.err.find("runs kubectl mindie rollout abort -n " + kNs) != std::string::npos);
  CHECK(operator_replicas(sb) == "0");

  // Any other command first takes back what the rollout changed for the while: here rollout abort.
  const auto aborted = sb.mindie({"rollout", "abort", "-n", kNs});
  REQUIRE_MESSAGE(aborted.exit_code == 0, aborted.err);
  CHECK_MESSAGE(aborted.err.find("deleted podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-0, started "
                                 "infer-operator again (deployment.apps/infer-operator-manager -n mindx-dl scaled to "
                                 "1)") != std::string::npos,
                aborted.err);
  CHECK(operator_replicas(sb) == "1");
  // The operator made the deleted instance again, from the current template, and left it alone: a new rollout
  // finds only the other instance to replace, and ends.
  const auto again = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "decode", "--stop-operator"});
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK_MESSAGE(again.out.find("statefulset.apps/mindie-motor-vllm-0-decode-1 restarted") != std::string::npos,
                again.out);
  CHECK(again.out.find("decode-0 restarted") == std::string::npos);
  CHECK(operator_replicas(sb) == "1");
  // The interrupted instance's PodGroup was made again with it, from the current template.
  const std::string remade = pod_group_uid(sb, "pg-mindie-motor-vllm-0-decode-0");
  CHECK(!remade.empty());
  CHECK(remade != pg_uid);
}

TEST_CASE("a workload delete refused after the operator was stopped keeps the intent: a deploy starts it again") {
  Cluster sb({Cluster::kOperatorDeployment});
  e2e::TempDir dir;
  json cfg = gang_example();
  deploy_then_change_image(sb, dir, cfg);
  sb.add_fault("DELETE:/apis/apps/v1/namespaces/" + kNs + "/statefulsets/.*:403:1");
  const auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "decode", "--stop-operator"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("Warning: infer-operator is left stopped for every namespace") != std::string::npos,
                run.err);
  sb.clear_faults();
  CHECK(operator_replicas(sb) == "0");
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  REQUIRE(lease["metadata"]["annotations"].contains("kubectl-mindie/intent"));

  // A deploy (which supersedes other kinds' intents) recovers a rollout's: the operator runs again.
  cfg["motor_deploy_config"]["image_name"] = e2e::rollout::kNewImage;
  const auto redeploy = e2e::rollout::deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(redeploy.exit_code == 0, redeploy.err);
  CHECK_MESSAGE(redeploy.err.find("started infer-operator again") != std::string::npos, redeploy.err);
  CHECK(operator_replicas(sb) == "1");
}

TEST_CASE("rollout resume of a gang rollout killed with its temporary instance up: the operator forgets it first") {
  Cluster sb({Cluster::kOperatorDeployment});
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, gang_example());
  // Killed once its stop of the operator reached the server: prefill's temporary instance runs, instance 0 is old.
  sb.add_fault("PATCH:/apis/apps/v1/namespaces/mindx-dl/deployments/infer-operator-manager:hold-reply:1");
  e2e::Background restart(sb.mindie_argv({"rollout", "restart", "-n", kNs, "--role", "prefill", "--stop-operator"}));
  sb.wait_held(1);
  restart.signal(SIGKILL);
  restart.finish();
  sb.clear_faults();
  sb.release_held();

  // The recovery starts the operator and removes the temporary instance, whose pods the operator then sees go: the
  // rollout's new temporary instance (the same index) would be rebuilt in a loop, so the operator is restarted
  // before it is added.
  const auto resumed = sb.mindie({"rollout", "resume", "-n", kNs, "--timeout", "5m"});
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK_MESSAGE(resumed.err.find("started infer-operator again") != std::string::npos, resumed.err);
  CHECK(resumed.err.find("removed the temporary instance of role prefill") != std::string::npos);
  CHECK_MESSAGE(resumed.out.find("statefulset.apps/mindie-motor-vllm-0-prefill-0 restarted") != std::string::npos,
                resumed.out);
  check_new_image(sb, e2e::role_pods("prefill"));
  CHECK(operator_replicas(sb) == "1");
  CHECK(sb.admin_ok({"get", "instancesets.mindcluster.huawei.com", "mindie-motor-vllm-0-prefill", "-n", kNs, "-o",
                     "jsonpath={.metadata.annotations.kubectl-mindie/removed-gang-instances}"})
            .empty());
}

TEST_CASE("rollout restart --stop-operator is refused before any write where infer-operator has no Deployment") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_then_change_image(sb, dir, gang_example());
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"rollout", "restart", "-n", kNs, "--role", "decode", "--stop-operator"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: --stop-operator: infer-operator's Deployment deployment.apps/"
                             "infer-operator-manager -n mindx-dl (where its published manifest installs it) does "
                             "not exist, nothing was changed") != std::string::npos,
                run.err);
  CHECK(e2e::writes_since(sb, mark).empty());
}

TEST_CASE("deploy --rollout of a gang role: refused saying the deploy stays applied; --stop-operator rolls it") {
  Cluster sb({Cluster::kOperatorDeployment});
  e2e::TempDir dir;
  json cfg = gang_example();
  auto run = e2e::rollout::deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["image_name"] = e2e::rollout::kNewImage;

  // Without --stop-operator the new template is applied, and the refusal says so instead of "nothing was changed".
  run = e2e::rollout::deploy(sb, dir, cfg, {"--rollout"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("cannot roll out the deployment in namespace " + kNs +
                             ", the deploy stays applied and no pod was replaced:\n* role prefill: its instances are "
                             "gang-scheduled") != std::string::npos,
                run.err);
  CHECK(run.err.find("nothing was changed") == std::string::npos);
  CHECK(operator_replicas(sb) == "1");

  // With it, and a decode pod's memory request changed too: the replaced instances' PodGroups are made again from
  // the new template (infer-operator would reuse the old ones unchanged), the temporary instance's is gone.
  const std::string overrides = dir.write("overrides.yaml",
                                          "roles:\n  decode:\n    resources:\n      requests:\n        memory: 96Gi\n");
  run = e2e::rollout::deploy(sb, dir, cfg,
                             {"--overrides", overrides, "--rollout", "--stop-operator", "--timeout", "5m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("infer-operator started again") != std::string::npos);
  CHECK_MESSAGE(run.out.find("podgroup.scheduling.volcano.sh/pg-mindie-motor-vllm-0-decode-1 deleted") !=
                    std::string::npos,
                run.out);
  check_new_image(sb, e2e::role_pods("decode"));
  check_new_image(sb, e2e::role_pods("prefill"));
  CHECK(operator_replicas(sb) == "1");
  for (const char* pg : {"pg-mindie-motor-vllm-0-decode-0", "pg-mindie-motor-vllm-0-decode-1"})
    CHECK(sb.admin_ok({"get", "podgroup", pg, "-n", kNs, "-o", "jsonpath={.spec.minResources.memory}"}) == "192Gi");
  CHECK(sb.admin({"get", "podgroup", "pg-mindie-motor-vllm-0-prefill-1", "-n", kNs}).exit_code != 0);
}
