// The baseline's history end to end against the local cluster: every baseline write records a ControllerRevision
// owned by motor-config; history lists them with what each changed; get-config gives a revision's files; rollback
// goes back through scale and update-config; an unknown revision is one error with nothing written; --history-limit
// prunes; delete leaves no revision behind.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

json example() { return json::parse(e2e::read_file(e2e::kExample)); }

/// The example with `prefill` prefill instances and the controller's log level `level`.
std::string config_file(const e2e::TempDir& dir, int prefill, const std::string& level) {
  json cfg = example();
  cfg["motor_deploy_config"]["p_instances_num"] = prefill;
  cfg["motor_controller_config"]["logging_config"]["log_level"] = level;
  return dir.write("user_config_" + std::to_string(prefill) + level + ".json", cfg.dump(2));
}

json history(const Cluster& sb) {
  const auto run = sb.mindie({"history", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out).at("revisions");
}

json stored_config(const Cluster& sb) {
  const auto run = sb.mindie({"get-config", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

/// Every request but a GET after `mark`, the lock's and the history's included (the access reviews are questions).
std::size_t all_writes_since(const Cluster& sb, std::size_t mark) {
  std::size_t n = 0;
  for (const auto& r : sb.requests_since(mark)) n += r.method != "GET" && !r.is_review() ? 1 : 0;
  return n;
}

/// How many revisions of the baseline's history were created after `mark`.
std::size_t revisions_created_since(const Cluster& sb, std::size_t mark) {
  std::size_t n = 0;
  for (const auto& r : sb.requests_since(mark)) n += r.is_history() && r.method == "PATCH" ? 1 : 0;
  return n;
}

/// The names of the baseline's revisions in the namespace, as `kubectl get -o name` lists them, one a line (the
/// StatefulSets the operator makes keep ControllerRevisions of their own).
std::string revision_names(const Cluster& sb) {
  const auto run = sb.kubectl(
      {"get", "controllerrevisions", "-n", kNs, "-l", "kubectl-mindie/history-of=motor-config", "-o", "name"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return run.out;
}

}  // namespace

TEST_CASE("deploy, scale, update-config: three revisions; get-config, rollback, an unknown revision, delete") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"update-config", "-f", config_file(dir, 2, "DEBUG")});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);

  const json revisions = history(sb);
  REQUIRE(revisions.size() == 3);
  CHECK(revisions[0].at("command") == "deploy");
  CHECK(revisions[0].at("changes") == json::array({"(first recorded)"}));
  CHECK(revisions[1].at("command") == "scale");
  CHECK(revisions[1].at("changes") == json::array({"motor_deploy_config.p_instances_num"}));
  CHECK(revisions[2].at("command") == "update-config");
  CHECK(revisions[2].at("changes") == json::array({"motor_controller_config.logging_config.log_level"}));
  const auto table = sb.mindie({"history", "-n", kNs});
  CHECK(table.out.starts_with("REVISION  COMMAND        USER"));
  CHECK(table.out.find("motor_deploy_config.p_instances_num") != std::string::npos);
  // Owned by motor-config: deleting it garbage-collects them.
  const json owner = json::parse(sb.kubectl({"get", "controllerrevision", "motor-config-1", "-n", kNs, "-o",
                                             "jsonpath={.metadata.ownerReferences[0]}"})
                                     .out);
  CHECK(owner.at("kind") == "ConfigMap");
  CHECK(owner.at("uid") ==
        sb.kubectl({"get", "configmap", "motor-config", "-n", kNs, "-o", "jsonpath={.metadata.uid}"}).out);

  // get-config of revision 1 is the first user_config.json, byte for byte; -o DIR writes the files.
  run = sb.mindie({"get-config", "-n", kNs, "--revision", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == e2e::read_file(e2e::kExample));
  run = sb.mindie({"get-config", "-n", kNs, "-o", dir.path() + "/now"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(json::parse(e2e::read_file(dir.path() + "/now/user_config.json")) ==
        json::parse(e2e::read_file(config_file(dir, 2, "DEBUG"))));

  // An unknown revision: one clear error, nothing written.
  std::size_t mark = sb.requests().size();
  for (const auto& args : {std::vector<std::string>{"history", "-n", kNs, "--revision", "9"},
                           std::vector<std::string>{"get-config", "-n", kNs, "--revision", "9"},
                           std::vector<std::string>{"rollback", "-n", kNs, "--to-revision", "9"}}) {
    run = sb.mindie(args);
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err ==
                      "error: revision 9 not found in namespace mindie-demo (the revisions kept are 1, 2, 3; "
                      "kubectl mindie history -n mindie-demo lists them)\n",
                  run.err);
  }
  CHECK(all_writes_since(sb, mark) == 0);

  // Back to revision 1: the counts as scale sets them, then the log level as update-config does.
  run = sb.mindie({"rollback", "-n", kNs, "--to-revision", "1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out ==
        "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\nconfigmap/motor-config configured\n");
  const json now = stored_config(sb);
  CHECK(now.at("motor_deploy_config").at("p_instances_num") == 1);
  CHECK(now.at("motor_controller_config").at("logging_config").at("log_level") ==
        example().at("motor_controller_config").at("logging_config").at("log_level"));
  const auto replicas = sb.kubectl({"get", "inferserviceset", "mindie-motor-vllm", "-n", kNs, "-o",
                                    "jsonpath={.spec.template.roles[?(@.name==\"prefill\")].replicas}"});
  CHECK(replicas.out == "1");
  const json after = history(sb);
  REQUIRE(after.size() == 5);
  CHECK(after[3].at("command") == "rollback to 1");
  CHECK(after[4].at("command") == "rollback to 1");
  // Nothing left to go back to from revision 1's content: rollback says so and writes nothing.
  mark = sb.requests().size();
  run = sb.mindie({"rollback", "-n", kNs, "--to-revision", "1"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config skipped rollback (the baseline already matches revision 1)\n");
  CHECK(all_writes_since(sb, mark) == 0);

  run = sb.mindie({"delete", "-n", kNs, "--wait", "--timeout", "2m"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // The garbage collector removes what motor-config owned.
  e2e::eventually([&] { return revision_names(sb).empty(); }, "the revisions garbage-collected with motor-config");
}

TEST_CASE("--history-limit keeps the newest revisions") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts, "--history-limit", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  for (const char* level : {"DEBUG", "WARNING"}) {
    run = sb.mindie({"update-config", "-f", config_file(dir, 1, level), "--history-limit", "2"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  }
  CHECK(revision_names(sb) == "controllerrevision.apps/motor-config-2\ncontrollerrevision.apps/motor-config-3\n");
  // An update-config that changes nothing records nothing.
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"update-config", "-f", config_file(dir, 1, "WARNING")});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(revisions_created_since(sb, mark) == 0);
  CHECK(history(sb).size() == 2);
}

TEST_CASE("a scale stopped between its baseline write and its revision: the next command records the revision") {
  // Revision 2's apply is refused once (a 400 is not sent again): the scale has written the InferServiceSet and the
  // baseline. (A 5xx is sent again, as every apply is, and hidden.)
  Cluster sb({"--fault", "PATCH:/apis/apps/v1/namespaces/mindie-demo/controllerrevisions/motor-config-2.*:400:1"});
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("scale stopped at controllerrevision.apps/motor-config-N") != std::string::npos, run.err);
  CHECK(history(sb).size() == 1);
  // The next command in the namespace, even one with nothing of its own to write, records it first.
  e2e::TempDir dir;
  run = sb.mindie({"get-config", "-n", kNs, "-o", dir.path() + "/now"});  // reads only: recovers nothing
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(history(sb).size() == 1);
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/now"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find(", completed, revision 2 recorded") != std::string::npos, run.err);
  const json revisions = history(sb);
  REQUIRE(revisions.size() == 2);
  CHECK(revisions[1].at("command") == "scale");
  CHECK(revisions[1].at("changes") == json::array({"motor_deploy_config.p_instances_num"}));
}
