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

namespace {

// A Pod as the API server lists it: bound to `node_name` ("" none), in `phase`, its one container asking for
// `npus` of huawei.com/Ascend910 by `field` ("requests" or "limits").
json::object pod(const std::string& ns, const std::string& node_name, const std::string& npus,
                 const char* field = "requests", const char* phase = "Running") {
  json::object spec{
      {"containers", json::array{json::object{
                         {"name", "c"}, {"resources", {{field, {{"huawei.com/Ascend910", npus}, {"cpu", "2"}}}}}}}}};
  if (!node_name.empty()) spec["nodeName"] = node_name;
  return {{"metadata", {{"name", "p"}, {"namespace", ns}}}, {"spec", spec}, {"status", {{"phase", phase}}}};
}

}  // namespace

TEST_CASE("node_fit: the NPUs a pod holds: bound and not ended; a limit stands for a missing request") {
  auto use = node_fit::pod_use(pod("a", "n1", "4"), kResources);
  REQUIRE(use);
  CHECK(use->node == "n1");
  CHECK(use->namespace_ == "a");
  CHECK(use->npus == std::map<std::string, long long>{{"huawei.com/Ascend910", 4}});
  use = node_fit::pod_use(pod("a", "n1", "8", "limits"), kResources);  // the API server defaults the request
  REQUIRE(use);
  CHECK(use->npus.at("huawei.com/Ascend910") == 8);
  CHECK_FALSE(node_fit::pod_use(pod("a", "", "4"), kResources));                             // Pending, not bound
  CHECK_FALSE(node_fit::pod_use(pod("a", "n1", "4", "requests", "Succeeded"), kResources));  // ended
  CHECK_FALSE(node_fit::pod_use(pod("a", "n1", "4", "requests", "Failed"), kResources));
  CHECK_FALSE(node_fit::pod_use(pod("a", "n1", "0"), kResources));  // no NPU
  CHECK_FALSE(node_fit::pod_use(json::object{{"spec", 3}}, kResources));

  // Containers add up; init containers run one at a time, so the largest counts when it is larger.
  json::object two = pod("a", "n1", "2");
  json::array& containers = two["spec"].as_object()["containers"].as_array();
  containers.push_back(containers[0]);
  two["spec"].as_object()["initContainers"] =
      json::array{json::object{{"name", "i"}, {"resources", {{"limits", {{"huawei.com/Ascend910", "3"}}}}}}};
  CHECK(node_fit::pod_use(two, kResources)->npus.at("huawei.com/Ascend910") == 4);
  two["spec"].as_object()["initContainers"].as_array()[0].as_object()["resources"] =
      json::object{{"requests", {{"huawei.com/Ascend910", "6"}}}};
  CHECK(node_fit::pod_use(two, kResources)->npus.at("huawei.com/Ascend910") == 6);
}

TEST_CASE("node_fit: pods bound to a node take its NPUs; a redeploy's own namespace is freed") {
  auto raw = valid_config();  // 1 prefill pod x 8, 1 decode pod x 8 (the defaults of valid_config)
  std::vector<node_fit::NodeSupply> nodes = supplies({node("a", kA2, "8"), node("b", kA2, "8")});
  const std::vector<node_fit::PodUse> uses = {*node_fit::pod_use(pod("other", "a", "8"), kResources),
                                              *node_fit::pod_use(pod("mindie", "b", "8"), kResources),
                                              *node_fit::pod_use(pod("other", "nowhere", "8"), kResources)};
  const auto demands = node_fit::npu_demands(rendered(parse(raw)), kResources);
  REQUIRE(node_fit::pack(demands, nodes).empty());

  auto freed = nodes;
  node_fit::add_pod_uses(freed, uses, "mindie");  // node b's pod is the redeploy's own: one node free
  CHECK(freed[0].used.at("huawei.com/Ascend910") == 8);
  CHECK(freed[1].used.empty());
  auto s = node_fit::pack(demands, freed);
  REQUIRE(s.size() == 1);
  CHECK(s[0].demand.role == "decode");  // prefill took node b
  CHECK(s[0].matching_used == 8);
  CHECK(s[0].message().find("the 2 matching nodes (16 allocatable, 8 held by the pods on them) take 0 of them") !=
        std::string::npos);

  auto full = nodes;
  node_fit::add_pod_uses(full, uses, "");  // a scale: nothing is freed
  CHECK(node_fit::pack(demands, full).size() == 2);
}

TEST_CASE("node_fit: a scale checks only the pods it adds") {
  const node_fit::PodDemand prefill{"prefill", 2, 8, "huawei.com/Ascend910", {{"accelerator", "x"}}};
  node_fit::PodDemand more = prefill;
  more.pods = 5;
  node_fit::PodDemand other_size = prefill;
  other_size.npus = 4;
  const auto added = node_fit::added_demands({prefill}, {more, other_size});
  REQUIRE(added.size() == 2);
  CHECK(added[0].pods == 3);
  CHECK(added[1].pods == 2);                                  // another pod size is another demand
  CHECK(node_fit::added_demands({more}, {prefill}).empty());  // a scale-in adds nothing
}
