// Two scales of the same service started together. Whether they overlap is up to the scheduler, so the assertions
// hold either way: at least one succeeds, every loser names the conflict it lost, and the final baseline equals
// the final live replicas — the guarded patches and the baseline's resourceVersion precondition never let one
// process blind-overwrite the other.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

TEST_CASE("two concurrent scales of one service: one wins, a loser names the conflict, baseline equals live") {
  // Several rounds raise the odds that one of them overlaps; each round is judged on its own.
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    Cluster sb;
    const auto deployed = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
    REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);

    const auto runs = e2e::run_processes({sb.mindie_argv({"scale", "-n", "mindie-demo", "--prefill", "2"}),
                                          sb.mindie_argv({"scale", "-n", "mindie-demo", "--prefill", "3"})});
    int winners = 0;
    for (const auto& run : runs) {
      if (run.exit_code == 0) {
        ++winners;
        continue;
      }
      // A loser lost a race on a precondition: the baseline's resourceVersion (409 Conflict), the live replicas its
      // test op expected (the InferServiceSet "changed since it was read"), or the baseline's counts it re-read
      // before retrying.
      const bool conflict = run.err.find("Conflict") != std::string::npos ||
                            run.err.find("changed since it was read") != std::string::npos ||
                            run.err.find("at the same time") != std::string::npos;
      CHECK_MESSAGE(conflict, run.err);
    }
    CHECK(winners >= 1);

    std::string why;
    CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, "mindie-demo", why), why);
    const auto status = sb.mindie({"status", "-n", "mindie-demo", "-o", "json"});
    REQUIRE(status.exit_code == 0);
    const json report = json::parse(status.out);
    for (const auto& role : report["roles"]) {
      if (role["name"] != "prefill") continue;
      // The winner's count (or the later one's, when both ran in turn).
      CHECK((role["baselineInstances"] == 2 || role["baselineInstances"] == 3));
    }
  }
}
