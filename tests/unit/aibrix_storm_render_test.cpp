// Rendering of the StormService and its Services (aibrix/storm_render.h): every label/annotation rule, the
// Services, scale plans, and a schema check of the StormService against the shared AIBrix CRD.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "aibrix/storm_render.h"
#include "aibrix_test_support.h"
#include "config_test_support.h"
#include "render_test_support.h"
#include "support/openapi_schema.h"
#include "util/yaml_json.h"

using namespace mindie;
using mindie::test::aibrix_config;
using mindie::test::aibrix_parse;
using mindie::test::role_cfg;
using mindie::test::ss_of;
using mindie::test::to_nlohmann;
namespace json = boost::json;

namespace {

json::object storm_of(const json::object& cfg) { return aibrix::render_storm_service(aibrix_parse(cfg)).front(); }

const json::object& role_of(const json::object& ss, std::string_view name) {
  for (const auto& r : ss.at("spec").at("template").at("spec").at("roles").as_array())
    if (r.at("name") == json::string(name)) return r.as_object();
  throw std::runtime_error("no role " + std::string(name));
}
const json::object& pod_labels(const json::object& role) {
  return role.at("template").at("metadata").at("labels").as_object();
}
const json::object& pod_annotations(const json::object& role) {
  return role.at("template").at("metadata").at("annotations").as_object();
}
const json::object& pod_spec(const json::object& role) { return role.at("template").at("spec").as_object(); }
const json::object& container(const json::object& role) { return pod_spec(role).at("containers").at(0).as_object(); }
std::string env_of(const json::object& role, std::string_view name) {
  for (const auto& e : container(role).at("env").as_array())
    if (e.at("name") == json::string(name)) {
      const auto& o = e.as_object();
      return o.contains("value") ? std::string(o.at("value").as_string()) : "<from field>";
    }
  return "";
}
std::string min_available_of(const json::object& ss, std::string_view role) {
  return std::string(pod_annotations(role_of(ss, role)).at(mindcluster::kMinAvailableAnnotation).as_string());
}

// The config with these shapes (replicas, podGroupSize) for prefill and decode; dp/tp kept consistent.
json::object shaped(int p_replicas, int p_group, int d_replicas, int d_group) {
  auto c = aibrix_config();
  using Shape = std::tuple<const char*, int, int>;
  for (auto [role, replicas, group] :
       std::initializer_list<Shape>{{"prefill", p_replicas, p_group}, {"decode", d_replicas, d_group}}) {
    auto& r = role_cfg(c, role);
    r["replicas"] = replicas;
    r["podGroupSize"] = group;
    r["dp_size"] = group;
  }
  return c;
}

// A distributed-DP config with routing: prefill 2 × 1 pod (2 DP ranks), decode 1 × 2 pods (4 ranks, 2 per pod).
json::object distributed() {
  auto c = aibrix_config();
  ss_of(c)["distributed_dp"] = true;
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1", "server_port": 9000})");
  auto& p = role_cfg(c, "prefill");
  p["replicas"] = 2;
  p["dp_size"] = 2;
  p["tp_size"] = 4;
  auto& d = role_cfg(c, "decode");
  d["podGroupSize"] = 2;
  d["dp_size"] = 4;
  d["tp_size"] = 4;
  return c;
}

}  // namespace

TEST_CASE("aibrix render: schedule_minAvailable, the three cases") {
  SUBCASE("(a) a role with groups gets its podGroupSize; (b) the single-pod role its own replicas") {
    const auto ss = storm_of(shaped(3, 1, 2, 4));
    CHECK(min_available_of(ss, "decode") == "4");
    CHECK(min_available_of(ss, "prefill") == "3");
  }
  SUBCASE("(a) for both roles when both use groups") {
    const auto ss = storm_of(shaped(3, 2, 5, 4));
    CHECK(min_available_of(ss, "prefill") == "2");
    CHECK(min_available_of(ss, "decode") == "4");
  }
  SUBCASE("(c) both single-pod: the sum of both roles' replicas") {
    const auto ss = storm_of(shaped(3, 1, 2, 1));
    CHECK(min_available_of(ss, "prefill") == "5");
    CHECK(min_available_of(ss, "decode") == "5");
  }
}

TEST_CASE("aibrix render: fault-rescheduling labels and annotations follow podGroupSize") {
  auto c = shaped(2, 1, 1, 2);
  ss_of(c)["fault_scheduling"] = "grace";
  ss_of(c)["fault_retry_times"] = 7;
  const auto ss = storm_of(c);
  const auto& prefill = role_of(ss, "prefill");
  const auto& decode = role_of(ss, "decode");

  for (const auto* role : {&prefill, &decode}) {
    CHECK(pod_labels(*role).at(mindcluster::kFaultSchedulingLabel) == "grace");
    CHECK(pod_labels(*role).at(mindcluster::kFaultRetryTimesLabel) == "7");
    CHECK(pod_labels(*role).at(aibrix::kModelNameLabel) == "qwen3");
    CHECK(pod_labels(*role).at(aibrix::kModelPortLabel) == "8080");
    CHECK(pod_labels(*role).at(aibrix::kModelEngineLabel) == "vllm");
    CHECK(pod_spec(*role).at("schedulerName") == "volcano");
    CHECK(pod_spec(*role).at("restartPolicy") == "Never");
    CHECK(role->at("stateful") == true);
  }
  // podGroupSize 1: pod-level rescheduling, not escalated to the job.
  CHECK(pod_labels(prefill).at(mindcluster::kPodReschedulingLabel) == "on");
  CHECK(pod_annotations(prefill).at(mindcluster::kRecoverPolicyPathAnnotation) == "pod");
  // podGroupSize > 1: neither (MindCluster: do not configure pod-rescheduling for groups).
  CHECK_FALSE(pod_labels(decode).contains(mindcluster::kPodReschedulingLabel));
  CHECK_FALSE(pod_annotations(decode).contains(mindcluster::kRecoverPolicyPathAnnotation));
  CHECK(prefill.at("podGroupSize") == 1);
  CHECK(decode.at("podGroupSize") == 2);

  ss_of(c)["fault_scheduling"] = "force";
  CHECK(pod_labels(role_of(storm_of(c), "decode")).at(mindcluster::kFaultSchedulingLabel) == "force");
}

TEST_CASE("aibrix render: the StormService object, NPUs and node selection") {
  auto c = aibrix_config();
  role_cfg(c, "decode")["hardware_type"] = "800I_A3";
  role_cfg(c, "decode")["npu_num"] = 16;
  role_cfg(c, "prefill")["labels"] = json::parse(R"({"team": "a"})");
  role_cfg(c, "prefill")["annotations"] = json::parse(R"({"note": "x y"})");
  role_cfg(c, "prefill")["nodeSelector"] = json::parse(R"({"host-arch": "huawei-arm"})");
  const auto objs = aibrix::render_storm_service(aibrix_parse(c));
  REQUIRE(objs.size() == 1);  // no routing, no Services
  const auto& ss = objs.front();

  CHECK(ss.at("apiVersion") == "orchestration.aibrix.ai/v1alpha1");
  CHECK(ss.at("kind") == "StormService");
  CHECK(ss.at("metadata").at("name") == "demo");
  CHECK(ss.at("metadata").at("namespace") == "team-a");
  CHECK(ss.at("metadata").at("labels").at(aibrix::kManagedByLabel) == "kubectl-mindie");
  CHECK_FALSE(ss.contains("status"));
  const auto& spec = ss.at("spec").as_object();
  CHECK(spec.at("replicas") == 1);
  CHECK(spec.at("stateful") == true);
  CHECK(spec.at("updateStrategy").at("type") == "InPlaceUpdate");
  CHECK(spec.at("selector").at("matchLabels") == spec.at("template").at("metadata").at("labels"));

  const auto& prefill = role_of(ss, "prefill");
  const auto& decode = role_of(ss, "decode");
  // From the role's hardware profile: NPU resource, node selector, schedule_policy, sp-block.
  CHECK(container(prefill).at("resources").at("requests").at("huawei.com/Ascend910") == 8);
  CHECK(container(prefill).at("resources").at("limits") == container(prefill).at("resources").at("requests"));
  CHECK(container(decode).at("resources").at("limits").at("huawei.com/Ascend910") == 16);
  CHECK(pod_spec(prefill).at("nodeSelector") == json::parse(R"({"accelerator": "huawei-Ascend910",
        "accelerator-type": "module-910b-8", "host-arch": "huawei-arm"})"));
  CHECK(pod_spec(decode).at("nodeSelector") ==
        json::parse(R"({"accelerator": "huawei-Ascend910", "accelerator-type": "module-a3-16"})"));
  CHECK(pod_annotations(prefill).at(mindcluster::kSchedulePolicyAnnotation) == "chip8-node8");
  CHECK(pod_annotations(decode).at(mindcluster::kSchedulePolicyAnnotation) == "chip2-node16");
  CHECK_FALSE(pod_annotations(prefill).contains(mindcluster::kSpBlockAnnotation));
  CHECK(pod_annotations(decode).at(mindcluster::kSpBlockAnnotation) == "16");  // 800I_A3: NPUs per pod
  // The profile's MindIE rank-table label is not applied (MindCluster's StormService pods carry none).
  CHECK_FALSE(pod_labels(decode).contains("ring-controller.atlas"));

  // User keys come after ours, unchanged.
  const auto& labels = pod_labels(prefill);
  CHECK(std::prev(labels.end())->key() == "team");
  CHECK(labels.begin()->key() == aibrix::kModelNameLabel);
  CHECK(pod_annotations(prefill).at("note") == "x y");

  // The env start_server.sh reads.
  CHECK(env_of(prefill, "DISTRIBUTED_DP") == "false");
  CHECK(env_of(prefill, "PREFILL_NUM") == "1");
  CHECK(env_of(decode, "DECODE_TP_SIZE") == "8");
  CHECK(env_of(decode, "MODEL_PATH") == "/mnt/models/qwen3");
  CHECK(env_of(decode, "POD_IP") == "<from field>");
  CHECK(env_of(decode, "ASCEND_VISIBLE_DEVICES") == "<from field>");
  CHECK(container(decode).at("args") == json::array{"bash start_server.sh"});
  CHECK(container(decode).at("name") == "decode");

  // The roles are in Role order, so the pointers the lead patches are stable.
  CHECK(aibrix::role_replicas_pointer(ss, "prefill") == "/spec/template/spec/roles/0/replicas");
  CHECK(aibrix::role_replicas_pointer(ss, "decode") == "/spec/template/spec/roles/1/replicas");
  CHECK(aibrix::role_replicas_pointer(aibrix_parse(c), aibrix::Role::Decode) == "/spec/template/spec/roles/1/replicas");
  CHECK_THROWS_AS(aibrix::role_replicas_pointer(ss, "routing"), std::invalid_argument);
  CHECK_THROWS_AS(aibrix::role_replicas_pointer(aibrix_parse(c), aibrix::Role::Routing), std::invalid_argument);
}

TEST_CASE("aibrix render: sp-block on SuperPoDs covers the whole instance") {
  auto c = shaped(1, 1, 1, 2);
  ss_of(c)["hardware_type"] = "900_A3_SuperPoD";
  role_cfg(c, "prefill")["npu_num"] = 16;
  role_cfg(c, "decode")["npu_num"] = 16;
  const auto ss = storm_of(c);
  CHECK(pod_annotations(role_of(ss, "prefill")).at(mindcluster::kSpBlockAnnotation) == "16");
  CHECK(pod_annotations(role_of(ss, "decode")).at(mindcluster::kSpBlockAnnotation) == "32");
  CHECK(pod_annotations(role_of(ss, "decode")).at(mindcluster::kSchedulePolicyAnnotation) == "chip2-node16-sp");
  CHECK(pod_spec(role_of(ss, "decode")).at("nodeSelector").at("accelerator-type") == "module-a3-16-super-pod");
}

TEST_CASE("aibrix render: the routing role") {
  const auto cfg = aibrix_parse(distributed());
  const auto ss = aibrix::render_storm_service(cfg).front();
  const auto& routing = role_of(ss, "routing");
  CHECK(aibrix::role_replicas_pointer(ss, "routing") == "/spec/template/spec/roles/2/replicas");
  CHECK(aibrix::role_replicas_pointer(cfg, aibrix::Role::Routing) == "/spec/template/spec/roles/2/replicas");
  CHECK(routing.at("stateful") == true);
  CHECK_FALSE(routing.contains("podGroupSize"));
  // No Volcano, no NPUs, no fault labels: the proxy must not join the engines' PodGroup.
  CHECK_FALSE(pod_spec(routing).contains("schedulerName"));
  CHECK_FALSE(pod_spec(routing).contains("restartPolicy"));
  CHECK_FALSE(container(routing).contains("resources"));
  CHECK_FALSE(routing.at("template").as_object().contains("metadata"));
  CHECK(env_of(routing, "PROXY_PORT") == "9000");
  CHECK(env_of(routing, "SERVER_PORT") == "8080");
  CHECK(env_of(routing, "PREFILL_NUM") == "2");
  CHECK(env_of(routing, "DECODE_POD") == "2");
  CHECK(env_of(routing, "DECODE_DP_SIZE") == "4");
  CHECK(env_of(routing, "DISTRIBUTED_DP") == "true");
  CHECK(container(routing).at("args") == json::array{"bash start_proxy.sh"});
}

TEST_CASE("aibrix render: per-replica Services for the routing proxy") {
  SUBCASE("distributed DP: one Service per pod, one port per local DP rank") {
    const auto objs = aibrix::render_storm_service(aibrix_parse(distributed()));
    REQUIRE(objs.size() == 1 + 2 + 2);
    std::vector<std::string> names;
    for (std::size_t i = 1; i < objs.size(); ++i) names.emplace_back(objs[i].at("metadata").at("name").as_string());
    CHECK(names == std::vector<std::string>{"demo-prefill-0", "demo-prefill-1", "demo-decode-0-0", "demo-decode-0-1"});

    const auto& p1 = objs[2];
    CHECK(p1.at("apiVersion") == "v1");
    CHECK(p1.at("kind") == "Service");
    CHECK(p1.at("metadata").at("namespace") == "team-a");
    CHECK(p1.at("spec").at("type") == "ClusterIP");
    CHECK(p1.at("spec").at("selector") == json::parse(R"({"storm-service-name": "demo", "role-name": "prefill",
        "stormservice.orchestration.aibrix.ai/role-replica-index": "1"})"));
    CHECK(p1.at("spec").at("ports") == json::parse(R"([
        {"name": "http-0", "port": 8080, "targetPort": 8080, "protocol": "TCP"},
        {"name": "http-1", "port": 8081, "targetPort": 8081, "protocol": "TCP"}])"));
    const auto& d01 = objs[4];
    CHECK(d01.at("spec").at("selector").at(aibrix::kPodGroupIndexLabel) == "1");
    CHECK(d01.at("spec").at("ports").as_array().size() == 2);  // dp_size 4 over 2 pods
    for (std::size_t i = 1; i < objs.size(); ++i) {
      const auto& labels = objs[i].at("metadata").at("labels").as_object();
      CHECK(labels.at(aibrix::kManagedByLabel) == "kubectl-mindie");
      for (const auto& kv : objs[i].at("spec").at("selector").as_object()) CHECK(labels.at(kv.key()) == kv.value());
    }
  }
  SUBCASE("without distributed DP: one Service per replica on the group's pod 0") {
    auto c = distributed();
    ss_of(c)["distributed_dp"] = false;
    const auto objs = aibrix::render_storm_service(aibrix_parse(c));
    REQUIRE(objs.size() == 1 + 2 + 1);
    CHECK(objs[1].at("metadata").at("name") == "demo-prefill-0");
    CHECK_FALSE(objs[1].at("spec").at("selector").as_object().contains(aibrix::kPodGroupIndexLabel));
    // start_proxy.sh looks up "<app>-<role>-<i>-0" for groups.
    CHECK(objs[3].at("metadata").at("name") == "demo-decode-0-0");
    CHECK(objs[3].at("spec").at("selector").at(aibrix::kPodGroupIndexLabel) == "0");
    CHECK(objs[3].at("spec").at("ports") ==
          json::parse(R"([{"name": "http", "port": 8080, "targetPort": 8080, "protocol": "TCP"}])"));
  }
  SUBCASE("no routing role, no Services") {
    CHECK(aibrix::render_storm_service(aibrix_parse(aibrix_config())).size() == 1);
  }
  CHECK(aibrix::services_selector("demo") == "storm-service-name=demo,app.kubernetes.io/managed-by=kubectl-mindie");
  CHECK(aibrix::pods_selector("demo") == "storm-service-name=demo");
}

TEST_CASE("aibrix render: render_services reads a live object and says what is missing") {
  const auto ss = aibrix::render_storm_service(aibrix_parse(distributed())).front();
  json::value broken = ss;
  broken.at_pointer("/spec/template/spec/roles/1").as_object().erase("replicas");
  CHECK_THROWS_WITH_AS(aibrix::render_services(broken.as_object()),
                       doctest::Contains("spec.template.spec.roles[1].replicas is missing"), std::invalid_argument);
  broken = ss;
  broken.at_pointer("/spec/template/spec/roles/0/template/spec/containers/0/env").as_array().clear();
  CHECK_THROWS_WITH_AS(aibrix::render_services(broken.as_object()), doctest::Contains("DISTRIBUTED_DP"),
                       std::invalid_argument);
  CHECK_THROWS_AS(aibrix::render_services(json::object{{"spec", 1}}), std::invalid_argument);
}

TEST_CASE("aibrix render: scale plans guard every change and match a fresh render") {
  // Renders `c`, scales `role` to `to` with plan_scale, applies the patch, and compares with a render of the
  // config carrying the new count.
  const auto check_scale = [](json::object c, const char* role, int to, std::vector<std::string> restarted) {
    const auto live = aibrix::render_storm_service(aibrix_parse(c));
    const auto plan = aibrix::plan_scale(live.front(), role, to);
    CHECK(plan.to == to);
    CHECK(plan.restarted_roles == restarted);
    if (std::string(role) == "routing") ss_of(c)["routing"].as_object()["replicas"] = to;
    else role_cfg(c, role)["replicas"] = to;
    const auto want = aibrix::render_storm_service(aibrix_parse(c));
    CHECK(mindie::test::apply_patch(live.front(), plan.patch) == json::value(want.front()));
    REQUIRE(plan.services.size() + 1 == want.size());
    for (std::size_t i = 0; i < plan.services.size(); ++i) CHECK(json::value(plan.services[i]) == want[i + 1]);
    // Every replace is preceded by a test of the value it replaces.
    const auto& ops = plan.patch;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].at("op") == "replace") {
        REQUIRE(i > 0);
        CHECK(ops[i - 1].at("op") == "test");
        CHECK(ops[i - 1].at("path") == ops[i].at("path"));
      }
    return plan;
  };

  SUBCASE("(c) scaling prefill changes both roles' minAvailable and the PREFILL_NUM env everywhere") {
    const auto plan = check_scale(shaped(2, 1, 1, 1), "prefill", 3, {"prefill", "decode"});
    CHECK(plan.from == 2);
    CHECK(plan.patch.at(0) == json::parse(R"({"op": "test", "path": "/spec/template/spec/roles/0/name",
                                              "value": "prefill"})"));
    CHECK(plan.patch.at(1) == json::parse(R"({"op": "test", "path": "/spec/template/spec/roles/0/replicas",
                                              "value": 2})"));
    CHECK(plan.patch.at(2) == json::parse(R"({"op": "replace", "path": "/spec/template/spec/roles/0/replicas",
                                              "value": 3})"));
    bool decode_min = false;
    for (const auto& op : plan.patch)
      if (op.at("path") ==
              "/spec/template/spec/roles/1/template/metadata/annotations/huawei.com~1schedule_minAvailable" &&
          op.at("op") == "replace")
        decode_min = op.at("value") == "4";
    CHECK(decode_min);
  }
  SUBCASE("(b) scaling the single-pod role changes only its own minAvailable") {
    auto c = shaped(2, 1, 1, 2);
    const auto plan = check_scale(c, "prefill", 1, {"prefill", "decode"});  // decode: PREFILL_NUM env
    for (const auto& op : plan.patch)
      CHECK(op.at("path").as_string().find("roles/1/template/metadata") == json::string::npos);
  }
  SUBCASE("(a) scaling a grouped role changes no minAvailable") {
    const auto plan = check_scale(shaped(2, 1, 1, 2), "decode", 3, {"prefill", "decode"});
    for (const auto& op : plan.patch) CHECK(op.at("path").as_string().find("minAvailable") == json::string::npos);
  }
  SUBCASE("distributed DP: Services follow the new count") {
    const auto plan = check_scale(distributed(), "prefill", 4, {"prefill", "decode", "routing"});
    CHECK(plan.services.size() == 4 + 2);
    check_scale(distributed(), "decode", 2, {"prefill", "decode", "routing"});
  }
  SUBCASE("routing: only its replicas") {
    const auto plan = check_scale(distributed(), "routing", 2, {});
    CHECK(plan.patch.size() == 3);
  }
  SUBCASE("no change, no patch") {
    const auto live = aibrix::render_storm_service(aibrix_parse(distributed()));
    const auto plan = aibrix::plan_scale(live.front(), "decode", 1);
    CHECK(plan.patch.empty());
    CHECK(plan.from == 1);
    CHECK(plan.services.size() == live.size() - 1);
  }
}

TEST_CASE("aibrix render: scale plans fail on drift and bad requests") {
  const auto live = aibrix::render_storm_service(aibrix_parse(shaped(2, 1, 1, 1))).front();
  const auto plan = aibrix::plan_scale(live, "decode", 2);
  // Someone scaled prefill in between: the guarded patch no longer applies.
  json::value moved = live;
  moved.at_pointer("/spec/template/spec/roles/0/replicas") = 5;
  CHECK_THROWS_AS(mindie::test::apply_patch(moved, plan.patch), std::runtime_error);
  // The roles were reordered: the name test fails.
  json::value reordered = live;
  auto& roles = reordered.at_pointer("/spec/template/spec/roles").as_array();
  std::swap(roles[0], roles[1]);
  CHECK_THROWS_AS(mindie::test::apply_patch(reordered, plan.patch), std::runtime_error);

  CHECK_THROWS_WITH_AS(aibrix::plan_scale(live, "decode", 0), doctest::Contains("1..64"), std::invalid_argument);
  CHECK_THROWS_AS(aibrix::plan_scale(live, "decode", aibrix::kMaxRoleReplicas + 1), std::invalid_argument);
  CHECK_THROWS_WITH_AS(aibrix::plan_scale(live, "coordinator", 2), doctest::Contains("unknown role"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(aibrix::plan_scale(live, "routing", 2), doctest::Contains("no role \"routing\""),
                       std::invalid_argument);
  json::value no_annotation = live;
  no_annotation.at_pointer("/spec/template/spec/roles/1/template/metadata/annotations").as_object().clear();
  CHECK_THROWS_WITH_AS(aibrix::plan_scale(no_annotation.as_object(), "prefill", 3),
                       doctest::Contains("schedule_minAvailable"), std::invalid_argument);
}

TEST_CASE("aibrix render: the StormService satisfies the shared CRD schema") {
  const auto crds = testing::load_crd_schemas(std::string(MINDIE_SHARED_DIR) +
                                              "/reference/crds/orchestration.aibrix.ai_stormservices.yaml");
  const testing::CrdVersionSchema* schema = nullptr;
  for (const auto& crd : crds)
    if (crd.kind == "StormService" && crd.version == "v1alpha1") schema = &crd;
  REQUIRE(schema != nullptr);
  CHECK(schema->group == aibrix::kGroup);
  CHECK(schema->plural == aibrix::kPlural);

  json::object c = aibrix_config();
  SUBCASE("A2, single-pod roles, no routing") {}
  SUBCASE("distributed DP with routing, groups and user keys") {
    c = distributed();
    role_cfg(c, "decode")["labels"] = json::parse(R"({"team": "a"})");
    role_cfg(c, "decode")["nodeSelector"] = json::parse(R"({"host-arch": "huawei-arm"})");
    ss_of(c)["routing"].as_object()["annotations"] = json::parse(R"({"note": "x"})");
    ss_of(c)["routing"].as_object()["nodeSelector"] = json::parse(R"({"node-role": "cpu"})");
  }
  SUBCASE("the shipped example") {
    c = util::yaml_to_json(
            mindie::test::read_text(std::string(MINDIE_SOURCE_DIR) + "/examples/aibrix/stormservice.yaml"), "example")
            .as_object();
  }
  const auto objs = aibrix::render_storm_service(aibrix_parse(c));
  const auto violations = testing::validate_schema(schema->schema, to_nlohmann(objs.front()));
  for (const auto& v : violations) INFO(v.field << " " << v.reason << " " << v.message);
  CHECK(violations.empty());

  // Every label value is valid, every object survives the -o yaml round trip.
  for (const auto& o : objs) {
    mindie::test::check_label_values(o, std::string(o.at("kind").as_string()));
    CHECK(util::yaml_to_json(util::json_to_yaml(o), "rendered") == json::value(o));
  }

  // The check is not vacuous: a wrongly typed role field is caught.
  auto broken = to_nlohmann(objs.front());
  broken["spec"]["template"]["spec"]["roles"][0]["podGroupSize"] = 0;
  CHECK_FALSE(testing::validate_schema(schema->schema, broken).empty());
}
