// kubectl mindie rollback end to end against the local cluster: a server dry run previews every command it would
// run and writes nothing.
#include <doctest/doctest.h>

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
