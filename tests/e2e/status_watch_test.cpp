// status, status --watch, wait, deploy --wait and scale --wait end to end: the real binary against the local
// cluster, whose KWOK pods are put into the states a kubelet reports (Cluster::set_pod_state) or left unscheduled by
// the real scheduler, whose watches are cut by the fault proxy (close_watches) and whose etcd history is compacted
// (compact, so a re-watch gets 410 Expired). Synchronisation is by reading the watcher's output.
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Background;
using e2e::Cluster;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

void deploy_example(const Cluster& sb, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = sb.mindie(args);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

void set_state(const Cluster& sb, const std::string& role, const std::string& state, int instance = -1) {
  sb.set_pod_state("mindie-demo", e2e::role_pods(role, instance), state);
}

/// An --overrides file whose role `role` asks for a node no cluster has: the scheduler leaves its pods Pending.
std::string unschedulable(const e2e::TempDir& dir, const std::string& role) {
  return dir.write("overrides.yaml", "roles:\n  " + role + ":\n    nodeSelector: {example.com/pool: none}\n");
}

std::size_t count_path(const std::vector<e2e::LoggedRequest>& reqs, const std::string& needle) {
  std::size_t n = 0;
  for (const auto& r : reqs) n += (r.path + "?" + r.query).find(needle) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("status shows the tree and says in plain words why pods are not ready, with their events") {
  Cluster sb;
  e2e::TempDir dir;
  deploy_example(sb, {"--overrides", unschedulable(dir, "decode"), "--skip-node-check"});
  sb.wait_pods("mindie-demo", e2e::role_pods("decode"), 1, "--for=condition=PodScheduled=false");
  sb.wait_pods("mindie-demo", e2e::role_pods("prefill"), 1);
  set_state(sb, "prefill", "CrashLoopBackOff", 0);
  const std::size_t before = sb.requests().size();
  const auto run = sb.mindie({"status", "-n", "mindie-demo", "-o", "wide"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("inferserviceset/mindie-motor-vllm") != std::string::npos);
  CHECK(run.out.find("└── inferservice/mindie-motor-vllm-0") != std::string::npos);
  CHECK(run.out.find("CrashLoopBackOff") != std::string::npos);
  CHECK(run.out.find("crash loop: ") != std::string::npos);
  CHECK(run.out.find("event BackOff: Back-off restarting failed container") != std::string::npos);
  CHECK(run.out.find("unschedulable: 0/") != std::string::npos);
  CHECK(run.out.find("Not ready") != std::string::npos);
  // The operator's role Services, with their nodePorts (PyMotor 7d15c04 §U6 names).
  CHECK(run.out.find("\nSERVICE ") != std::string::npos);
  CHECK(run.out.find("\ninfer-mindie-motor-vllm-0-coordinator ") != std::string::npos);
  CHECK(run.out.find(" NodePort ") != std::string::npos);
  CHECK(run.out.find(" 1025:31015/TCP\n") != std::string::npos);
  // One request per kind, never one per pod: baseline, set, InferServices, InstanceSets, StatefulSets,
  // Deployments, pods, events, Services, and the namespace lock's Lease (an unfinished change shows as drift).
  const auto reqs = sb.requests_since(before);
  CHECK(reqs.size() == 10);
  CHECK(count_path(reqs, "/events") == 1);

  const auto report = json::parse(sb.mindie({"status", "-n", "mindie-demo", "-o", "json"}).out);
  CHECK(report["kind"] == "Status");
  CHECK(report["ready"] == false);
  bool observed = false;
  for (const auto& role : report["roles"])
    if (role["name"] == "prefill") observed = role["observedInstances"] == 1;
  CHECK(observed);
}

TEST_CASE("a healthy deployment needs no events request") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  const std::size_t before = sb.requests().size();
  const auto run = sb.mindie({"status", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("every desired pod exists and is ready") != std::string::npos);
  const auto reqs = sb.requests_since(before);
  CHECK(reqs.size() == 9);  // as above, without events
  CHECK(count_path(reqs, "/events") == 0);
}

TEST_CASE("wait --for=ready returns once the pods become ready") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  const std::vector<std::string> roles = {"controller", "coordinator", "prefill", "decode"};
  for (const auto& role : roles) set_state(sb, role, "ContainerCreating");
  Background wait(sb.mindie_argv({"wait", "-n", "mindie-demo", "--for=ready", "--timeout", "5m"}));
  for (const auto& role : roles) set_state(sb, role, "Ready");
  const auto run = wait.finish();
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm condition met\n");
}

TEST_CASE("wait times out naming every pod that is not ready and why") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  set_state(sb, "decode", "ImagePullBackOff");
  const auto run = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "--timeout", "1s"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find(
            "error: timed out waiting for the condition on inferserviceset.mindcluster.huawei.com/mindie-motor-vllm") !=
        std::string::npos);
  CHECK(run.err.find("* pod mindie-motor-vllm-0-decode-0") != std::string::npos);
  CHECK(run.err.find("cannot pull the image (ImagePullBackOff)") != std::string::npos);

  const auto usage = sb.mindie({"wait", "-n", "mindie-demo", "--for=delete"});
  CHECK(usage.exit_code == 1);
  CHECK(usage.err.find("unrecognized condition") != std::string::npos);
}

TEST_CASE("deploy --wait and scale --wait wait for the new instances") {
  Cluster sb;
  const auto deployed = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--wait"});
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  CHECK(deployed.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm ready") != std::string::npos);

  // Instance 1 of prefill is kept ContainerCreating: scale --wait must not return before it is ready.
  Background scale(sb.mindie_argv({"scale", "-n", "mindie-demo", "--prefill", "2", "--wait", "--timeout", "5m"}));
  scale.wait_for_output("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled");
  sb.wait_pods("mindie-demo", e2e::role_pods("prefill", 1), 1, "");
  set_state(sb, "prefill", "ContainerCreating", 1);
  set_state(sb, "prefill", "Ready", 1);
  const auto run = scale.finish();
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("mindie-motor-vllm ready") != std::string::npos);

  const auto dry = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "1", "--wait", "--dry-run=server"});
  CHECK(dry.exit_code == 1);
  CHECK(dry.err.find("--wait cannot be used with --dry-run") != std::string::npos);
}

TEST_CASE("deploy --wait that times out says which pods are not ready, after writing everything") {
  Cluster sb;
  e2e::TempDir dir;
  // decode's pods find no node: the scheduler says why.
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--overrides",
                              unschedulable(dir, "decode"), "--skip-node-check", "--wait", "--timeout", "5s"});
  CHECK(run.exit_code == 1);
  CHECK(run.out.find("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm serverside-applied") !=
        std::string::npos);
  CHECK(run.err.find("unschedulable: 0/") != std::string::npos);
}

TEST_CASE("status --watch prints each change and survives dropped connections and 410 Expired") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  Background watch(sb.mindie_argv({"status", "-n", "mindie-demo", "--watch"}));
  watch.wait_for_output("every desired pod exists and is ready");

  set_state(sb, "prefill", "CrashLoopBackOff");
  watch.wait_for_output("not ready: pod mindie-motor-vllm-0-prefill-0");

  // A dropped connection: the watches come back from their last resourceVersion and see the next change.
  const std::size_t before_drop = sb.requests().size();
  sb.close_watches();
  set_state(sb, "prefill", "Ready");
  // The summary line leads each change; "ready=true" can only follow the recovery (the pods' watch had to be
  // re-established to see it).
  watch.wait_for_output("ready=true");
  CHECK(count_path(sb.requests_since(before_drop), "watch=") >= 1);

  // History compacted, then dropped: the re-watch gets 410 Expired, the client lists again and goes on.
  const std::size_t before_compact = sb.requests().size();
  sb.compact();
  sb.close_watches();
  set_state(sb, "decode", "OOMKilled");
  watch.wait_for_output("out of memory");
  std::size_t relists = 0;
  for (const auto& r : sb.requests_since(before_compact))
    relists += r.path == "/api/v1/namespaces/mindie-demo/pods" && r.query.find("watch=") == std::string::npos;
  CHECK(relists >= 1);
  const auto run = watch.stop();
  CHECK(run.err.find("error") == std::string::npos);
}

// Issue 33: a drift line flashed in status --watch during a normal scale, between its InferServiceSet patch and its
// baseline write. The baseline write is held there: the watch must say the scale is under way, never drift.
TEST_CASE("status --watch during a scale: converging while the scale runs, never a drift line") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  Background watch(sb.mindie_argv({"status", "-n", "mindie-demo", "--watch"}));
  watch.wait_for_output("every desired pod exists and is ready");
  sb.add_fault("PATCH:" + e2e::kExampleConfigMapPath + ":hold:1");
  Background scale(sb.mindie_argv({"scale", "-n", "mindie-demo", "--prefill", "2"}));
  sb.wait_held(1);  // the InferServiceSet says 2, the baseline still 1
  watch.wait_for_output("converging: role prefill: kubectl-mindie scale is changing it from 1 to 2 instances");
  sb.release_held();
  const auto scaled = scale.finish();
  REQUIRE_MESSAGE(scaled.exit_code == 0, scaled.err);
  watch.wait_for_output("resolved: converging: role prefill: kubectl-mindie scale is changing it");
  const auto run = watch.stop();
  CHECK_MESSAGE(run.out.find("drift: ") == std::string::npos, run.out);
}

TEST_CASE("status --watch during a redeploy that changes counts: converging while it runs, never a drift line") {
  // Issue 33: only scale's and rollout's intents counted as converging, so a redeploy flashed drift.
  Cluster sb;
  e2e::TempDir dir;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["p_instances_num"] = 2;
  dir.write("user_config.json", cfg.dump(2));
  dir.write("env.json", e2e::read_file(kExampleDir + "/env.json"));
  Background watch(sb.mindie_argv({"status", "-n", "mindie-demo", "--watch"}));
  watch.wait_for_output("every desired pod exists and is ready");
  // The InferServiceSet's apply (AFTER 1: its server dry run comes first) is held: the baseline says 2, it still 1.
  sb.add_fault("PATCH:/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/inferservicesets/.*:hold:1:1");
  Background redeploy(sb.mindie_argv({"deploy", "--config-dir", dir.path(), "--scripts-dir", kScripts}));
  sb.wait_held(1);
  watch.wait_for_output("converging: role prefill: kubectl-mindie deploy is changing it from 1 to 2 instances");
  sb.release_held();
  const auto deployed = redeploy.finish();
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  watch.wait_for_output("resolved: converging: role prefill: kubectl-mindie deploy is changing it");
  const auto run = watch.stop();
  CHECK_MESSAGE(run.out.find("drift: ") == std::string::npos, run.out);
}

TEST_CASE("status -o json --watch writes each document whole as it happens (a pipe is not a terminal)") {
  Cluster sb;
  deploy_example(sb);
  sb.wait_ready("mindie-demo");
  Background watch(sb.mindie_argv({"status", "-n", "mindie-demo", "-o", "json", "--watch"}));
  // The key closing the first document: visible only if the output was flushed after it.
  watch.wait_for_output("\"unready\"");
  set_state(sb, "decode", "NotReady");
  watch.wait_for_output("readiness probe failing");
  watch.stop();
}

TEST_CASE("wait --timeout bounds a request that hangs (issue 17: it never returned while a LIST hung)") {
  Cluster sb;
  deploy_example(sb);
  sb.add_fault("GET:/api/v1/namespaces/mindie-demo/pods.*:hang");
  const auto run = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "--timeout", "3s"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: timed out waiting for the condition (--timeout 3s): no answer to GET "
                             "/api/v1/namespaces/mindie-demo/pods in time") != std::string::npos,
                run.err);
}

TEST_CASE("Ctrl-C during scale --wait says the scale itself is done and how to wait again, exit 130") {
  Cluster sb;
  // Prefill's new instance is never scheduled, so the wait cannot end by itself.
  e2e::TempDir dir;
  deploy_example(sb, {"--overrides", unschedulable(dir, "prefill"), "--skip-node-check"});
  Background scale(sb.mindie_argv(
      {"scale", "-n", "mindie-demo", "--prefill", "2", "--skip-node-check", "--wait", "--timeout", "10m"}));
  scale.wait_for_output("scaled");
  scale.signal(SIGINT);
  const auto run = scale.finish();
  CHECK(run.exit_code == 130);
  CHECK_MESSAGE(run.err.find("error: interrupted by SIGINT while waiting for the deployment in namespace mindie-demo "
                             "to be ready: the change itself is done") != std::string::npos,
                run.err);
  CHECK(run.err.find("kubectl mindie wait -n mindie-demo --for=ready") != std::string::npos);
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, "mindie-demo", why), why);
}
