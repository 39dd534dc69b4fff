// Ready means current (issue 31), end to end: after a deploy that changes a live pod template, status, wait and
// deploy --wait do not call the deployment ready while an instance runs an earlier template: infer_service_set
// instances the operator never updates, and multi_deployment Deployments whose surge pod finds no NPUs on a full pool
// (the normal state of an Ascend cluster) until the pool has room and the rollout completes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;
constexpr const char* kNoRoom = "Insufficient huawei.com/Ascend910";

json example(const std::string& mode) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = mode;
  return cfg;
}

e2e::Run deploy(const Cluster& sb, const e2e::TempDir& dir, const json& cfg, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir",
                                   kScripts};
  args.insert(args.end(), extra.begin(), extra.end());
  return sb.mindie(args);
}

json status_json(const Cluster& sb) {
  const auto run = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

json role_report(const json& report, const std::string& name) {
  for (const auto& r : report.at("roles"))
    if (r.at("name") == name) return r;
  return nullptr;
}

/// The lines of `report`'s `unready` that are about role `role`.
std::string role_lines(const json& report, const std::string& role) {
  std::string out;
  for (const auto& l : report["unready"])
    if (l.get<std::string>().rfind("role " + role + ": ", 0) == 0) out += l.get<std::string>() + "\n";
  return out;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// Fills the 800I_A2 nodes' free NPUs with 4-NPU pods of another deployment (namespace mindie-motor), `used` NPUs
/// (a multiple of 4, as every node's allocatable is) being taken already, and waits until each runs: the pool is full.
}  // namespace

TEST_CASE("infer_service_set: a new image reaches no running instance: not ready, named per role; wait fails") {
  Cluster sb;
  e2e::TempDir dir;
  json cfg = example("infer_service_set");
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);

  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:next";
  run = deploy(sb, dir, cfg, {"--wait", "--timeout", "5s"});
  CHECK(run.exit_code == 1);  // issue 31: "deploy --wait" exited 0, "ready"
  CHECK_MESSAGE(run.err.find("Warning: 4 instances on an earlier pod template (controller 1, coordinator 1, decode 1, "
                             "prefill 1): run \"kubectl mindie rollout restart -n mindie-demo\" to roll them\n") !=
                    std::string::npos,
                run.err);
  CHECK(run.err.find("* role prefill: 1 of 1 instances run an earlier pod template") != std::string::npos);

  const json report = status_json(sb);
  CHECK(report["ready"] == false);
  for (const char* role : {"prefill", "decode"}) {
    CAPTURE(role);
    CHECK(role_report(report, role)["instancesOnOtherTemplates"] == 1);
    CHECK(role_report(report, role)["readyInstances"] == 0);
    CHECK(role_report(report, role)["instances"][0]["current"] == false);
    CHECK(role_lines(report, role).find("1 of 1 instances run an earlier pod template than spec.template.roles[") !=
          std::string::npos);
    CHECK(role_lines(report, role).find("(statefulset/mindie-motor-vllm-0-" + std::string(role) + "-0)") !=
          std::string::npos);
  }
  const auto table = sb.mindie({"status", "-n", kNs}).out;
  CHECK(table.find("Not ready") != std::string::npos);
  CHECK(table.find("OutOfDate") != std::string::npos);

  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "2s"});
  CHECK(waited.exit_code == 1);
  CHECK_MESSAGE(waited.err.find("* role decode: 1 of 1 instances run an earlier pod template") != std::string::npos,
                waited.err);
}

TEST_CASE(
    "multi_deployment on a full NPU pool: a new image's rollout is stuck, not ready, its reason said once; "
    "with room it rolls and is ready again") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = example("multi_deployment");
  auto run = deploy(sb, dir, cfg);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  e2e::fill_npu_pool(sb, dir, 8);  // prefill and decode: one pod of 4 NPUs each

  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:next";
  run = deploy(sb, dir, cfg, {"--wait", "--timeout", "5s"});
  CHECK(run.exit_code == 1);  // issue 31: "deploy --wait" said ready after 0.6 s
  CHECK_MESSAGE(run.err.find("Warning: role prefill: this deploy changes the pod template of 1 running instance "
                             "(deployment/vllm-p0): the deployment controller rolls its pods") != std::string::npos,
                run.err);
  CHECK(run.err.find("Warning: role decode: this deploy changes the pod template of 1 running instance") !=
        std::string::npos);

  // The surge pods are made and the scheduler finds no room for them.
  e2e::eventually(
      [&] {
        const json r = status_json(sb);
        return !role_report(r, "prefill")["rolloutUnschedulable"].empty() &&
               !role_report(r, "decode")["rolloutUnschedulable"].empty();
      },
      "the surge pods unschedulable", 120);
  const json report = status_json(sb);
  CHECK(report["ready"] == false);
  for (const char* role : {"prefill", "decode"}) {
    CAPTURE(role);
    const json r = role_report(report, role);
    CHECK(r["instancesOnOtherTemplates"] == 1);
    CHECK(r["readyInstances"] == 0);
    const std::string lines = role_lines(report, role);
    CHECK_MESSAGE(lines.find(
                      "1 of 1 instances still run pods of an earlier pod template, their rollout not complete") !=
                      std::string::npos,
                  lines);
    CHECK(count_of(lines, kNoRoom) == 1);
  }
  // Said once: no line of its own for the surge pod.
  CHECK_MESSAGE(count_of(report["unready"].dump(), kNoRoom) == 2, report["unready"].dump(2));
  const auto table = sb.mindie({"status", "-n", kNs}).out;
  CHECK(table.find("Not ready") != std::string::npos);
  // The Deployments are what the baseline says (no drift); their pods are not yet.
  CHECK(table.find("not ready: role prefill: 1 of 1 instances still run pods of an earlier pod template") !=
        std::string::npos);
  CHECK(table.find("OutOfDate") != std::string::npos);
  const auto waited = sb.mindie({"wait", "-n", kNs, "--for=ready", "--timeout", "2s"});
  CHECK(waited.exit_code == 1);
  CHECK_MESSAGE(waited.err.find("* role prefill: 1 of 1 instances still run pods of an earlier pod template") !=
                    std::string::npos,
                waited.err);
  CHECK(waited.err.find(kNoRoom) != std::string::npos);

  // With room the surge pods run, the old ones go, and it is ready again: every engine pod runs the new image.
  sb.admin_ok({"delete", "pods", "-n", "mindie-motor", "-l", "app=filler", "--wait=false"});
  sb.wait_ready(kNs);
  const json after = status_json(sb);
  CHECK(after["ready"] == true);
  for (const char* role : {"prefill", "decode"}) {
    CHECK(role_report(after, role)["instancesOnCurrentTemplate"] == 1);
    CHECK(role_report(after, role)["instancesOnOtherTemplates"] == 0);
  }
  for (const auto& pod : e2e::kubectl_items(sb, "pods", kNs, "app in (vllm-p0,vllm-d0)"))
    CHECK(pod["spec"]["containers"][0]["image"] == "mindie-motor-vllm:next");
}
