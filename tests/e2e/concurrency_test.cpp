// Concurrent mutating commands on one deployment (issue 17's storm). Every mutating command takes the namespace lock
// (a Lease) before its first write and waits for it up to --lock-timeout, so they take turns whatever the scheduler
// does: every one succeeds (a command that waited reads and plans again once it holds the lock), nothing is lost,
// and after each round the baseline equals the live workload and equals what the last baseline write (in the API
// server's order, from the fault proxy's log) said. The guarded patches and the baseline's resourceVersion
// precondition remain the second line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const std::string kNs = e2e::kExampleNamespace;

/// The instance counts of a user_config.json text.
std::pair<int, int> counts_of(const std::string& user_config) {
  const json c = json::parse(user_config);
  return {c["motor_deploy_config"]["p_instances_num"].get<int>(),
          c["motor_deploy_config"]["d_instances_num"].get<int>()};
}

/// The counts the last successful write of motor-config's user_config.json among `reqs` stored (a scale's merge
/// patch or a deploy's apply; both send JSON), nullopt when none wrote it.
std::optional<std::pair<int, int>> last_baseline_write(const std::vector<e2e::LoggedRequest>& reqs) {
  std::optional<std::pair<int, int>> last;
  for (const auto& r : reqs) {
    if (r.method != "PATCH" || r.path != e2e::kExampleConfigMapPath || r.status != 200) continue;
    if (r.query.find("dryRun") != std::string::npos) continue;
    const json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded() || !body.contains("data") || !body["data"].contains("user_config.json")) continue;
    last = counts_of(body["data"]["user_config.json"].get<std::string>());
  }
  return last;
}

}  // namespace

TEST_CASE(
    "storm: 5 concurrent mutating commands (3 scales, 2 deploys) x 50 rounds take turns through the namespace "
    "lock; nothing is lost") {
  Cluster sb;
  const auto deployed = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["p_instances_num"] = 2;
  const std::string redeploy = dir.write("user_config.json", cfg.dump(2));
  cfg["motor_deploy_config"]["p_instances_num"] = 3;
  cfg["motor_deploy_config"]["d_instances_num"] = 2;
  const std::string redeploy3 = dir.write("user_config_3.json", cfg.dump(2));

  int inconsistent = 0;
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    const std::size_t mark = sb.requests().size();
    // Scales of prefill, decode and both, and two redeploys (prefill 2 / decode 1, prefill 3 / decode 2: two
    // deploys at once once left baseline and workload from different ones), in one burst; --prune, since a scale
    // may have raised the counts above a redeploy's.
    const std::vector<std::vector<std::string>> argvs = {
        sb.mindie_argv({"scale", "-n", kNs, "--prefill", std::to_string(1 + round % 3)}),
        sb.mindie_argv({"scale", "-n", kNs, "--decode", std::to_string(1 + round % 2)}),
        sb.mindie_argv({"deploy", "-f", redeploy, "-e", e2e::kExampleDir + "/env.json", "--scripts-dir", e2e::kScripts,
                        "--prune"}),
        sb.mindie_argv({"scale", "-n", kNs, "--prefill", std::to_string(1 + (round + 1) % 3), "--decode",
                        std::to_string(1 + (round + 1) % 2)}),
        sb.mindie_argv({"deploy", "-f", redeploy3, "-e", e2e::kExampleDir + "/env.json", "--scripts-dir", e2e::kScripts,
                        "--prune"}),
    };
    const auto runs = e2e::run_processes(argvs);
    for (const auto& run : runs) {
      CHECK_MESSAGE(run.exit_code == 0, run.err);
      CHECK_MESSAGE(run.err.find("recovered") == std::string::npos, run.err);  // nobody crashed
      CHECK_MESSAGE(!run.out.empty(), run.err);                                // each says what it did
    }
    std::string why;
    const bool agrees = e2e::baseline_agrees_with_live(sb, kNs, why);
    CHECK_MESSAGE(agrees, why);
    // The final baseline is the last one written: no command's write was overwritten by an older plan.
    const auto status = sb.mindie({"status", "-n", kNs, "-o", "json"});
    REQUIRE(status.exit_code == 0);
    const json report = json::parse(status.out);
    std::pair<int, int> now{-1, -1};
    for (const auto& role : report["roles"]) {
      if (role["name"] == "prefill") now.first = role["baselineInstances"].get<int>();
      if (role["name"] == "decode") now.second = role["baselineInstances"].get<int>();
    }
    const auto last = last_baseline_write(sb.requests_since(mark));
    if (last) CHECK(now == *last);
    if (!agrees || (last && now != *last)) ++inconsistent;
  }
  CHECK(inconsistent == 0);
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  CHECK_FALSE(lease["metadata"].value("annotations", json::object()).contains("kubectl-mindie/intent"));
}
