// rollout::summarize: per role, instances current and ready and the ones still on an earlier template, taken from
// the status report's verdicts; its JSON form and text.
#include "mindie/rollout_status.h"

#include <doctest/doctest.h>

using namespace mindie;

namespace {

status::Instance instance(std::int64_t index, std::optional<bool> current, bool healthy, std::string why = "") {
  status::Instance inst;
  inst.infer_service = "svc-0";
  inst.index = index;
  inst.wanted = true;
  inst.current = current;
  inst.healthy = healthy;
  inst.rollout = std::move(why);
  inst.deployment = "vllm-p" + std::to_string(index);
  return inst;
}

status::Report report_with_prefill(std::vector<status::Instance> instances, bool ready) {
  status::Report r;
  r.ns = "demo";
  r.name = "svc";
  r.deploy_mode = "infer_service_set";
  r.found = true;
  r.ready = ready;
  status::Role prefill;
  prefill.name = "prefill";
  prefill.spec_instances = static_cast<std::int64_t>(instances.size());
  prefill.wanted_instances = prefill.spec_instances;
  for (const auto& i : instances) {
    prefill.instances_on_current_template += i.current == true ? 1 : 0;
    prefill.instances_on_other_templates += i.current == false ? 1 : 0;
    prefill.ready_instances += i.healthy ? 1 : 0;
  }
  prefill.instances = std::move(instances);
  r.roles.push_back(prefill);
  status::Role unused;  // kv-pool, off everywhere: left out as status leaves it out
  unused.name = "kv-pool";
  r.roles.push_back(unused);
  return r;
}

}  // namespace

TEST_CASE("rollout status: out-of-date instances named with the report's reason; not done") {
  status::Report r = report_with_prefill(
      {instance(0, true, true), instance(1, false, false, "its workload was made from an earlier pod template"),
       instance(2, std::nullopt, false)},
      false);
  r.converging.push_back("the operator has not observed generation 3 yet");
  r.unready.push_back("role prefill: 1 of 3 instances run an earlier pod template");
  const auto s = rollout::summarize(r, "inferserviceset.mindcluster.huawei.com/svc");
  REQUIRE(s.roles.size() == 1);
  CHECK(s.roles[0].name == "prefill");
  CHECK(s.roles[0].instances == 3);
  CHECK(s.roles[0].current == 1);
  CHECK(s.roles[0].ready == 1);
  REQUIRE(s.roles[0].out_of_date.size() == 1);  // an instance not judged (no workload yet) is not called old
  CHECK(s.roles[0].out_of_date[0].instance == "svc-0 instance 1");
  CHECK_FALSE(s.done);
  CHECK(s.text() ==
        "Waiting for inferserviceset.mindcluster.huawei.com/svc rollout to finish:\n"
        "  prefill: 1 of 3 instances current, 1 ready; on an earlier pod template: svc-0 instance 1 (its workload was "
        "made from an earlier pod template)\n"
        "  the operator has not observed generation 3 yet\n");
  const auto j = s.to_json();
  CHECK(j.at("kind") == "RolloutStatus");
  CHECK(j.at("done") == false);
  CHECK(j.at("roles").at(0).at("outOfDate").at(0).at("reason") == "its workload was made from an earlier pod template");
  CHECK(j.at("notReady").as_array().size() == 1);
}

TEST_CASE("rollout status: done when the report is ready; multi_deployment names Deployments") {
  status::Report r = report_with_prefill({instance(0, true, true), instance(1, true, true)}, true);
  r.deploy_mode = "multi_deployment";
  const auto s = rollout::summarize(r, "the Deployments of svc");
  CHECK(s.done);
  CHECK(s.text() == "the Deployments of svc successfully rolled out\n");
  CHECK(s.to_json().at("notReady").as_array().empty());

  status::Report rolling =
      report_with_prefill({instance(0, true, true), instance(1, false, false, "1 old replicas are pending")}, false);
  rolling.deploy_mode = "multi_deployment";
  const auto t = rollout::summarize(rolling, "the Deployments of svc");
  REQUIRE(t.roles[0].out_of_date.size() == 1);
  CHECK(t.roles[0].out_of_date[0].instance == "deployment/vllm-p1");
}
