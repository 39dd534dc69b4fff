// The node preflight's packing (mindie/node_fit.h; PyMotor 7d15c04 U3 and beyond): rendered workloads against
// Node objects.
#include "mindie/node_fit.h"

#include <doctest/doctest.h>

#include "config_test_support.h"
#include "mindie/render.h"
#include "render_test_support.h"

using namespace mindie;
using namespace mindie::test;
namespace json = boost::json;

namespace {

const std::vector<std::string> kResources = {"huawei.com/Ascend910", "huawei.com/npu"};

// A Node as the API server returns it.
json::object node(const std::string& name, const json::object& labels, const std::string& npus,
                  bool unschedulable = false, const char* resource = "huawei.com/Ascend910") {
  json::object n{{"metadata", {{"name", name}, {"labels", labels}}},
                 {"status", {{"allocatable", {{"cpu", "188"}, {resource, npus}}}}}};
  if (unschedulable) n["spec"] = json::object{{"unschedulable", true}};
  return n;
}

const json::object kA2{{"accelerator", "huawei-Ascend910"},
                       {"accelerator-type", "module-910b-8"},
                       {"kubernetes.io/hostname", "x"}};

std::vector<node_fit::NodeSupply> supplies(const std::vector<json::object>& nodes) {
  std::vector<node_fit::NodeSupply> out;
  for (const auto& n : nodes) out.push_back(node_fit::node_supply(n, kResources));
  return out;
}

// What deploy writes for the config's deploy_mode (the ConfigMap first; it asks for no NPU).
std::vector<json::object> rendered(const config::UserConfig& cfg) {
  switch (cfg.deploy_mode) {
    case config::DeployMode::MultiDeployment: return render::render_multi_deployment(cfg, nullptr, {});
    case config::DeployMode::SingleContainer: return render::render_single_container(cfg, nullptr, {});
    case config::DeployMode::InferServiceSet: break;
  }
  return render::render_infer_service_set(cfg, nullptr, {});
}

std::vector<node_fit::Shortfall> check(const json::object& raw, const std::vector<json::object>& nodes) {
  const auto cfg = parse(raw);
  return node_fit::pack(node_fit::npu_demands(rendered(cfg), kResources), supplies(nodes));
}

}  // namespace

TEST_CASE("node_fit: engine pods of an InferServiceSet, instances x pods, grouped by role") {
  auto raw = valid_config();  // 800I_A2, 1 prefill + 1 decode, 8 NPUs each
  deploy_of(raw)["p_instances_num"] = 3;
  deploy_of(raw)["single_p_instance_pod_num"] = 2;
  deploy_of(raw)["p_pod_npu_num"] = 4;
  const auto demands = node_fit::npu_demands(rendered(parse(raw)), kResources);
  REQUIRE(demands.size() == 2);  // the controller and coordinator ask for no NPU
  CHECK(demands[0].role == "prefill");
  CHECK(demands[0].pods == 6);
  CHECK(demands[0].npus == 4);
  CHECK(demands[0].resource == "huawei.com/Ascend910");
  CHECK(demands[0].selector == std::vector<std::pair<std::string, std::string>>{{"accelerator", "huawei-Ascend910"},
                                                                                {"accelerator-type", "module-910b-8"}});
  CHECK(demands[1].role == "decode");
  CHECK(demands[1].pods == 1);
  CHECK(demands[1].npus == 8);
  // multi_deployment: one Deployment per instance, counted together under the role.
  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  const auto md = node_fit::npu_demands(rendered(parse(raw)), kResources);
  REQUIRE(md.size() == 2);
  CHECK(md[0].role == "prefill");
  CHECK(md[0].pods == 6);
}

TEST_CASE("node_fit: roles sharing nodes are packed together, node by node") {
  auto raw = valid_config();
  deploy_of(raw)["p_instances_num"] = 2;
  deploy_of(raw)["p_pod_npu_num"] = 4;  // 2 prefill pods x 4, 1 decode pod x 8
  // 16 NPUs on one node: everything fits there.
  CHECK(check(raw, {node("a", kA2, "16")}).empty());
  // Two nodes of 8: decode takes one, both prefill pods the other.
  CHECK(check(raw, {node("a", kA2, "8"), node("b", kA2, "8")}).empty());
  // Two nodes of 6: the 8-NPU decode pod fits nowhere although 12 NPUs are free.
  auto s = check(raw, {node("a", kA2, "6"), node("b", kA2, "6")});
  REQUIRE(s.size() == 1);
  CHECK(s[0].message() ==
        "role decode: 1 pod x 8 huawei.com/Ascend910 on nodes labelled accelerator=huawei-Ascend910,"
        "accelerator-type=module-910b-8: the 2 matching nodes (12 allocatable) take 0 of them alongside the other "
        "roles; 1 pod (8 NPUs) does not fit");
  // One node of 12: decode first (largest pods first), then one prefill pod; one prefill pod is left.
  s = check(raw, {node("a", kA2, "12")});
  REQUIRE(s.size() == 1);
  CHECK(s[0].demand.role == "prefill");
  CHECK(s[0].placed == 1);
  CHECK(s[0].message() ==
        "role prefill: 2 pods x 4 huawei.com/Ascend910 on nodes labelled accelerator=huawei-Ascend910,"
        "accelerator-type=module-910b-8: the 1 matching node (12 allocatable) takes 1 of them alongside the other "
        "roles; 1 pod (4 NPUs) does not fit");
}

TEST_CASE("node_fit: labels must all match; cordoned nodes and other resources do not count") {
  auto raw = valid_config();
  const json::object a3{{"accelerator", "huawei-Ascend910"}, {"accelerator-type", "module-a3-16"}};
  auto s = check(raw, {node("a3", a3, "16"), node("cordoned", kA2, "16", true)});
  REQUIRE(s.size() == 2);
  CHECK(s[0].matching_nodes == 0);
  CHECK(s[0].message() ==
        "role prefill: 1 pod x 8 huawei.com/Ascend910 on nodes labelled accelerator=huawei-Ascend910,"
        "accelerator-type=module-910b-8: no schedulable node has these labels (label the nodes, or check "
        "motor_deploy_config.hardware_type and the nodeSelector overrides)");
  // A5 pods ask for huawei.com/npu: a node with the labels but only Ascend910 NPUs has no room.
  deploy_of(raw)["hardware_type"] = "350-Atlas-16";
  const json::object a5{{"accelerator", "huawei-npu"}, {"accelerator-type", "350-Atlas-16"}};
  s = check(raw, {node("x", a5, "16")});
  REQUIRE(s.size() == 2);
  CHECK(s[0].matching_nodes == 1);
  CHECK(s[0].matching_npus == 0);
  CHECK(check(raw, {node("x", a5, "16", false, "huawei.com/npu")}).empty());
  // PD heterogeneous: prefill and decode need their own label too.
  deploy_of(raw)["enable_pd_heterogeneous"] = true;
  json::object pr = a5, dt = a5;
  pr["card_type"] = "Ascend950PR";
  dt["card_type"] = "Ascend950DT";
  s = check(raw, {node("pr", pr, "16", false, "huawei.com/npu"), node("x", a5, "16", false, "huawei.com/npu")});
  REQUIRE(s.size() == 1);
  CHECK(s[0].demand.role == "decode");
  CHECK(
      check(raw, {node("pr", pr, "8", false, "huawei.com/npu"), node("dt", dt, "8", false, "huawei.com/npu")}).empty());
}

TEST_CASE("node_fit: Node objects with odd quantities or missing fields read as no room, never throw") {
  const auto n = node_fit::node_supply(json::parse(R"({"metadata":{"name":"n"},
      "status":{"allocatable":{"huawei.com/Ascend910":"8k","huawei.com/npu":"abc"}}})")
                                           .as_object(),
                                       kResources);
  CHECK(n.name == "n");
  CHECK(n.allocatable.at("huawei.com/Ascend910") == 8000);
  CHECK(n.allocatable.at("huawei.com/npu") == 0);
  // Beyond any real server (and beyond long long): capped, not undefined.
  const auto huge = node_fit::node_supply(
      json::parse(R"({"status":{"allocatable":{"huawei.com/npu":"100Ei"}}})").as_object(), kResources);
  CHECK(huge.allocatable.at("huawei.com/npu") == 1000000);
  const auto empty = node_fit::node_supply(json::object{}, kResources);
  CHECK(empty.labels.empty());
  CHECK(empty.allocatable.empty());
  CHECK_FALSE(empty.unschedulable);
  CHECK(node_fit::npu_demands({json::object{{"kind", "Deployment"}}, json::object{{"kind", 3}}}, kResources).empty());
}
