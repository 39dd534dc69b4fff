// Crash and interrupt safety of scale on the real control plane (issue 17): the command is stopped with SIGKILL,
// SIGINT or two SIGINTs while one of its requests is held by the fault proxy (before the server sees it, or after
// the server applied it with the reply held back), then the next command must leave the baseline and the live
// workload agreeing and say truly what it did about the interrupted change.
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
