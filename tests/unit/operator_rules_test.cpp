// mindie/operator_rules.h: what infer-operator refuses or never changes, checked on objects
// (Ascend/mind-cluster component/infer-operator/pkg/controller/: v1/instanceset_controller.go,
// v1/inferservice_controller.go, workload/podgroup_manager.go).
#include "mindie/operator_rules.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <set>

#include "config_test_support.h"
#include "mindie/render.h"
#include "render_test_support.h"

namespace json = boost::json;
using namespace mindie;
using mindie::test::deploy_of;
using mindie::test::parse;
using mindie::test::valid_config;

namespace {

json::object service(const std::string& ns, const std::string& name, int node_port) {
  return json::parse(R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
                     R"("},"spec":{"type":"NodePort","ports":[{"port":80},{"port":1025,"nodePort":)" +
                     std::to_string(node_port) + "}]}}")
      .as_object();
}

// The live InstanceSet of `role` as the operator created it from `iss`: the role's labels, the template's policy.
json::object instance_set_of(const json::object& iss, const std::string& role) {
  const auto& r = test::role_of(iss, role);
  json::object ist;
  ist["metadata"] = {{"name", "mindie-motor-vllm-0-" + role}, {"labels", r.at("metadata").at("labels")}};
  const auto ann = test::pod_annotations_of(r);
  if (ann.contains(mindcluster::kSchedulePolicyAnnotation))
    ist["metadata"].as_object()["annotations"] = {
        {mindcluster::kSchedulePolicyAnnotation, ann.at(mindcluster::kSchedulePolicyAnnotation)}};
  return ist;
}

// A StatefulSet of instance `index` of `role` whose pod template carries `hash` ("" = none).
json::object workload(const std::string& role, int index, const std::string& hash) {
  json::object w;
  w["kind"] = "StatefulSet";
  w["metadata"] = {{"name", "mindie-motor-vllm-0-" + role + "-" + std::to_string(index)},
                   {"labels",
                    {{"infer.huawei.com/inferservice-name", "mindie-motor-vllm-0"},
                     {"infer.huawei.com/instanceset-name", role},
                     {"infer.huawei.com/instanceset-index", std::to_string(index)}}}};
  json::object tmeta;
  if (!hash.empty()) tmeta["annotations"] = {{render::kTemplateHashAnnotation, hash}};
  w["spec"] = {{"template", {{"metadata", tmeta}}}};
  return w;
}

}  // namespace

TEST_CASE("node_port_conflicts: another Service holding the port conflicts; the deployment's own does not") {
  const std::vector<render::NodePortClaim> claims = {
      {"team-a", "infer-x-0-coordinator", 31015, "motor_deploy_config.infer_node_port"}};
  json::array services{service("team-a", "infer-x-0-coordinator", 31015), service("team-b", "other", 31016)};
  CHECK(operator_rules::node_port_conflicts(claims, services).empty());
  services.push_back(service("team-b", "holder", 31015));
  const auto conflicts = operator_rules::node_port_conflicts(claims, services);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0].holder_ns == "team-b");
  CHECK(conflicts[0].holder_name == "holder");
  CHECK(conflicts[0].claim.port == 31015);
  // Same name in another namespace is another Service.
  CHECK(operator_rules::node_port_conflicts(claims, json::array{service("team-b", "infer-x-0-coordinator", 31015)})
            .size() == 1);
}

// PyMotor 7d15c04 §U6: the observability nodePorts are checked like the inference one, and a conflict names the key
// that moves it.
TEST_CASE("node_port_conflicts: every claimed port of a default deployment, each naming its key") {
  const auto claims = render::node_port_claims(parse(valid_config()), {});
  REQUIRE(claims.size() == 3);
  json::array services{service("team-b", "holder-obs", 31017), service("team-b", "holder-ctl", 31027)};
  const auto conflicts = operator_rules::node_port_conflicts(claims, services);
  REQUIRE(conflicts.size() == 2);
  CHECK(conflicts[0].claim.service == "obs-mindie-motor-vllm-0-coordinator");
  CHECK(conflicts[0].claim.key == "motor_deploy_config.obs_node_port");
  CHECK(conflicts[0].holder_name == "holder-obs");
  CHECK(conflicts[1].claim.service == "obs-mindie-motor-vllm-0-controller");
  CHECK(conflicts[1].claim.key == "motor_deploy_config.controller_obs_node_port");
  CHECK(conflicts[1].holder_name == "holder-ctl");
}

TEST_CASE("free_node_ports: the first free port upward from each, wrapping in 30000..32767, none twice") {
  const std::vector<render::NodePortClaim> wanted = {{"a", "s1", 31015, "k1"}, {"a", "s2", 31015, "k2"}};
  CHECK(operator_rules::free_node_ports(wanted, {31015, 31016, 31018}) == std::vector<int>{31017, 31019});
  const std::vector<render::NodePortClaim> top = {{"a", "s", 32767, "k"}};
  CHECK(operator_rules::free_node_ports(top, {32767, 30000}) == std::vector<int>{30001});
  std::set<int> all;
  for (int p = 30000; p <= 32767; ++p) all.insert(p);
  CHECK(operator_rules::free_node_ports(top, all) == std::vector<int>{0});
  json::array services{service("x", "a", 31015), service("y", "b", 30001)};
  CHECK(operator_rules::held_node_ports(services) == std::set<int>{30001, 31015});
}

TEST_CASE("gang_roles: the roles labelled gang-schedule true") {
  auto cfg = valid_config();
  CHECK(operator_rules::gang_roles(test::render_iss(parse(cfg))).empty());
  deploy_of(cfg)["single_d_instance_pod_num"] = 2;
  CHECK(operator_rules::gang_roles(test::render_iss(parse(cfg))) == std::vector<std::string>{"decode"});
}

TEST_CASE("fixed_at_creation_changes: gang flips and schedule policy changes of live roles") {
  auto cfg = valid_config();
  const auto live = test::render_iss(parse(cfg));
  json::array sets{instance_set_of(live, "prefill"), instance_set_of(live, "decode")};
  CHECK(operator_rules::fixed_at_creation_changes(live, sets).empty());

  deploy_of(cfg)["single_d_instance_pod_num"] = 2;
  auto changes = operator_rules::fixed_at_creation_changes(test::render_iss(parse(cfg)), sets);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].role == "decode");
  CHECK(changes[0].instance_set == "mindie-motor-vllm-0-decode");
  CHECK(changes[0].live == "false");
  CHECK(changes[0].wanted == "true");

  cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = "800I_A3";
  deploy_of(cfg)["p_pod_npu_num"] = 8;
  deploy_of(cfg)["d_pod_npu_num"] = 8;
  changes = operator_rules::fixed_at_creation_changes(test::render_iss(parse(cfg)), sets);
  REQUIRE(changes.size() == 2);  // prefill and decode
  CHECK(changes[0].live == "chip8-node8");
  CHECK(changes[0].wanted == "chip2-node16");
  // A role without a live InstanceSet is new: nothing to compare.
  CHECK(operator_rules::fixed_at_creation_changes(test::render_iss(parse(cfg)), json::array{}).empty());
}

TEST_CASE("instances_on_other_templates counts workloads whose template hash is not the role's") {
  auto cfg = valid_config();
  deploy_of(cfg)["p_instances_num"] = 3;
  const auto iss = test::render_iss(parse(cfg));
  const auto hash_of = [&](const char* role) {
    return std::string(
        test::pod_annotations_of(test::role_of(iss, role)).at(render::kTemplateHashAnnotation).as_string());
  };
  const std::string hash = hash_of("prefill");
  REQUIRE(hash.size() == 16);
  json::array workloads{workload("prefill", 0, hash), workload("prefill", 1, "0123456789abcdef"),
                        workload("prefill", 2, ""), workload("prefill", 3, ""),  // 3: removed by this deploy
                        workload("decode", 0, hash_of("decode"))};
  const auto other = operator_rules::instances_on_other_templates(iss, workloads);
  CHECK(other.size() == 1);
  // Another hash, and none recorded; not instance 3, which the role no longer has.
  CHECK(other.at("prefill") == std::vector<std::string>{"statefulset/mindie-motor-vllm-0-prefill-1",
                                                        "statefulset/mindie-motor-vllm-0-prefill-2"});
  CHECK(operator_rules::workload_template_hash(workloads[0]) == hash);
}

TEST_CASE("pod_group_prefix follows the operator's podgroup_manager") {
  CHECK(operator_rules::pod_group_prefix("mindie-motor-vllm", 0, "decode") + "3" == "pg-mindie-motor-vllm-0-decode-3");
  // The instance's workload has the same name without "pg-".
  CHECK(operator_rules::workload_pod_group("mindie-motor-vllm-1-decode-3") == "pg-mindie-motor-vllm-1-decode-3");
}

// Issue 29: decode 2 -> 1 -> 2 on the real operator re-created the new decode-1 StatefulSet every ~10 s, 42 times in
// 4 minutes (rescheduling.go: the record left by the removed instance's pods deletes any later instance of its name).
TEST_CASE("gang_scale_out_refusal: no scale-out onto removed instances until the operator restarted") {
  operator_rules::GangScaleOut s;
  s.ns = "team-a";
  s.role = "decode";
  s.workload_prefix = "mindie-motor-vllm-0-decode-";
  s.from = 1;
  s.to = 2;
  CHECK(operator_rules::gang_scale_out_refusal(s).empty());  // never removed: nothing recorded

  s.removed = {{1, "2026-12-05T06:01:02Z"}};
  const std::string why = operator_rules::gang_scale_out_refusal(s);
  CHECK(why.find("scaling role decode out to 2 instances would start infer-operator's rebuild loop: kubectl-mindie "
                 "removed the instance(s) mindie-motor-vllm-0-decode-1 (removed 2026-12-05T06:01:02Z)") == 0);
  CHECK(why.find("kubectl rollout restart deployment/infer-operator-manager -n mindx-dl") != std::string::npos);
  CHECK(why.find("--operator-restarted") != std::string::npos);
  CHECK(why.find("nothing was changed") != std::string::npos);

  SUBCASE("the restart the user confirms cleared the records") {
    s.operator_restarted = true;
    CHECK(operator_rules::gang_scale_out_refusal(s).empty());
  }
  SUBCASE("pods of a removed instance still going record a fault when they are gone: refused even after a restart") {
    s.operator_restarted = true;
    s.leftover_pods = {{"mindie-motor-vllm-0-decode-1-0", 1},
                       {"mindie-motor-vllm-0-decode-1-1", 1},
                       {"mindie-motor-vllm-0-decode-0-0", 0}};
    const std::string going = operator_rules::gang_scale_out_refusal(s);
    CHECK(going.find("2 pod(s) of removed instances are still going (mindie-motor-vllm-0-decode-1-0, "
                     "mindie-motor-vllm-0-decode-1-1)") != std::string::npos);
    CHECK(going.find("Wait until they are gone") != std::string::npos);
    // A pod of an instance above the new count records its fault after the restart too: --operator-restarted
    // clears every recorded instance, so it must wait as well.
    s.leftover_pods = {{"mindie-motor-vllm-0-decode-3-0", 3}};
    CHECK(operator_rules::gang_scale_out_refusal(s).find("1 pod(s) of removed instances are still going") !=
          std::string::npos);
  }
  SUBCASE("instances removed above the new count do not matter, nor does a scale-in") {
    s.removed = {{3, "2026-12-05T06:01:02Z"}};
    CHECK(operator_rules::gang_scale_out_refusal(s).empty());
    s.removed = {{1, "2026-12-05T06:01:02Z"}};
    s.to = 1;
    CHECK(operator_rules::gang_scale_out_refusal(s).empty());
  }
}

TEST_CASE("removed_gang_instances: the annotation adds removed instances, keeps the first removal, skips junk") {
  json::object ist{{"metadata",
                    {{"annotations",
                      {{operator_rules::kRemovedGangInstancesAnnotation,
                        R"({"1":"2026-12-05T06:00:00Z","x":"junk","123456":"t"})"}}}}}};
  auto removed = operator_rules::removed_gang_instances(json::value(ist));
  CHECK(removed == std::map<int, std::string>{{1, "2026-12-05T06:00:00Z"}});
  CHECK(operator_rules::removed_gang_instances_value(removed, 1, 3, "2026-12-05T07:00:00Z") ==
        R"({"1":"2026-12-05T06:00:00Z","2":"2026-12-05T07:00:00Z"})");
  ist["metadata"].as_object()["annotations"].as_object()[operator_rules::kRemovedGangInstancesAnnotation] = "{not json";
  CHECK(operator_rules::removed_gang_instances(json::value(ist)).empty());
}

// Issue 29: status and deploy advised deleting a gang instance's workload, which starts the loop on the real operator.
TEST_CASE("recreate_advice: rollout restart for a plain role, never a workload delete for a gang role") {
  const std::vector<std::string> old{"statefulset/mindie-motor-vllm-0-decode-0"};
  CHECK(operator_rules::recreate_advice("team-a", "prefill", false, {"deployment/x"}) ==
        "replace it with kubectl mindie rollout restart -n team-a --role prefill, which deletes each such workload "
        "for the operator to make again from the current one, one at a time while the role keeps serving (a "
        "temporary instance first where it runs one)");
  const std::string gang = operator_rules::recreate_advice("team-a", "decode", true, old);
  CHECK(gang.find("kubectl delete") == std::string::npos);
  CHECK(gang.find("do not delete a gang instance's workload: infer-operator would rebuild it in a loop") == 0);
  CHECK(gang.find("instead kubectl mindie rollout restart -n team-a --role decode --stop-operator, which stops "
                  "infer-operator (in every namespace) while each such instance's pods go; or ") != std::string::npos);
  // Instance 0 cannot be scaled below; a delete leaves the operator's records (no InstanceSet deletion it sees).
  CHECK(gang.find("kubectl mindie scale") == std::string::npos);
  CHECK(gang.find("kubectl mindie delete -n team-a --wait, then restart infer-operator, the only thing that clears "
                  "its fault records (kubectl rollout restart deployment/infer-operator-manager -n mindx-dl), and "
                  "deploy again") != std::string::npos);
  const std::string above = operator_rules::recreate_advice("team-a", "union", true,
                                                            {"statefulset/x-0-union-3", "statefulset/x-0-union-2"});
  CHECK(above.find("scale role union below instance 2 (kubectl mindie scale -n team-a --hybrid 2), then, once "
                   "those pods are gone, restart infer-operator") != std::string::npos);
  CHECK(above.find("scale out again with --operator-restarted; or kubectl mindie delete") != std::string::npos);
}
