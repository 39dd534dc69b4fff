// Crash and interrupt safety of scale, deploy, update-config and delete on the real control plane (issue 17): the
// command is stopped with SIGKILL, SIGINT or two SIGINTs while one of its requests is held by the fault proxy (before
// the server sees it, or after the server applied it with the reply held back), then the next command must leave the
// baseline and the live workload agreeing and say truly what it did about the interrupted change.
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const std::string kNs = e2e::kExampleNamespace;
const std::string kBaselineWrite = "PATCH:/api/v1/namespaces/" + kNs + "/configmaps/motor-config";
const std::string kWorkloadWrite = "PATCH:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";
const std::string kLeaseWrite = "PATCH:/apis/coordination.k8s.io/v1/namespaces/" + kNs + "/leases/kubectl-mindie";

void deploy(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// The baseline's instance count of `role` (status -o json).
int baseline_count(const Cluster& sb, const std::string& role) {
  const auto status = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(status.exit_code == 0, status.err);
  const json report = json::parse(status.out);
  for (const auto& r : report.at("roles"))
    if (r["name"] == role) return r["baselineInstances"].get<int>();
  return -1;
}

/// The lock Lease's annotations.
json lease_annotations(const Cluster& sb) {
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  return lease["metadata"].value("annotations", json::object());
}

void check_agrees(const Cluster& sb) {
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

/// The example's user_config.json with `prefill` prefill instances, in `dir`.
std::string example_with_prefill(const e2e::TempDir& dir, int prefill) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["p_instances_num"] = prefill;
  return dir.write("user_config.json", cfg.dump(2));
}

/// deploy's arguments for `file` (the example's env.json and scripts).
std::vector<std::string> deploy_args(const std::string& file) {
  // --prune: these deploys set counts that may be below the live ones (a scale's, raced or interrupted).
  return {"deploy", "-f", file, "-e", e2e::kExampleDir + "/env.json", "--scripts-dir", e2e::kScripts, "--prune"};
}

const std::string kDeleteWorkload = "DELETE:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";
const std::string kDeleteBaseline = "DELETE:/api/v1/namespaces/" + kNs + "/configmaps/motor-config";

}  // namespace

TEST_CASE("crash: scale killed (SIGKILL) at each request position; the next command recovers and says how") {
  // Each position holds one request of the scale when it is killed: before the server sees it (hold: a held request
  // whose client is gone is dropped, never forwarded) or after the server applied it (hold-reply). The lock's take
  // comes before both writes (the intent is recorded by it), its release after.
  struct Position {
    std::string fault;    // the request held
    std::string outcome;  // the recovery line's ending
    int prefill;          // the baseline's (and the workload's) prefill count afterwards
  };
  const std::vector<Position> positions = {
      {kWorkloadWrite + ":hold:1", "prefill 1 \u2192 2, dropped: nothing of it had been applied", 1},
      {kWorkloadWrite + ":hold-reply:1", "prefill 1 \u2192 2, completed", 2},
      {kBaselineWrite + ":hold:1", "prefill 1 \u2192 2, completed", 2},
      {kBaselineWrite + ":hold-reply:1", "prefill 1 \u2192 2, completed", 2},
      {kLeaseWrite + ":hold:1:1", "prefill 1 \u2192 2, completed", 2},  // the release, after both writes
  };
  for (const auto& p : positions) {
    CAPTURE(p.fault);
    Cluster sb;
    deploy(sb);
    sb.add_fault(p.fault);
    e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
    sb.wait_held(1);
    scale.signal(SIGKILL);
    const auto killed = scale.finish();
    CHECK(killed.exit_code == 128 + SIGKILL);
    REQUIRE(lease_annotations(sb).contains("kubectl-mindie/intent"));  // the intent outlives the process

    // The next command (another role's scale) recovers first, then does its own work.
    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    REQUIRE_MESSAGE(next.exit_code == 0, next.err);
    CHECK_MESSAGE(next.err.find("recovered an interrupted scale from ") != std::string::npos, next.err);
    CHECK_MESSAGE(next.err.find(p.outcome) != std::string::npos, next.err);
    CHECK(next.err.find("whose process on this host is gone") != std::string::npos);
    CHECK(baseline_count(sb, "prefill") == p.prefill);
    CHECK(baseline_count(sb, "decode") == 2);
    CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
    check_agrees(sb);
  }
}

TEST_CASE("interrupt: SIGINT, SIGTERM or SIGHUP while the workload patch is under way undoes it, exit 128 + signal") {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(sig);
    Cluster sb;
    deploy(sb);
    sb.add_fault(kWorkloadWrite + ":hold:1");
    e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "3"}));
    sb.wait_held(1);
    scale.signal(sig);
    scale.wait_for_error("interrupt again to leave at once");
    sb.release_held();  // the patch reaches the server; the command then stops before the baseline write
    const auto run = scale.finish();
    CHECK(run.exit_code == 128 + sig);
    CHECK_MESSAGE(run.err.find("error: interrupted by SIG") != std::string::npos, run.err);
    CHECK(run.err.find("so the scale was undone") != std::string::npos);
    CHECK(baseline_count(sb, "prefill") == 1);
    CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));  // settled: nothing to recover
    check_agrees(sb);
  }
}

TEST_CASE("interrupt: a second Ctrl-C leaves at once with the intent recorded; the next command recovers") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kBaselineWrite + ":hold:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  scale.signal(SIGINT);
  scale.wait_for_error("interrupt again to leave at once");
  scale.signal(SIGINT);
  const auto run = scale.finish();
  CHECK(run.exit_code == 130);
  CHECK_MESSAGE(run.err.find("left at once") != std::string::npos, run.err);
  REQUIRE(lease_annotations(sb).contains("kubectl-mindie/intent"));
  const auto status = sb.mindie({"status", "-n", kNs});
  CHECK_MESSAGE(status.out.find("unfinished scale") != std::string::npos, status.out);

  const auto next = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("prefill 1 \u2192 2, completed") != std::string::npos, next.err);
  CHECK(baseline_count(sb, "prefill") == 2);
  check_agrees(sb);
}

TEST_CASE("crash: deploy killed (SIGKILL) at each request position; the next command recovers and says how") {
  // A redeploy from prefill 1 to 2. Its writes: motor-config (the baseline) first, the RBAC, the InferServiceSet
  // (after a server dry run of it, before the lock's take: AFTER 1 skips that one), the lock's release.
  struct Position {
    std::string fault;
    std::string outcome;
    int prefill;
  };
  const std::vector<Position> positions = {
      {kBaselineWrite + ":hold:1", "prefill 1 \u2192 2, dropped: the baseline had not been written", 1},
      {kBaselineWrite + ":hold-reply:1",
       "prefill 1 \u2192 2, completed: the workload was applied from the baseline "
       "it had written",
       2},
      // The controller's RBAC, between the baseline and the workload.
      {"PATCH:/api/v1/namespaces/" + kNs + "/serviceaccounts/.*:hold:1", "prefill 1 \u2192 2, completed", 2},
      {"PATCH:/apis/rbac.authorization.k8s.io/v1/clusterroles/.*:hold:1", "prefill 1 \u2192 2, completed", 2},
      {"PATCH:/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/.*:hold-reply:1", "prefill 1 \u2192 2, completed",
       2},
      {kWorkloadWrite + ":hold:1:1", "prefill 1 \u2192 2, completed", 2},
      {kWorkloadWrite + ":hold-reply:1:1", "prefill 1 \u2192 2, completed", 2},
      {kLeaseWrite + ":hold:1:1", "prefill 1 \u2192 2, completed", 2},
  };
  for (const auto& p : positions) {
    CAPTURE(p.fault);
    Cluster sb;
    deploy(sb);
    e2e::TempDir dir;
    const std::string file = example_with_prefill(dir, 2);
    sb.add_fault(p.fault);
    e2e::Background run(sb.mindie_argv(deploy_args(file)));
    sb.wait_held(1);
    run.signal(SIGKILL);
    CHECK(run.finish().exit_code == 128 + SIGKILL);
    REQUIRE(lease_annotations(sb).contains("kubectl-mindie/intent"));
    const auto status = sb.mindie({"status", "-n", kNs});
    CHECK_MESSAGE(status.out.find("unfinished deploy") != std::string::npos, status.out);

    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    REQUIRE_MESSAGE(next.exit_code == 0, next.err);
    CHECK_MESSAGE(next.err.find("recovered an interrupted deploy from ") != std::string::npos, next.err);
    CHECK_MESSAGE(next.err.find(p.outcome) != std::string::npos, next.err);
    CHECK(baseline_count(sb, "prefill") == p.prefill);
    CHECK(baseline_count(sb, "decode") == 2);
    CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
    check_agrees(sb);
  }
}

TEST_CASE("crash: a first deploy killed before or after its baseline write; the next command drops or completes it") {
  for (const bool applied : {false, true}) {
    CAPTURE(applied);
    Cluster sb;
    sb.add_fault(kBaselineWrite + (applied ? ":hold-reply:1" : ":hold:1"));
    e2e::Background run(sb.mindie_argv({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts}));
    sb.wait_held(1);
    run.signal(SIGKILL);
    run.finish();
    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    CHECK_MESSAGE(next.err.find(applied ? "completed: the workload was applied from the baseline it had written"
                                        : "dropped: nothing of it had been written") != std::string::npos,
                  next.err);
    if (applied) {
      CHECK_MESSAGE(next.exit_code == 0, next.err);
      CHECK(baseline_count(sb, "decode") == 2);
    } else {
      CHECK(next.exit_code == 1);  // nothing was deployed: the scale finds no deployment
      CHECK_MESSAGE(next.err.find("configmap/motor-config") != std::string::npos, next.err);
    }
    check_agrees(sb);
  }
}

TEST_CASE("deploy supersedes an interrupted deploy instead of recovering it first") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const std::string file = example_with_prefill(dir, 2);
  sb.add_fault(kBaselineWrite + ":hold-reply:1");
  e2e::Background run(sb.mindie_argv(deploy_args(file)));
  sb.wait_held(1);
  run.signal(SIGKILL);
  run.finish();

  const std::string file3 = example_with_prefill(dir, 3);
  const auto next = sb.mindie(deploy_args(file3));
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("found an interrupted deploy from ") != std::string::npos, next.err);
  CHECK(next.err.find("this deploy supersedes it") != std::string::npos);
  CHECK(next.err.find("recovered") == std::string::npos);
  CHECK(baseline_count(sb, "prefill") == 3);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
  check_agrees(sb);
}

TEST_CASE(
    "deploy whose workload is refused after the baseline was written leaves its intent; the next command "
    "applies the workload from the baseline") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const std::string file = example_with_prefill(dir, 2);
  sb.add_fault(kWorkloadWrite + ":422:1:1");  // the real apply, after the server dry run
  const auto run = sb.mindie(deploy_args(file));
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("the next kubectl-mindie command in namespace " + kNs +
                             " applies the workload from the baseline first") != std::string::npos,
                run.err);
  REQUIRE(lease_annotations(sb).contains("kubectl-mindie/intent"));

  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("completed: the workload was applied from the baseline it had written") !=
                    std::string::npos,
                next.err);
  CHECK(baseline_count(sb, "prefill") == 2);
  check_agrees(sb);
}

TEST_CASE("deploy's baseline write carries the resourceVersion it read: a change made meanwhile is not overwritten") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const std::string file = example_with_prefill(dir, 2);
  sb.add_fault(kBaselineWrite + ":hold:1");
  e2e::Background run(sb.mindie_argv(deploy_args(file)));
  sb.wait_held(1);
  sb.admin_ok({"annotate", "configmap", "motor-config", "-n", kNs, "someone/edited=yes"});  // outside the lock
  sb.release_held();
  const auto out = run.finish();
  CHECK(out.exit_code == 1);
  CHECK_MESSAGE(out.err.find("was changed by someone else since this deploy read it") != std::string::npos, out.err);
  CHECK(out.err.find("the baseline was not written") != std::string::npos);
  CHECK(baseline_count(sb, "prefill") == 1);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));  // nothing to recover
  check_agrees(sb);
}

TEST_CASE("deploy: a baseline write applied whose reply was lost is recognised on the retry's conflict") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const std::string file = example_with_prefill(dir, 2);
  sb.add_fault(kBaselineWrite + ":lose-reply:1");
  const auto run = sb.mindie(deploy_args(file));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(baseline_count(sb, "prefill") == 2);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
  check_agrees(sb);
}

TEST_CASE("crash: delete killed at its first and last deletes; the next command finishes it and says so") {
  struct Position {
    std::string fault;
    std::string outcome;
    bool deleted;  // anything was deleted before the kill
  };
  const std::vector<Position> positions = {
      // Killed while its first delete is held: nothing was deleted, so the next command must not delete anything.
      {kDeleteWorkload + ":hold:1", "dropped: nothing of it had been deleted", false},
      {"DELETE:/api/v1/namespaces/" + kNs + "/serviceaccounts/.*:hold:1",
       "finished, deleted what was left of the deployment (", true},
      {kDeleteBaseline + ":hold:1", "finished, deleted what was left of the deployment (", true},
      {kDeleteBaseline + ":hold-reply:1", "nothing was left to delete", true},
  };
  for (const auto& p : positions) {
    CAPTURE(p.fault);
    Cluster sb;
    deploy(sb);
    sb.add_fault(p.fault);
    e2e::Background run(sb.mindie_argv({"delete", "-n", kNs}));
    sb.wait_held(1);
    run.signal(SIGKILL);
    run.finish();
    REQUIRE(lease_annotations(sb).contains("kubectl-mindie/intent"));
    // A scale recovers it first (a delete that began cannot be reverted), then finds nothing to scale.
    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    CHECK_MESSAGE(next.err.find("recovered an interrupted delete from ") != std::string::npos, next.err);
    CHECK_MESSAGE(next.err.find(p.outcome) != std::string::npos, next.err);
    if (!p.deleted) {
      CHECK_MESSAGE(next.exit_code == 0, next.err);
      CHECK(baseline_count(sb, "decode") == 2);
      check_agrees(sb);
      continue;
    }
    CHECK(next.exit_code == 1);
    CHECK(next.err.find("no deployment found in namespace " + kNs) != std::string::npos);
    CHECK(sb.admin({"get", "configmap", "motor-config", "-n", kNs}).exit_code != 0);
    CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).empty());
    CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
    // A delete then removes the Lease too.
    const auto done = sb.mindie({"delete", "-n", kNs});
    CHECK_MESSAGE(done.exit_code == 0, done.err);
    CHECK(sb.admin({"get", "lease", "kubectl-mindie", "-n", kNs}).exit_code != 0);
  }
}

TEST_CASE(
    "interrupt: SIGINT during a delete stops before the next delete, says what was deleted and that the next "
    "command finishes it") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kDeleteWorkload + ":hold:1");
  e2e::Background run(sb.mindie_argv({"delete", "-n", kNs}));
  sb.wait_held(1);
  run.signal(SIGINT);
  run.wait_for_error("interrupt again to leave at once");
  sb.release_held();
  const auto out = run.finish();
  CHECK(out.exit_code == 130);
  CHECK_MESSAGE(out.err.find("delete stopped at ") != std::string::npos, out.err);
  CHECK_MESSAGE(out.err.find("after writing:\n  inferserviceset.mindcluster.huawei.com/") != std::string::npos,
                out.err);
  CHECK(out.err.find("the next kubectl-mindie command in namespace " + kNs + " finishes it") != std::string::npos);
  // Another delete supersedes it: it deletes whatever is left.
  const auto next = sb.mindie({"delete", "-n", kNs});
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("found an interrupted delete from ") != std::string::npos, next.err);
  CHECK(next.err.find("this delete supersedes it") != std::string::npos);
  CHECK(sb.admin({"get", "configmap", "motor-config", "-n", kNs}).exit_code != 0);
  CHECK(sb.admin({"get", "lease", "kubectl-mindie", "-n", kNs}).exit_code != 0);
}

TEST_CASE(
    "crash: update-config killed before or after its one write leaves the old or the new baseline whole, and "
    "the next command records the revision it owes") {
  for (const bool applied : {false, true}) {
    CAPTURE(applied);
    Cluster sb;
    deploy(sb);
    e2e::TempDir dir;
    json cfg = json::parse(e2e::read_file(e2e::kExample));
    cfg["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
    const auto file = dir.write("user_config.json", cfg.dump(2));
    sb.add_fault(kBaselineWrite + (applied ? ":hold-reply:1" : ":hold:1"));
    e2e::Background run(sb.mindie_argv({"update-config", "-f", file}));
    sb.wait_held(1);
    run.signal(SIGKILL);
    run.finish();
    // One compare-and-swap write, then the baseline's revision: the intent stands for the revision.
    CHECK(lease_annotations(sb).contains("kubectl-mindie/intent"));
    const json cm = json::parse(sb.admin_ok({"get", "configmap", "motor-config", "-n", kNs, "-o", "json"}));
    const std::string stored = cm["data"]["user_config.json"];
    CHECK(stored == (applied ? cfg.dump(2) : e2e::read_file(e2e::kExample)));
    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    REQUIRE_MESSAGE(next.exit_code == 0, next.err);
    // Killed after the write: its revision is missing and recorded now (the scale's is 3); before it: none is owed.
    CHECK_MESSAGE(next.err.find("recovered an interrupted update-config") != std::string::npos, next.err);
    CHECK_MESSAGE((next.err.find("revision 2 recorded") != std::string::npos) == applied, next.err);
    check_agrees(sb);
  }
}

TEST_CASE("crash: a redeploy that changes the image, killed after its baseline write, is completed template and all") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["image_name"] = "registry.example/mindie:2.0";
  const std::string file = dir.write("user_config.json", cfg.dump(2));
  sb.add_fault(kBaselineWrite + ":hold-reply:1");
  e2e::Background run(sb.mindie_argv(deploy_args(file)));
  sb.wait_held(1);
  run.signal(SIGKILL);
  run.finish();
  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("completed: the workload was applied from the baseline it had written") !=
                    std::string::npos,
                next.err);
  const json iss = e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).at(0);
  for (const auto& role : iss["spec"]["template"]["roles"]) {
    CAPTURE(role["name"].get<std::string>());
    CHECK(role["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/mindie:2.0");
  }
}

TEST_CASE("a deploy that supersedes an interrupted scale but writes nothing puts the scale's intent back") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":hold-reply:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  scale.signal(SIGKILL);
  scale.finish();

  sb.add_fault(kBaselineWrite + ":422:1");  // the deploy's first write is refused
  // --prune: the interrupted scale's workload write had raised prefill above the file's count.
  const auto refused =
      sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts, "--prune"});
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(refused.err.find("this deploy supersedes it") != std::string::npos, refused.err);
  const json left = json::parse(lease_annotations(sb).at("kubectl-mindie/intent").get<std::string>());
  CHECK(left["command"] == "scale");  // put back: the scale is still to be put right

  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("recovered an interrupted scale from ") != std::string::npos, next.err);
  CHECK(next.err.find("prefill 1 \u2192 2, completed") != std::string::npos);
  CHECK(baseline_count(sb, "prefill") == 2);
  check_agrees(sb);
}

TEST_CASE("delete supersedes an interrupted scale: it deletes everything, Lease included") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":hold-reply:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  scale.signal(SIGKILL);
  scale.finish();
  const auto run = sb.mindie({"delete", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("found an interrupted scale from ") != std::string::npos, run.err);
  CHECK(run.err.find("this delete supersedes it (it deletes the whole deployment)") != std::string::npos);
  CHECK(sb.admin({"get", "configmap", "motor-config", "-n", kNs}).exit_code != 0);
  CHECK(sb.admin({"get", "lease", "kubectl-mindie", "-n", kNs}).exit_code != 0);
}

TEST_CASE(
    "interrupt: SIGINT or SIGTERM while deploy writes its RBAC stops it before its next write; the next "
    "command completes it") {
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    Cluster sb;
    deploy(sb);
    e2e::TempDir dir;
    const std::string file = example_with_prefill(dir, 2);
    // The ServiceAccount comes after motor-config and before the cluster RBAC and the InferServiceSet.
    sb.add_fault("PATCH:/api/v1/namespaces/" + kNs + "/serviceaccounts/.*:hold:1");
    e2e::Background run(sb.mindie_argv(deploy_args(file)));
    sb.wait_held(1);
    run.signal(sig);
    run.wait_for_error("interrupt again to leave at once");
    sb.release_held();  // the apply reaches the server; the deploy stops before its next write
    const auto out = run.finish();
    CHECK(out.exit_code == 128 + sig);
    CHECK_MESSAGE(out.err.find("interrupted by SIG") != std::string::npos, out.err);
    CHECK(out.err.find("deploy stopped at clusterrole.rbac.authorization.k8s.io/") != std::string::npos);
    CHECK(out.err.find("after writing:\n  configmap/motor-config serverside-applied\n  serviceaccount/") !=
          std::string::npos);
    CHECK(out.err.find("the next kubectl-mindie command in namespace " + kNs +
                       " applies the workload from the "
                       "baseline first") != std::string::npos);
    const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
    REQUIRE_MESSAGE(next.exit_code == 0, next.err);
    CHECK_MESSAGE(next.err.find("recovered an interrupted deploy from ") != std::string::npos, next.err);
    CHECK(baseline_count(sb, "prefill") == 2);
    check_agrees(sb);
  }
}

TEST_CASE("a write stalled in the network is given up within the lock's bound, never landing after a takeover") {
  // A scale whose workload patch never gets through: with no --request-timeout it still gives up after
  // kLockRequestBound (30 s, shorter than the lease), the proxy drops the request of a client that left, and the
  // read back finds nothing applied. (A new-user trial held such a patch 62 s: it landed after the next command had
  // taken the lock over and dropped the scale's intent.)
  Cluster sb;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":hold:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "3"}));
  sb.wait_held(1);
  const auto run = scale.finish();
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("timed out") != std::string::npos, run.err);
  CHECK(baseline_count(sb, "prefill") == 1);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));  // read back: nothing was applied
  check_agrees(sb);
}
