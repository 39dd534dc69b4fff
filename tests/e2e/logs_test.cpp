// kubectl mindie logs on the real control plane: KWOK serves every fake container's log (tests/cluster/cluster.sh:
// ClusterLogs over pod.log, the nodes' kubelet endpoint being KWOK's server), which the API server proxies as
// pods/log. Lines prefixed [role/instance/pod]; -f merges the streams, picks up a pod that starts later and says
// when one goes; more pods than --max-log-requests is refused before any stream opens.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

using e2e::Background;
using e2e::Cluster;

namespace {

void deploy(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready("mindie-demo");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

/// The names of the pods of `ns` matching `selector`.
std::vector<std::string> pod_names(const Cluster& sb, const std::string& selector) {
  return e2e::item_names(e2e::kubectl_items(sb, "pods", "mindie-demo", selector));
}

}  // namespace

TEST_CASE("logs: every pod's lines, each prefixed [role/instance/pod]; --role, --instance and --tail narrow them") {
  Cluster sb;
  deploy(sb);
  const auto pods = pod_names(sb, "");
  REQUIRE(pods.size() >= 4);  // controller, coordinator, prefill, decode

  auto run = sb.mindie({"logs", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto lines = lines_of(run.out);
  CHECK(lines.size() == 2 * pods.size());  // pod.log has two lines
  std::set<std::string> roles, named;
  for (const auto& l : lines) {
    REQUIRE_MESSAGE(l.rfind('[', 0) == 0, l);
    const std::string prefix = l.substr(1, l.find(']') - 1);  // role/instance/pod
    roles.insert(prefix.substr(0, prefix.find('/')));
    named.insert(prefix.substr(prefix.rfind('/') + 1));
    CHECK((l.ends_with("] kwok stand-in container: started") || l.ends_with("] kwok stand-in container: serving")));
  }
  CHECK(roles == std::set<std::string>{"controller", "coordinator", "decode", "prefill"});
  CHECK(named == std::set<std::string>(pods.begin(), pods.end()));

  run = sb.mindie({"logs", "-n", "mindie-demo", "--role", "prefill", "--instance", "0", "--tail", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto prefill = pod_names(sb, e2e::role_pods("prefill", 0));
  REQUIRE_FALSE(prefill.empty());
  CHECK(lines_of(run.out).size() == prefill.size());
  CHECK(run.out.rfind("[prefill/0/" + prefill.front() + "] kwok stand-in container: serving\n", 0) == 0);

  run = sb.mindie({"logs", "-n", "mindie-demo", "--instance", "0"});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "error: --instance needs --role (the instance's role)\n");
}

TEST_CASE("logs -f: more pods than --max-log-requests is refused before any stream opens") {
  Cluster sb;
  deploy(sb);
  const std::size_t pods = pod_names(sb, "").size();
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"logs", "-n", "mindie-demo", "-f", "--max-log-requests", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err == "error: you are attempting to follow " + std::to_string(pods) +
                               " log streams, but maximum allowed concurrency is 2, use --max-log-requests to "
                               "increase the limit (or --role/--instance to narrow the pods)\n",
                run.err);
  for (const auto& r : sb.requests_since(mark)) CHECK(r.path.find("/log") == std::string::npos);
}

TEST_CASE("logs -f: lines of every pod merged as they come, a pod that starts later picked up, one that goes named") {
  Cluster sb;
  deploy(sb);
  Background logs(sb.mindie_argv({"logs", "-n", "mindie-demo", "--role", "prefill", "-f"}));
  logs.wait_for_output("[prefill/0/");
  // A second prefill instance: its pod starts after the command did, and its lines join the stream.
  auto run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2", "--wait", "--timeout", "3m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  logs.wait_for_output("[prefill/1/");
  const auto added = pod_names(sb, e2e::role_pods("prefill", 1));
  REQUIRE_FALSE(added.empty());
  logs.wait_for_output("[prefill/1/" + added.front() + "] kwok stand-in container: serving\n");
  // Scaled in again: the pod goes, and the command says so.
  run = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  logs.wait_for_error("pod/" + added.front() + " is gone\n");
  const e2e::Run stopped = logs.stop();
  for (const auto& l : lines_of(stopped.out)) CHECK_MESSAGE(l.rfind("[prefill/", 0) == 0, l);  // whole lines only
}
