// kubectl mindie rollback end to end against the local cluster: a server dry run previews every command it would
// run and writes nothing; one namespace lock for the whole rollback, and a rollback killed half-way recovered by the
// next command; counts, settings and the template all go back; bad input is one error with nothing written.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
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
const std::string kWorkloadWrite = "PATCH:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";
const std::string kRevisionWrite = "PATCH:/apis/apps/v1/namespaces/" + kNs + "/controllerrevisions/";
const std::string kNewImage = "mindie-motor-vllm:new";

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

/// A field of role `role` of the InferServiceSet's template, by kubectl's jsonpath below the role ("replicas").
std::string role_field(const Cluster& sb, const std::string& role, const std::string& path) {
  return sb.admin_ok({"get", "inferserviceset", "mindie-motor-vllm", "-n", kNs, "-o",
                      "jsonpath={.spec.template.roles[?(@.name==\"" + role + "\")]." + path + "}"});
}

/// The image of instance `index` of `role`'s workload ("" while there is none).
std::string workload_image(const Cluster& sb, const std::string& role, int index) {
  return sb.admin_ok(
      {"get", "statefulsets", "-n", kNs, "-l",
       "infer.huawei.com/instanceset-name=" + role + ",infer.huawei.com/instanceset-index=" + std::to_string(index),
       "-o", "jsonpath={.items[*].spec.template.spec.containers[0].image}"});
}

void ok(const e2e::Run& run) { REQUIRE_MESSAGE(run.exit_code == 0, (run.out + run.err)); }

/// The version of every object in the namespace that a rollback of an infer_service_set deployment could write: the
/// generation of the InferServiceSet (infer-operator updates its status meanwhile, which a dry run must not be blamed
/// for), the resourceVersion of the ConfigMaps, Leases and the baseline's revisions (kubectl-mindie/history-of). The
/// workloads are infer-operator's: it makes and the StatefulSet controller revises them on its own time after a
/// scale (a dry run's writes to them would carry dryRun=All, which preview() checks).
std::map<std::string, std::string> versions(const Cluster& sb) {
  std::map<std::string, std::string> out;
  const std::vector<std::pair<const char*, const char*>> kinds = {{"configmaps", ""},
                                                                  {"inferservicesets", ""},
                                                                  {"controllerrevisions", "kubectl-mindie/history-of"},
                                                                  {"leases", ""}};
  for (const auto& [kind, selector] : kinds)
    for (const auto& o : e2e::kubectl_items(sb, kind, kNs, selector)) {
      const json& meta = o["metadata"];
      out[std::string(kind) + "/" + meta["name"].get<std::string>()] = meta.contains("generation")
                                                                           ? "generation " + meta["generation"].dump()
                                                                           : meta["resourceVersion"].get<std::string>();
    }
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

TEST_CASE("rollback --rollout after scale, update-config and an image change: counts, settings, template, pods") {
  Cluster sb;
  e2e::TempDir dir;
  // Revision 1: prefill 2, decode 1, INFO, the example's image.
  const std::string first = config_file(dir, 2, "INFO", "", 1);
  ok(sb.mindie({"deploy", "-f", first, "--scripts-dir", kScripts}));
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "1", "--decode", "2"}));       // 2
  ok(sb.mindie({"update-config", "-f", config_file(dir, 1, "DEBUG", "", 2)}));  // 3
  ok(sb.mindie({"deploy", "-f", config_file(dir, 1, "DEBUG", kNewImage, 2)}));  // 4: running instances keep theirs
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}));                        // 5: prefill 1 is made from 4's
  e2e::eventually([&] { return workload_image(sb, "prefill", 1) == kNewImage; }, "prefill instance 1 on the new image");

  // With --rollout, as kubectl rollout undo: the running pods go back too.
  const auto run = sb.mindie({"rollback", "-n", kNs, "--to-revision", "1", "--rollout", "--timeout", "5m"});
  ok(run);
  // The counts (decode 2 → 1) as scale sets them, then the rest as a deploy of revision 1's files.
  CHECK_MESSAGE(run.out.starts_with("inferserviceset.mindcluster.huawei.com/mindie-motor-vllm scaled\n"), run.out);
  CHECK(has(run.out, "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm serverside-applied\n"));
  // The template went back; prefill instance 1, made from the image rolled back, is now out of date.
  CHECK_MESSAGE(has(run.err,
                    "Warning: 1 instance on an earlier pod template (prefill 1): run \"kubectl mindie rollout "
                    "restart -n mindie-demo\" to roll them\n"),
                run.err);
  CHECK(json::parse(e2e::read_file(first)) == stored_config(sb));
  CHECK(role_field(sb, "decode", "replicas") == "1");
  CHECK(role_field(sb, "prefill", "replicas") == "2");
  const std::string image = example().at("motor_deploy_config").at("image_name").get<std::string>();
  CHECK(role_field(sb, "prefill", "spec.template.spec.containers[0].image") == image);
  CHECK_MESSAGE(has(run.out, "statefulset.apps/mindie-motor-vllm-0-prefill-1 restarted\n"), run.out);
  CHECK(workload_image(sb, "prefill", 1) == image);
  const json revisions = history(sb);
  REQUIRE(revisions.size() == 7);
  CHECK(revisions[5].at("command") == "rollback to 1");
  CHECK(revisions[6].at("command") == "rollback to 1");
}

TEST_CASE(
    "bad input: an unknown revision, a rollback while another command holds the lock, a diff for another "
    "namespace: one error each, nothing written") {
  Cluster sb;
  e2e::TempDir dir;
  ok(sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts}));
  ok(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}));

  // --rollout with a dry run: a usage error before any request.
  std::size_t mark = sb.requests().size();
  auto run = sb.mindie({"rollback", "-n", kNs, "--rollout", "--dry-run=server"});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "error: --rollout cannot be used with --dry-run: nothing changes\n");
  run = sb.mindie({"rollback", "-n", kNs, "--stop-operator"});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "error: --stop-operator applies only to --rollout\n");
  CHECK(sb.requests_since(mark).empty());

  mark = sb.requests().size();
  run = sb.mindie({"rollback", "-n", kNs, "--to-revision", "7"});
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK_MESSAGE(run.err ==
                    "error: revision 7 not found in namespace mindie-demo (the revisions kept are 1, 2; "
                    "kubectl mindie history -n mindie-demo lists them)\n",
                run.err);
  for (const auto& r : sb.requests_since(mark)) CHECK_MESSAGE(r.method == "GET", (r.method + " " + r.path));

  // A scale holds the lock, stopped at its workload write: the rollback names it and waits no longer than told.
  sb.add_fault(kWorkloadWrite + ":hold:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--decode", "2"}));
  sb.wait_held(1);
  mark = sb.requests().size();
  run = sb.mindie({"rollback", "-n", kNs, "--lock-timeout", "0"});
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK_MESSAGE(run.err.starts_with(
                    "error: another kubectl-mindie command is changing namespace mindie-demo: scale by "),
                run.err);
  CHECK(has(run.err, "Nothing was changed\n"));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  for (const auto& r : sb.requests_since(mark)) CHECK_MESSAGE(r.method == "GET", (r.method + " " + r.path));
  sb.release_held();
  ok(scale.finish());

  // A config whose job_id is mindie-demo, diffed against -n mindie-motor: one error naming both, nothing sent.
  mark = sb.requests().size();
  run = sb.mindie({"diff", "-f", e2e::kExample, "-n", "mindie-motor"});
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK_MESSAGE(run.err ==
                    "error: the namespace from the command line (--namespace mindie-motor) does not match "
                    "motor_deploy_config.job_id (mindie-demo): job_id is the namespace of the deployment; drop "
                    "-n or make them equal\n",
                run.err);
  CHECK(sb.requests_since(mark).empty());
}
