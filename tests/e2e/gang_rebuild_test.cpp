// infer-operator's rescheduler on gang-scheduled roles (issue 29), end to end: the fake operator models it
// (tests/cluster/go/testkit/internal/operator/rescheduling.go, after Ascend/mind-cluster
// component/infer-operator/pkg/controller/rescheduling/rescheduling.go): every deleted pod of a gang instance records
// a fault for its workload, kept in memory until the InstanceSet goes or the operator restarts, and a recorded fault
// makes it delete and re-create that workload. With pods that take their grace period to terminate (KWOK's
// kwok.x-k8s.io/sim-terminate, 10 s as the templates' terminationGracePeriodSeconds) that never ends by itself.
// scale must never start it, status and wait must never call it ready, and nothing may advise what starts it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using e2e::role_pods;
using e2e::writes_since;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

/// The example with gang-scheduled decode instances (2 pods each), `instances` of them.
json gang_example(int instances) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["single_d_instance_pod_num"] = 2;
  cfg["motor_deploy_config"]["d_instances_num"] = instances;
  return cfg;
}

/// Overrides under which decode pods stay Terminating 10 s once deleted, as the kubelet keeps them for the
/// templates' grace period: what makes the real operator's rebuilds endless.
constexpr const char* kSlowDecodeTermination =
    "roles:\n  decode:\n    annotations:\n"
    "      kwok.x-k8s.io/sim-terminate: 10s\n";

e2e::Run deploy(const Cluster& sb, const e2e::TempDir& dir, const json& cfg, bool slow_termination) {
  std::vector<std::string> args = {"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir",
                                   kScripts};
  if (slow_termination) args.insert(args.end(), {"--overrides", dir.write("overrides.yaml", kSlowDecodeTermination)});
  return sb.mindie(args);
}

/// deploy(), which must succeed, then until the deployment is ready.
void deploy_ready(const Cluster& sb, const e2e::TempDir& dir, const json& cfg, bool slow_termination) {
  const auto run = deploy(sb, dir, cfg, slow_termination);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
}

json status_json(const Cluster& sb) {
  const auto run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

json decode_instance(const json& report, int k) {
  for (const auto& r : report["roles"])
    if (r["name"] == "decode")
      for (const auto& inst : r["instances"])
        if (inst["index"] == k) return inst;
  return nullptr;
}

/// The uid of StatefulSet `name` in the example's namespace ("" when there is none).
std::string statefulset_uid(const Cluster& sb, const std::string& name) {
  const auto run =
      sb.admin({"get", "statefulset", name, "-n", kNs, "-o", "jsonpath={.metadata.uid}", "--ignore-not-found"});
  return run.exit_code == 0 ? run.out : "";
}

std::string instance_set_annotation(const Cluster& sb) {
  return sb.admin_ok({"get", "instancesets.mindcluster.huawei.com", "mindie-motor-vllm-0-decode", "-n", kNs, "-o",
                      R"(jsonpath={.metadata.annotations.kubectl-mindie/removed-gang-instances})"});
}

const std::string kDecode1 = "mindie-motor-vllm-0-decode-1";

/// Decode instance `k` of status -o json once status says the operator made its workload `workloads` times or more.
json rebuilt_instance(const Cluster& sb, int k, int workloads) {
  json inst;
  e2e::eventually(
      [&] {
        inst = decode_instance(status_json(sb), k);
        return inst.is_object() && inst["rebuild"].is_object() && inst["rebuild"]["workloads"].get<int>() >= workloads;
      },
      "status naming the rebuild of decode instance " + std::to_string(k), 120);
  return inst;
}

/// Deploys 2 slowly terminating gang decode instances, waits until ready, and scales decode in to 1 with
/// kubectl-mindie: the operator's fault record of decode-1 is what follows.
void deploy_two_then_scale_in(const Cluster& sb, const e2e::TempDir& dir) {
  deploy_ready(sb, dir, gang_example(2), true);
  const auto run = sb.mindie({"scale", "-n", kNs, "--decode", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

}  // namespace

TEST_CASE(
    "gang decode 2 -> 1 -> 2: the scale-out is refused before any write while the operator may hold the removed "
    "instance's fault record, and settles once it restarted") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_two_then_scale_in(sb, dir);
  CHECK(instance_set_annotation(sb).find(R"("1":")") != std::string::npos);

  // Instance 1's pods are still going (10 s): when they are gone the operator records a fault for decode-1. The
  // refusal says so (or, on a machine slow enough for them to be gone already, names the removed instance).
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE((run.err.find("would start infer-operator's rebuild loop: 2 pod(s) of removed instances are still "
                              "going") != std::string::npos ||
                 run.err.find("would start infer-operator's rebuild loop: kubectl-mindie removed the instance(s)") !=
                     std::string::npos),
                run.err);
  CHECK(writes_since(sb, mark).empty());

  sb.wait_pods_gone(kNs, role_pods("decode", 1));
  mark = sb.requests().size();
  run = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("kubectl-mindie removed the instance(s) " + kDecode1 + " (removed ") != std::string::npos,
                run.err);
  CHECK(run.err.find("kubectl rollout restart deployment/infer-operator-manager -n mindx-dl") != std::string::npos);
  CHECK(run.err.find("nothing was changed") != std::string::npos);
  CHECK(writes_since(sb, mark).empty());

  // A restart forgets the records; the new instance is made once and left alone: wait returns ready (a rebuild
  // would keep it from doing so) and the StatefulSet is the one it saw.
  sb.restart_operator();
  run = sb.mindie({"scale", "-n", kNs, "--decode", "2", "--operator-restarted"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  const std::string uid = statefulset_uid(sb, kDecode1);
  CHECK_FALSE(uid.empty());
  const json report = status_json(sb);
  CHECK(report["ready"] == true);
  CHECK(decode_instance(report, 1)["rebuild"].is_null());
  CHECK(instance_set_annotation(sb).empty());
  CHECK(statefulset_uid(sb, kDecode1) == uid);
}

TEST_CASE(
    "a scale-out made by hand onto a removed gang instance starts the rebuild loop: status names it, wait does "
    "not call it ready") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_two_then_scale_in(sb, dir);
  sb.wait_pods_gone(kNs, role_pods("decode", 1));
  // What kubectl-mindie refuses, done with kubectl (decode is the last role of the example's set).
  sb.admin_ok({"patch", "inferservicesets.mindcluster.huawei.com", "mindie-motor-vllm", "-n", kNs, "--type=json", "-p",
               R"([{"op":"replace","path":"/spec/template/roles/3/replicas","value":2}])"});

  const json inst = rebuilt_instance(sb, 1, 3);
  CHECK(inst["rebuild"]["ongoing"] == true);
  CHECK(inst["healthy"] == false);
  const auto table = sb.mindie({"status", "-n", kNs});
  CHECK(table.out.find("Not ready") != std::string::npos);
  CHECK(table.out.find("Rebuilding") != std::string::npos);
  CHECK_MESSAGE(table.out.find("role decode instance 1: infer-operator is rebuilding it: statefulset/" + kDecode1 +
                               " was made ") != std::string::npos,
                table.out);
  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "15s"});
  CHECK(waited.exit_code == 1);
  CHECK_MESSAGE(waited.err.find("infer-operator is rebuilding it") != std::string::npos, waited.err);
}

TEST_CASE(
    "a gang instance on an earlier template: no advice to delete its workload; deleting it by hand starts the "
    "loop, which status names") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  json cfg = gang_example(1);
  auto run = deploy(sb, dir, cfg, true);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["image_name"] = "mindie:2.0-new";
  run = deploy(sb, dir, cfg, true);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // One line: how many per role, and the rollout that rolls them (never a delete of a gang instance's workload).
  CHECK_MESSAGE(run.err.find("decode 1, prefill 1): run \"kubectl mindie rollout restart -n " + kNs +
                             "\" to roll them\n") != std::string::npos,
                run.err);
  CHECK(run.err.find("kubectl delete -n " + kNs + " statefulset/mindie-motor-vllm-0-decode") == std::string::npos);
  // Not ready (issue 31: ready means current), and still no advice to delete it.
  const json report = status_json(sb);
  CHECK(report["ready"] == false);
  std::string unready;
  for (const auto& d : report["unready"]) unready += d.get<std::string>() + "\n";
  CHECK_MESSAGE(unready.find("do not delete a gang instance's workload") != std::string::npos, unready);
  CHECK(unready.find("kubectl delete -n " + kNs + " statefulset/mindie-motor-vllm-0-decode") == std::string::npos);

  // The advice status and deploy used to give: the operator makes it again, then rebuilds it for ever.
  sb.admin_ok({"delete", "statefulset", "mindie-motor-vllm-0-decode-0", "-n", kNs, "--wait=false"});
  const json inst = rebuilt_instance(sb, 0, 3);
  CHECK(inst["rebuild"]["ongoing"] == true);
  const auto table = sb.mindie({"status", "-n", kNs});
  CHECK_MESSAGE(table.out.find("to end it, kubectl mindie delete -n " + kNs + " --wait, then restart infer-operator") !=
                    std::string::npos,
                table.out);
}

TEST_CASE("one deleted pod of a gang instance makes the operator rebuild the whole instance") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_ready(sb, dir, gang_example(1), true);
  const std::string before = statefulset_uid(sb, "mindie-motor-vllm-0-decode-0");
  sb.admin_ok({"delete", "pod", "mindie-motor-vllm-0-decode-0-1", "-n", kNs, "--wait=false"});
  // Not the StatefulSet controller replacing the pod: the operator deletes the workload and makes a new one.
  e2e::eventually(
      [&] {
        const std::string now = statefulset_uid(sb, "mindie-motor-vllm-0-decode-0");
        return !now.empty() && now != before;
      },
      "the decode-0 StatefulSet made again", 120);
  // The deleted workload's other pod is still going: the instance is being rebuilt, not ready.
  const json inst = rebuilt_instance(sb, 0, 2);
  CHECK(inst["rebuild"]["ongoing"] == true);
  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "2s"});
  CHECK(waited.exit_code == 1);
}

TEST_CASE(
    "a pod marked Unhealthy by MindCluster's fault handling makes the operator rebuild its workload; a role "
    "without gang scheduling then settles") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_ready(sb, dir, gang_example(1), false);
  const auto uid_of = [&] { return statefulset_uid(sb, "mindie-motor-vllm-0-prefill-0"); };
  const std::string before = uid_of();
  REQUIRE_FALSE(before.empty());
  sb.admin_ok({"annotate", "pods", "-n", kNs, "-l", role_pods("prefill", 0), "huawei.com/pod-status=Unhealthy"});
  e2e::eventually(
      [&] {
        const std::string now = uid_of();
        return !now.empty() && now != before;
      },
      "the prefill-0 StatefulSet made again", 120);
  sb.wait_ready(kNs);
  const json report = status_json(sb);
  CHECK(report["ready"] == true);
}

TEST_CASE("infer-operator does not start without Volcano's PodGroup CRD: status and wait say what a user sees") {
  Cluster sb({Cluster::kNoVolcano});  // the operator is restarted below
  const std::string log = sb.restart_operator_failing();
  CHECK_MESSAGE(log.find("unable to start manager") != std::string::npos, log);
  CHECK(log.find("PodGroup") != std::string::npos);
  e2e::TempDir dir;
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json report = status_json(sb);
  CHECK(report["ready"] == false);
  CHECK_MESSAGE(report["converging"].dump().find("no status at all: is infer-operator running and watching namespace " +
                                                 kNs + "?") != std::string::npos,
                report.dump());
  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "3s"});
  CHECK(waited.exit_code == 1);
  CHECK(waited.err.find("is infer-operator running") != std::string::npos);
}

TEST_CASE("on a node that turns NotReady infer-operator force-deletes its pods at once (its node-pod cleaner)") {
  Cluster sb({Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_ready(sb, dir, gang_example(1), true);
  const std::string pod = "mindie-motor-vllm-0-decode-0-0";
  const std::string uid = sb.admin_ok({"get", "pod", pod, "-n", kNs, "-o", "jsonpath={.metadata.uid}"});
  const std::string node = sb.admin_ok({"get", "pod", pod, "-n", kNs, "-o", "jsonpath={.spec.nodeName}"});
  REQUIRE_FALSE(node.empty());
  // KWOK lets go of the node (as of a server whose kubelet stopped), so that nothing finishes a graceful delete of
  // its pods and nothing makes it Ready again; given back at the end.
  struct GiveBack {
    const Cluster& sb;
    std::string node;
    ~GiveBack() { sb.admin({"annotate", "node", node, "--overwrite", "kwok.x-k8s.io/node=fake"}); }
  } give_back{sb, node};
  sb.admin_ok({"annotate", "node", node, "kwok.x-k8s.io/node-"});
  sb.admin_ok({"patch", "node", node, "--subresource=status", "--type=strategic", "-p",
               R"({"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady",)"
               R"("message":"the e2e test stopped it"}]}})"});
  // A graceful delete (the taint manager's eviction, a user's) would leave the pod Terminating for ever on a node
  // nobody runs: only a force delete makes it go.
  e2e::eventually(
      [&] {
        const auto r = sb.admin({"get", "pod", pod, "-n", kNs, "-o", "jsonpath={.metadata.uid}", "--ignore-not-found"});
        return r.exit_code == 0 && r.out != uid;
      },
      "pod " + pod + " on the NotReady node force-deleted", 120);
}

TEST_CASE(
    "status of a gang deployment without permission to list events says what it cannot judge and shows the "
    "rest") {
  Cluster sb({"--fault", "GET:/api/v1/namespaces/mindie-demo/events:403", Cluster::kFreshOperator});
  e2e::TempDir dir;
  deploy_ready(sb, dir, gang_example(1), false);
  const json report = status_json(sb);
  CHECK(report["ready"] == true);
  CHECK_MESSAGE(report["warnings"].dump().find("cannot list events in namespace " + kNs) != std::string::npos,
                report.dump());
  CHECK(report["warnings"].dump().find("whether infer-operator is rebuilding a gang instance is not judged") !=
        std::string::npos);
}
