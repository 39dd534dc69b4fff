// kubectl mindie rollback end to end against the local cluster: a server dry run previews every command it would
// run and writes nothing; one namespace lock for the whole rollback, and a rollback killed half-way recovered by the
// next command.
#include <doctest/doctest.h>
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

json example() { return json::parse(e2e::read_file(e2e::kExample)); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kBaselineWrite = "PATCH:/api/v1/namespaces/" + kNs + "/configmaps/motor-config";
const std::string kRevisionWrite = "PATCH:/apis/apps/v1/namespaces/" + kNs + "/controllerrevisions/";
/// The example with `prefill` prefill and `decode` decode instances, the controller's log level `level` and the
/// engine image `image` ("": the example's).
std::string config_file(const e2e::TempDir& dir, int prefill, const std::string& level, const std::string& image,
                        int decode = 1) {
  json cfg = example();
  cfg["motor_deploy_config"]["p_instances_num"] = prefill;
  cfg["motor_deploy_config"]["d_instances_num"] = decode;
  cfg["motor_controller_config"]["logging_config"]["log_level"] = level;
  if (!image.empty()) cfg["motor_deploy_config"]["image_name"] = image;
  const std::string name = std::to_string(prefill) + "-" + std::to_string(decode) + level +
                           (image.empty() ? "" : "-new");
  return dir.write("user_config_" + name + ".json", cfg.dump(2));
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

/// The lock Lease's annotations.
json lease_annotations(const Cluster& sb) {
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  return lease["metadata"].value("annotations", json::object());
}

/// How many times the lock's Lease was taken after its creation (spec.leaseTransitions).
int lease_transitions(const Cluster& sb) {
  const json lease = json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
  return lease["spec"].value("leaseTransitions", 0);
}

void ok(const e2e::Run& run) { REQUIRE_MESSAGE(run.exit_code == 0, (run.out + run.err)); }

/// The resourceVersion of every object in the namespace that a rollback could write, and the revisions' names.
std::map<std::string, std::string> versions(const Cluster& sb) {
  std::map<std::string, std::string> out;
  for (const char* kind :
       {"configmaps", "inferservicesets", "deployments", "statefulsets", "controllerrevisions", "leases"})
    for (const auto& o : e2e::kubectl_items(sb, kind, kNs))
      out[std::string(kind) + "/" + o["metadata"]["name"].get<std::string>()] =
          o["metadata"]["resourceVersion"].get<std::string>();
  return out;
}

/// Runs `rollback -n NS --to-revision N --dry-run=server` and checks that it wrote nothing: every write the proxy saw
/// carries dryRun=All, none went to the lock or the history, and no object changed. Returns its output.
std::string preview(const Cluster& sb, int revision) {
  const auto before = versions(sb);
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"rollback", "-n", kNs, "--to-revision", std::to_string(revision), "--dry-run=server"});
  ok(run);
  const auto writes = e2e::writes_since(sb, mark);
  CHECK(!writes.empty());
  for (const auto& r : writes) {
    CHECK_MESSAGE(has(r.query, "dryRun=All"), (r.method + " " + r.path));
    CHECK_MESSAGE(!r.is_lock(), r.path);
  }
  CHECK(versions(sb) == before);
  return run.out;
}

const std::string kScaled = "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled (server dry run)\n";

}  // namespace

TEST_CASE("rollback --dry-run=server previews every command it would run, each by a server dry run") {
  Cluster sb;
  e2e::TempDir dir;
  ok(sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts}));
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}));
  ok(sb.mindie({"update-config", "-f", config_file(dir, 2, "DEBUG", "")}));
  // Counts and settings: the scale, then update-config (shown the revision's settings with the counts as they are).
  std::string out = preview(sb, 1);
  CHECK_MESSAGE(out == kScaled + "configmap/motor-config configured (server dry run)\n", out);

  // Counts and an image: the scale, then the deploy of the revision's files.
  ok(sb.mindie({"deploy", "-f", config_file(dir, 2, "DEBUG", "mindie-motor-vllm:new")}));
  out = preview(sb, 1);
  CHECK_MESSAGE(out.starts_with(kScaled), out);
  CHECK(has(out, "configmap/motor-config serverside-applied (server dry run)\n"));
  CHECK(has(out, "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm serverside-applied (server dry run)\n"));
}

TEST_CASE("rollback holds one lock for all its commands: a rival waits until the whole rollback has ended") {
  Cluster sb;
  e2e::TempDir dir;
  ok(sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts}));
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}));
  ok(sb.mindie({"update-config", "-f", config_file(dir, 2, "DEBUG", "")}));
  const int taken = lease_transitions(sb);
  // The revision the rollback's scale records is held before the server sees it: the scale is written, the
  // update-config to come.
  sb.add_fault(kRevisionWrite + "motor-config-4.*:hold:1");
  e2e::Background rollback(sb.mindie_argv({"rollback", "-n", kNs, "--to-revision", "1"}));
  sb.wait_held(1);
  e2e::Background rival(sb.mindie_argv({"scale", "-n", kNs, "--decode", "2"}));
  rival.wait_for_error("for rollback by ");  // waiting for the lock the rollback holds
  sb.release_held();
  const auto done = rollback.finish();
  ok(done);
  CHECK(done.out ==
        "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\nconfigmap/motor-config configured\n");
  ok(rival.finish());
  // One take for the whole rollback (the rival's is the other): it never freed the lock between its commands.
  CHECK(lease_transitions(sb) == taken + 2);
  // The rival ran after the rollback's update-config: the baseline has both.
  const json now = stored_config(sb);
  CHECK(now.at("motor_deploy_config").at("p_instances_num") == 1);
  CHECK(now.at("motor_deploy_config").at("d_instances_num") == 2);
  CHECK(now.at("motor_controller_config").at("logging_config").at("log_level") == "INFO");
}

TEST_CASE("a rollback killed in its second command: the next command recovers that change as its own kind's") {
  Cluster sb;
  e2e::TempDir dir;
  ok(sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts}));
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}));
  ok(sb.mindie({"update-config", "-f", config_file(dir, 2, "DEBUG", "")}));
  // update-config's write (the second of motor-config: the scale's is the first) is applied, its answer held.
  sb.add_fault(kBaselineWrite + ":hold-reply:1:1");
  e2e::Background rollback(sb.mindie_argv({"rollback", "-n", kNs, "--to-revision", "1"}));
  sb.wait_held(1);
  rollback.signal(SIGKILL);
  CHECK(rollback.finish().exit_code == 128 + SIGKILL);
  sb.release_held();
  const json left = lease_annotations(sb);
  REQUIRE(left.contains("kubectl-mindie/intent"));
  CHECK(json::parse(left["kubectl-mindie/intent"].get<std::string>()).at("command") == "update-config");

  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  ok(next);
  CHECK_MESSAGE(has(next.err, "recovered an interrupted update-config from "), next.err);
  CHECK_MESSAGE(has(next.err, "(rollback by "), next.err);
  CHECK_MESSAGE(has(next.err, ": revision 5 recorded"), next.err);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
  const json revisions = history(sb);
  REQUIRE(revisions.size() == 6);
  CHECK(revisions[3].at("command") == "rollback to 1");  // the scale, recorded by the rollback itself
  CHECK(revisions[4].at("command") == "rollback");       // the settings, recorded by the recovery for it
  CHECK(revisions[4].at("changes") == json::array({"motor_controller_config.logging_config.log_level"}));
  CHECK(revisions[5].at("command") == "scale");
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}
