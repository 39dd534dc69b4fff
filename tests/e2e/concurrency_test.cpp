// Concurrent scales of the same service. Every mutating command takes the namespace lock (a Lease) before its first
// write and waits for it up to --lock-timeout, so they take turns whatever the scheduler does: every one succeeds
// (a command that waited reads and plans again once it holds the lock), and the final baseline equals the final
// live replicas. The guarded patches and the baseline's resourceVersion precondition remain the second line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

TEST_CASE("concurrent scales of one service take turns through the namespace lock: all succeed, baseline equals live") {
  // Several rounds of five raise the odds that they overlap; each round is judged on its own.
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    Cluster sb;
    const auto deployed = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
    REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);

    std::vector<std::vector<std::string>> argvs;
    for (int n = 1; n <= 5; ++n) argvs.push_back(sb.mindie_argv({"scale", "-n", "mindie-demo", "--prefill", std::to_string(n)}));
    const auto runs = e2e::run_processes(argvs);
    for (const auto& run : runs) CHECK_MESSAGE(run.exit_code == 0, run.err);

    std::string why;
    CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, "mindie-demo", why), why);
    const auto status = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
    REQUIRE(status.exit_code == 0);
    const json report = json::parse(status.out);
    for (const auto& role : report["roles"]) {
      if (role["name"] != "prefill") continue;
      CHECK(role["baselineInstances"] >= 1);  // the count of whichever took the lock last
      CHECK(role["baselineInstances"] <= 5);
    }
  }
}
