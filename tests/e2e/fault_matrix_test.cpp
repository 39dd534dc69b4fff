// The fault matrix: deploy, scale and update-config, each with every one of its requests failed in every way the
// fault proxy in front of the real API server can fail one (500, 503, 429 with Retry-After, a hang past the
// client's timeout, a dropped connection, 409). After each run, either the command succeeded (a retry hid the
// fault), or it failed and the baseline agrees with the live InferServiceSet, or its message names the command that
// recovers. (A lost reply, the proxy's lose-reply, belongs with the crash-safety work of the commands: not yet here.)
//
// Runtime: 84 cells (14 request positions x 6 fault kinds), each with fresh namespaces (mindie-test-reset, about a
// second) plus the commands; the hang cells cost the client's 1 s --request-timeout plus one backoff, the 429 cells
// the Retry-After of 1 s: 197 s in all on two cores against the local cluster. Not run again under the sanitizers.
#include <doctest/doctest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

using e2e::Cluster;
using e2e::kExample;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string kNamespace = "mindie-demo";

struct FaultKind {
  std::string spec;   ///< the KIND field of --fault
  int logged_status;  ///< what the proxy's request log records for the failed request
  bool transient;     ///< a retry of a request that is safe to repeat must hide it
};

const std::vector<FaultKind> kKinds = {
    {"500", 500, true},
    {"503", 503, true},
    {"429", 429, true},
    // A hang takes the whole --request-timeout, which bounds a request with its retries (client-go's request
    // timeout does the same): it fails the command, truthfully.
    {"hang", 0, false},
    {"drop", 0, true},
    {"409", 409, false},
};

struct Command {
  std::string name;
  bool deploy_first;              ///< runs against a deployed example
  std::vector<std::string> args;  ///< the command under test
};

// A user_config.json equal to the example except for a setting update-config may change.
std::string debug_log_config(const e2e::TempDir& dir) {
  json cfg = json::parse(e2e::read_file(kExampleDir + "/user_config.json"));
  cfg["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
  return dir.write("user_config.json", cfg.dump(2));
}

// The setup of a cell; returns the number of requests it sent.
std::size_t setup(const Cluster& sb, const Command& c) {
  if (!c.deploy_first) return 0;
  const auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kExampleDir + "/scripts"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return sb.requests().size();
}

std::vector<std::string> with_timeout(std::vector<std::string> args, const FaultKind& kind) {
  // A hang is only noticed through the timeout; elsewhere the timeout only guards the test against a stuck run.
  args.insert(args.end(), {"--request-timeout", kind.spec == "hang" ? "1" : "10"});
  return args;
}

}  // namespace

TEST_CASE("fault matrix: every request of deploy, scale and update-config failed every way leaves a truthful state") {
  e2e::TempDir dir;
  const std::vector<Command> commands = {
      {"deploy", false, {"deploy", "--config-dir", kExampleDir, "--scripts-dir", kExampleDir + "/scripts"}},
      {"scale", true, {"scale", "-n", kNamespace, "--prefill", "2", "--decode", "2"}},
      {"update-config", true, {"update-config", "-f", debug_log_config(dir)}},
  };

  std::size_t cells = 0, hidden = 0, consistent_failures = 0, recovery_named = 0;
  std::ostringstream table;
  for (const auto& command : commands) {
    // A clean run gives the command's requests, in order: the positions to fail.
    std::vector<e2e::LoggedRequest> clean;
    std::size_t setup_requests = 0;
    {
      Cluster sb;
      setup_requests = setup(sb, command);
      const auto run = sb.mindie(command.args);
      REQUIRE_MESSAGE(run.exit_code == 0, command.name << ": " << run.err);
      clean = sb.requests_since(setup_requests);
      REQUIRE_FALSE(clean.empty());
    }

    for (std::size_t pos = 0; pos < clean.size(); ++pos) {
      for (const auto& kind : kKinds) {
        CAPTURE(command.name);
        CAPTURE(pos);
        CAPTURE(clean[pos].method + " " + clean[pos].path);
        CAPTURE(kind.spec);
        ++cells;
        // Request ordinal setup_requests + pos of the proxy's life, whatever its method and path, fails once.
        Cluster sb({"--fault", "*:.*:" + kind.spec + ":1:" + std::to_string(setup_requests + pos)});
        REQUIRE(setup(sb, command) == setup_requests);
        const auto run = sb.mindie(with_timeout(command.args, kind));

        // The fault hit the request it was meant for.
        const auto reqs = sb.requests_since(setup_requests);
        REQUIRE(reqs.size() > pos);
        CHECK(reqs[pos].method == clean[pos].method);
        CHECK(reqs[pos].path == clean[pos].path);
        CHECK(reqs[pos].status == kind.logged_status);

        std::string why;
        const bool agrees = e2e::baseline_agrees_with_live(sb, kNamespace, why);
        const bool names_recovery = run.err.find("kubectl mindie ") != std::string::npos;
        std::string outcome;
        if (run.exit_code == 0) {
          ++hidden;
          outcome = "ok after " + std::to_string(reqs.size() - clean.size()) + " extra request(s)";
          CHECK_MESSAGE(agrees, why);
        } else if (agrees) {
          ++consistent_failures;
          outcome = "failed, baseline agrees with live";
        } else {
          ++recovery_named;
          outcome = "failed, recovery named";
          CHECK_MESSAGE(names_recovery, "baseline and live disagree (" << why << ") and stderr names no recovery:\n"
                                                                       << run.err);
        }
        if (run.exit_code != 0) {
          // Whatever failed, the message carries the server's answer or the connection failure.
          CHECK_MESSAGE((run.err.find("Error from server") != std::string::npos ||
                         run.err.find("Unable to connect") != std::string::npos),
                        run.err);
        }
        // Every request of these commands is safe to repeat, so a transient fault must not fail them.
        if (kind.transient) CHECK_MESSAGE(run.exit_code == 0, run.err);
        table << command.name << " #" << pos << ' ' << clean[pos].method << ' ' << clean[pos].path << " [" << kind.spec
              << "]: " << outcome << '\n';
      }
    }
  }
  std::cout << table.str() << "fault matrix: " << cells << " cells (" << hidden << " hidden by retries, "
            << consistent_failures << " failed consistently, " << recovery_named << " failed naming the recovery)\n";
  // deploy: discovery, the rights check (the namespace's rules review, one access review of "*" cluster-wide),
  // baseline read, Service list (nodePort check), 3 nodePort claim reads, Node and Pod lists (node preflight),
  // 3 claims, 7 applies; scale: 2 reads, Node and Pod lists, the rules review, 2 patches; update-config: 1 read,
  // 1 patch; each then its revision (a ControllerRevision list and apply), and each reads, takes and frees the
  // namespace lock.
  CHECK(cells == (22 + 9 + 4 + 3 * 3) * kKinds.size());
}
