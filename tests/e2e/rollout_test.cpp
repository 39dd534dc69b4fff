// kubectl mindie rollout status (issue 31) on the local control plane: per role, instances current and ready and the
// ones still on an earlier pod template, status's verdicts; a watch that ends when the rollout is done (exit 0) or
// at --timeout (exit 1), in multi_deployment on a full NPU pool and in infer_service_set.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;

json example(const std::string& mode) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = mode;
  return cfg;
}

e2e::Run deploy(const Cluster& sb, const e2e::TempDir& dir, const json& cfg) {
  auto run = sb.mindie({"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return run;
}

json rollout_json(const Cluster& sb) {
  const auto run = sb.mindie({"rollout", "status", "-n", kNs, "--watch=false", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

json role_of(const json& status, const std::string& name) {
  for (const auto& r : status.at("roles"))
    if (r.at("name") == name) return r;
  return nullptr;
}

}  // namespace

TEST_CASE(
    "rollout status, multi_deployment on a full NPU pool: names the old Deployments, times out, then watches "
    "the rollout through to done") {
  Cluster sb({"--no-crd"});
  e2e::TempDir dir;
  json cfg = example("multi_deployment");
  deploy(sb, dir, cfg);
  sb.wait_ready(kNs);
  const auto done = sb.mindie({"rollout", "status", "-n", kNs});
  CHECK_MESSAGE(done.exit_code == 0, done.err);
  CHECK(done.out == "the Deployments of mindie-motor-vllm successfully rolled out\n");

  e2e::fill_npu_pool(sb, dir, 8);  // prefill and decode: one pod of 4 NPUs each
  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:next";
  const auto redeploy = deploy(sb, dir, cfg);
  CHECK_MESSAGE(redeploy.err.find("as on an earlier template; follow it with kubectl mindie rollout status -n " + kNs +
                                  "\n") != std::string::npos,
                redeploy.err);
  e2e::Background watch(sb.mindie_argv({"rollout", "status", "-n", kNs, "--timeout", "300s"}));
  watch.wait_for_output("0 of 1 instances current, 0 ready; on an earlier pod template: deployment/vllm-p0 (");

  const json once = rollout_json(sb);
  CHECK(once["kind"] == "RolloutStatus");
  CHECK(once["done"] == false);
  for (const auto& [role, deployment] :
       {std::pair{"prefill", "deployment/vllm-p0"}, {"decode", "deployment/vllm-d0"}}) {
    CAPTURE(role);
    const json r = role_of(once, role);
    CHECK(r["instances"] == 1);
    CHECK(r["current"] == 0);
    CHECK(r["ready"] == 0);
    REQUIRE(r["outOfDate"].size() == 1);
    CHECK(r["outOfDate"][0]["instance"] == deployment);
  }
  const auto timed_out = sb.mindie({"rollout", "status", "-n", kNs, "--timeout", "1s"});
  CHECK(timed_out.exit_code == 1);
  CHECK_MESSAGE(timed_out.err ==
                    "error: timed out waiting for the rollout of the Deployments of mindie-motor-vllm "
                    "(--timeout 1s)\n",
                timed_out.err);
  CHECK(timed_out.out.find("Waiting for the Deployments of mindie-motor-vllm rollout to finish:\n") == 0);

  // With room the new pods run and the old ones go: the watch prints the end and exits 0.
  sb.admin_ok({"delete", "pods", "-n", "mindie-motor", "-l", "app=filler", "--wait=false"});
  watch.wait_for_output("the Deployments of mindie-motor-vllm successfully rolled out\n", 240);
  const auto finished = watch.finish();
  CHECK_MESSAGE(finished.exit_code == 0, finished.err);
  for (const auto& pod : e2e::kubectl_items(sb, "pods", kNs, "app in (vllm-p0,vllm-d0)"))
    CHECK(pod["spec"]["containers"][0]["image"] == "mindie-motor-vllm:next");
  CHECK(rollout_json(sb)["done"] == true);
}

TEST_CASE(
    "rollout status, infer_service_set: instances the operator made from an earlier template, per role; "
    "bad actions refused") {
  Cluster sb;
  e2e::TempDir dir;
  json cfg = example("infer_service_set");
  deploy(sb, dir, cfg);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:next";
  deploy(sb, dir, cfg);

  const json status = rollout_json(sb);
  CHECK(status["done"] == false);
  CHECK(status["subject"] == "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm");
  for (const char* role : {"prefill", "decode"}) {
    CAPTURE(role);
    const json r = role_of(status, role);
    CHECK(r["current"] == 0);
    REQUIRE(r["outOfDate"].size() == 1);
    CHECK(r["outOfDate"][0]["instance"] == "mindie-motor-vllm-0 instance 0");
    CHECK(r["outOfDate"][0]["reason"] == "its workload was made from an earlier pod template");
  }
  const auto text = sb.mindie({"rollout", "status", "-n", kNs, "--watch=false"});
  CHECK(text.exit_code == 0);  // kubectl rollout status --watch=false: the status, not a verdict
  CHECK_MESSAGE(text.out.find(
                    "  prefill: 0 of 1 instances current, 0 ready; on an earlier pod template: "
                    "mindie-motor-vllm-0 instance 0 (its workload was made from an earlier pod template)\n") !=
                    std::string::npos,
                text.out);

  const auto unknown = sb.mindie({"rollout", "statsu", "-n", kNs});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("error: unknown action \"statsu\" for \"kubectl mindie rollout\"") == 0);
  const auto none = sb.mindie({"rollout", "-n", kNs});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("error: an action is required") == 0);
  const auto two = sb.mindie({"rollout", "status", "extra", "-n", kNs});
  CHECK(two.exit_code == 1);
}
