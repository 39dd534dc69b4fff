// rollout::plan_restart: which instances rollout restart replaces, how each role stays available, and what it
// refuses before any write; replaced() and ready_instances(), the judges of its waits.
#include "mindie/rollout_plan.h"

#include <doctest/doctest.h>

using namespace mindie;

namespace {

status::Instance instance(std::int64_t index, bool current, bool ready, std::string workload = "") {
  status::Instance inst;
  inst.index = index;
  inst.wanted = true;
  inst.current = current;
  inst.healthy = current && ready;
  inst.ready_pods = ready ? 1 : 0;
  inst.pods.resize(1);
  inst.workload = workload.empty() ? "statefulset/svc-0-prefill-" + std::to_string(index) : workload;
  inst.workload_uid = "uid-" + std::to_string(index);
  return inst;
}

status::Role role(const std::string& name, std::vector<status::Instance> instances) {
  status::Role r;
  r.name = name;
  r.spec_instances = static_cast<std::int64_t>(instances.size());
  r.wanted_instances = r.spec_instances;
  r.instances = std::move(instances);
  return r;
}

status::Report report(std::string mode, std::vector<status::Role> roles) {
  status::Report r;
  r.ns = "demo";
  r.name = "svc";
  r.deploy_mode = std::move(mode);
  r.found = true;
  r.roles = std::move(roles);
  return r;
}

}  // namespace

TEST_CASE("rollout plan: out-of-date instances, one role of two keeps one ready; --all takes current ones too") {
  const auto r = report("infer_service_set", {role("prefill", {instance(0, false, true), instance(1, true, true)}),
                                              role("decode", {instance(0, true, true, "statefulset/svc-0-decode-0")})});
  auto plan = rollout::plan_restart(r, {});
  REQUIRE(plan.refusals.empty());
  REQUIRE(plan.roles.size() == 1);
  CHECK(plan.roles[0].role == "prefill");
  CHECK(plan.roles[0].indexes == std::vector<std::int64_t>{0});
  CHECK(plan.roles[0].keep_ready == 1);
  CHECK_FALSE(plan.roles[0].surge);

  rollout::RestartRequest all;
  all.all = true;
  plan = rollout::plan_restart(r, all);
  REQUIRE(plan.roles.size() == 2);
  CHECK(plan.roles[0].indexes == std::vector<std::int64_t>{0, 1});
  CHECK(plan.roles[1].surge);                  // decode runs one instance: a temporary one first
  all.done = {"statefulset/svc-0-prefill-0"};  // a resumed --all skips what it replaced
  CHECK(rollout::plan_restart(r, all).roles[0].indexes == std::vector<std::int64_t>{1});
}

TEST_CASE("rollout plan: refusals name the role and the way through, nothing is planned around them") {
  auto gang = role("decode", {instance(0, false, true)});
  gang.gang = true;
  auto hpa = role("prefill", {instance(0, false, true)});
  hpa.hpa_owned = true;
  auto plan = rollout::plan_restart(report("infer_service_set", {gang, hpa}), {});
  REQUIRE(plan.refusals.size() == 2);
  CHECK(plan.refusals[0].starts_with("role decode: its instances are gang-scheduled"));
  CHECK(plan.refusals[0].find("restart infer-operator") != std::string::npos);
  CHECK(plan.refusals[0].find("pass --stop-operator") != std::string::npos);
  CHECK(plan.refusals[1] ==
        "role prefill: it runs 1 instance: replacing one leaves fewer than 1 ready (its instance count is its HPA's: "
        "no temporary instance can be added); pass --no-surge --allow-downtime to roll it anyway");

  rollout::RestartRequest unknown;
  unknown.roles = {"encode"};
  CHECK(rollout::plan_restart(report("infer_service_set", {hpa}), unknown).refusals ==
        std::vector<std::string>{"role encode: the deployment has no such role"});

  rollout::RestartRequest in_place;
  in_place.surge = false;
  in_place.allow_downtime = true;
  plan = rollout::plan_restart(report("infer_service_set", {hpa}), in_place);
  REQUIRE(plan.refusals.empty());
  CHECK(plan.roles[0].keep_ready == 0);
}

TEST_CASE("rollout plan, Deployments: their own surge, refused when its pods find no room") {
  auto prefill = role("prefill", {instance(0, false, true, "deployment/vllm-p0")});
  auto plan = rollout::plan_restart(report("multi_deployment", {prefill}), {});
  REQUIRE(plan.refusals.empty());
  CHECK_FALSE(plan.roles[0].surge);
  CHECK(plan.roles[0].keep_ready == 0);  // the Deployment keeps its old pod until the new one is ready
  prefill.rollout_unschedulable = {"0/2 nodes are available: 2 Insufficient huawei.com/Ascend910."};
  plan = rollout::plan_restart(report("multi_deployment", {prefill}), {});
  REQUIRE(plan.refusals.size() == 1);
  CHECK(plan.refusals[0].find("pass --no-surge") != std::string::npos);
  CHECK(plan.refusals[0].find("Insufficient huawei.com/Ascend910") != std::string::npos);
  rollout::RestartRequest in_place;
  in_place.surge = false;
  CHECK(rollout::plan_restart(report("multi_deployment", {prefill}), in_place).refusals[0].find("(--no-surge)") !=
        std::string::npos);
}

TEST_CASE("rollout plan: replaced needs current, healthy and another workload; serving counts any template") {
  auto r = report("infer_service_set", {role("prefill", {instance(0, true, true), instance(1, false, true)})});
  CHECK(rollout::replaced(r, "prefill", 0, ""));
  CHECK_FALSE(rollout::replaced(r, "prefill", 0, "uid-0"));  // still the workload it deleted
  CHECK_FALSE(rollout::replaced(r, "prefill", 1, ""));
  CHECK_FALSE(rollout::replaced(r, "decode", 0, ""));
  CHECK(rollout::ready_instances(r, "prefill") == 2);  // the out-of-date one serves too
  CHECK(rollout::ready_instances(r, "prefill", 1) == 1);
  r.roles[0].instances[1].terminating_pods = 1;
  CHECK(rollout::ready_instances(r, "prefill") == 1);
}

TEST_CASE("rollout plan: --stop-operator rolls a gang role, with a temporary instance where it runs one") {
  auto gang = role("decode", {instance(0, false, true, "statefulset/svc-0-decode-0")});
  gang.gang = true;
  rollout::RestartRequest req;
  req.stop_operator = true;
  auto plan = rollout::plan_restart(report("infer_service_set", {gang}), req);
  REQUIRE(plan.refusals.empty());
  REQUIRE(plan.roles.size() == 1);
  CHECK(plan.roles[0].gang);
  CHECK(plan.roles[0].surge);
  CHECK(plan.roles[0].workloads == std::vector<std::string>{"statefulset/svc-0-decode-0"});

  // Elsewhere a role called gang is a Deployment's: rolled natively, never with the operator stopped.
  plan = rollout::plan_restart(report("multi_deployment", {gang}), req);
  REQUIRE(plan.roles.size() == 1);
  CHECK_FALSE(plan.roles[0].gang);
}
