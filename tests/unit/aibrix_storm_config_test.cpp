// The stormservice config model and its validation (aibrix/storm_config.h).
#include <doctest/doctest.h>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "aibrix_test_support.h"
#include "config_test_support.h"

using namespace mindie;
using mindie::test::aibrix_config;
using mindie::test::aibrix_parse;
using mindie::test::aibrix_problems;
using mindie::test::problem_at;
using mindie::test::role_cfg;
using mindie::test::ss_of;
namespace json = boost::json;

namespace {

// CHECKs that `problems` holds one at `path` whose message contains `fragment`.
void expect(const std::vector<validation::Problem>& problems, const std::string& path, const std::string& fragment) {
  const std::string message = problem_at(problems, path);
  CAPTURE(path);
  CAPTURE(message);
  for (const auto& p : problems) INFO(p.path << ": " << p.message);
  REQUIRE_FALSE(message.empty());
  CHECK(message.find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("aibrix config: the shipped example parses with the documented meaning") {
  const auto cfg = aibrix::parse_storm_config(mindie::test::read_text(std::string(MINDIE_SOURCE_DIR) +
                                                                      "/examples/aibrix/stormservice.yaml"),
                                              "stormservice.yaml");
  CHECK(cfg.app_name == "qwen3-pd");
  CHECK(cfg.app_namespace == "vllm-test");
  CHECK(cfg.model_name == "qwen3-moe");
  CHECK(cfg.model_path == "/mnt/models/Qwen3-30B-A3B-Instruct-2507");
  CHECK(cfg.hardware->name == "800I_A3");
  CHECK(cfg.distributed_dp);
  CHECK(cfg.fault_scheduling == aibrix::FaultScheduling::Force);
  CHECK(cfg.fault_retry_times == 3);
  CHECK(cfg.prefill.replicas == 2);
  CHECK(cfg.prefill.dp_size_local() == 2);
  CHECK(cfg.decode.pod_group_size == 2);
  CHECK(cfg.decode.dp_size_local() == 16);
  CHECK(cfg.decode.hardware->name == "800I_A3");
  REQUIRE(cfg.prefill.labels.size() == 1);
  CHECK(cfg.prefill.labels[0] == std::pair<std::string, std::string>{"team", "inference"});
  REQUIRE(cfg.routing.has_value());
  CHECK(cfg.routing->server_port == 8080);
}

TEST_CASE("aibrix config: defaults") {
  auto c = aibrix_config();
  c.erase("app_namespace");
  ss_of(c).erase("distributed_dp");
  // distributed_dp defaults to true (published tooling), which needs routing and dp_size > 1.
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1"})");
  role_cfg(c, "prefill")["dp_size"] = 2;
  role_cfg(c, "prefill")["tp_size"] = 4;
  role_cfg(c, "decode")["dp_size"] = 8;
  role_cfg(c, "decode")["tp_size"] = 1;
  role_cfg(c, "decode").erase("replicas");
  const auto cfg = aibrix_parse(c);
  CHECK(cfg.app_namespace == "default");
  CHECK(cfg.distributed_dp);
  CHECK(cfg.model_dir == "/mnt/models");
  CHECK(cfg.scripts_dir == "/scripts");
  CHECK(cfg.fault_scheduling == aibrix::FaultScheduling::Force);
  CHECK(cfg.fault_retry_times == aibrix::kDefaultFaultRetryTimes);
  CHECK(cfg.decode.replicas == 1);
  CHECK(cfg.decode.pod_group_size == 1);
  CHECK(cfg.routing->replicas == 1);
  CHECK(cfg.routing->server_port == aibrix::kDefaultRoutingPort);
}

TEST_CASE("aibrix config: YAML and JSON spellings of one file give the same model and objects") {
  const std::string yaml = R"(# comment
app_name: demo
app_namespace: team-a
storm_service:
  model_name: qwen3
  model_path: /mnt/models/qwen3
  hardware_type: 800I_A3
  distributed_dp: "true"
  fault_scheduling: grace
  fault_retry_times: 5
  prefill:
    replicas: 2
    podGroupSize: 1
    dp_size: 2
    tp_size: 8
    npu_num: 16
    image: vllm-ascend:test
    labels: {team: a, tier: "1"}
    annotations:
      note: "free text: ok"
    nodeSelector:
      host-arch: huawei-arm
  decode:
    replicas: 1
    podGroupSize: 2
    dp_size: 4
    tp_size: 4
    npu_num: 16
    image: vllm-ascend:test
  routing:
    image: proxy:1
    server_port: 9000
)";
  const std::string json_text = R"({
  "app_name": "demo", "app_namespace": "team-a",
  "storm_service": {
    "model_name": "qwen3", "model_path": "/mnt/models/qwen3", "hardware_type": "800I_A3",
    "distributed_dp": true, "fault_scheduling": "grace", "fault_retry_times": 5,
    "prefill": {"replicas": 2, "podGroupSize": 1, "dp_size": 2, "tp_size": 8, "npu_num": 16,
                "image": "vllm-ascend:test", "labels": {"team": "a", "tier": "1"},
                "annotations": {"note": "free text: ok"}, "nodeSelector": {"host-arch": "huawei-arm"}},
    "decode": {"replicas": 1, "podGroupSize": 2, "dp_size": 4, "tp_size": 4, "npu_num": 16,
               "image": "vllm-ascend:test"},
    "routing": {"image": "proxy:1", "server_port": 9000}
  }
})";
  const auto from_yaml = aibrix::parse_storm_config(yaml, "s.yaml");
  const auto from_json = aibrix::parse_storm_config(json_text, "s.json");
  CHECK(from_yaml.doc.at("storm_service").at("prefill") == from_json.doc.at("storm_service").at("prefill"));
  CHECK(from_yaml.raw == yaml);
  CHECK(from_yaml.fault_scheduling == aibrix::FaultScheduling::Grace);
  const auto a = aibrix::render_storm_service(from_yaml);
  const auto b = aibrix::render_storm_service(from_json);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(json::value(a[i]) == json::value(b[i]));
}

TEST_CASE("aibrix config: every problem is reported at once, with its path") {
  auto c = aibrix_config();
  c["app_name"] = "Demo_App";
  c["app_namespace"] = "-bad";
  c["extra"] = 1;
  auto& ss = ss_of(c);
  ss["model_name"] = "org/model";
  ss["model_path"] = "relative/path";
  ss["hardware_type"] = "800T";
  ss["distributed_dp"] = "yes";
  ss["fault_scheduling"] = "off";
  ss["fault_retry_times"] = -1;
  ss["prefil"] = json::object{};
  auto& p = role_cfg(c, "prefill");
  p["replicas"] = 2.0;
  p["podGroupSize"] = "2";
  p["dp_size"] = 0;
  p["npu_num"] = 17;
  p["image"] = "has space";
  p["tp_size"] = 99;
  p["labels"] = json::parse(R"({"ok": "yes", "bad key!": "x", "n": 3, "v": "not valid!"})");
  auto& d = role_cfg(c, "decode");
  d.erase("npu_num");
  d.erase("image");
  d["podGroupsize"] = 2;
  d["nodeSelector"] = json::parse(R"({"zone": ["a"]})");

  const auto problems = aibrix_problems(c);
  expect(problems, "app_name", "DNS-1035");
  expect(problems, "app_namespace", "DNS-1123");
  expect(problems, "extra", "not a known key; expected one of: app_name, app_namespace, storm_service");
  expect(problems, "storm_service.model_name", "label value");
  expect(problems, "storm_service.model_path", "absolute path");
  expect(problems, "storm_service.hardware_type", "800I_A2, 800I_A3");
  expect(problems, "storm_service.distributed_dp", "true or false");
  expect(problems, "storm_service.fault_scheduling", "force or grace");
  expect(problems, "storm_service.fault_retry_times", "0..100000");
  expect(problems, "storm_service.prefil", "not a known key");
  expect(problems, "storm_service.prefill.replicas", "must be an integer 1..64, got number 2.0");
  expect(problems, "storm_service.prefill.podGroupSize", "integer (unquoted) 1..100, got string \"2\"");
  expect(problems, "storm_service.prefill.dp_size", "1..1600, got 0");
  expect(problems, "storm_service.prefill.npu_num", "1..16");  // no usable profile: the largest bounds the check
  expect(problems, "storm_service.prefill.tp_size", "1..16");
  expect(problems, "storm_service.prefill.image", "whitespace");
  expect(problems, "storm_service.prefill.labels[\"bad key!\"]", "qualified name");
  expect(problems, "storm_service.prefill.labels.n", "must be a string, got integer 3 (quote it)");
  expect(problems, "storm_service.prefill.labels.v", "valid label value");
  expect(problems, "storm_service.decode.npu_num", "is required");
  expect(problems, "storm_service.decode.image", "is required");
  expect(problems, "storm_service.decode.podGroupsize", "not a known key");
  expect(problems, "storm_service.decode.nodeSelector.zone", "must be a string, got a list");
  CHECK(problem_at(problems, "storm_service.prefill.labels.ok").empty());
  // An unusable distributed_dp does not also produce the problems of its default (routing, dp_size > 1).
  CHECK(problem_at(problems, "storm_service.routing").empty());

  // what() lists them all under the source name.
  try {
    aibrix_parse(c);
    FAIL("expected ValidationError");
  } catch (const validation::ValidationError& e) {
    const std::string what = e.what();
    CHECK(what.starts_with("stormservice.yaml: " + std::to_string(problems.size()) + " problems"));
    CHECK(what.find("\n* storm_service.decode.image: is required (a string)") != std::string::npos);
  }
}

TEST_CASE("aibrix config: required sections and the document's own shape") {
  CHECK(problem_at(aibrix_problems(json::object{}), "app_name") == "is required (a string)");
  CHECK(problem_at(aibrix_problems(json::object{}), "storm_service") == "is required (a mapping)");
  auto c = aibrix_config();
  ss_of(c)["decode"] = "none";
  CHECK(problem_at(aibrix_problems(c), "storm_service.decode") == "must be a mapping, got string \"none\"");
  ss_of(c).erase("decode");
  CHECK(problem_at(aibrix_problems(c), "storm_service.decode") == "is required (a mapping)");

  CHECK(problem_at(aibrix_problems("[1, 2]"), "").find("must be a mapping") != std::string::npos);
  // YAML syntax errors and duplicate keys: one problem at the document, with line and column.
  const auto dup = aibrix_problems("app_name: a\napp_name: b\n");
  REQUIRE(dup.size() == 1);
  CHECK(dup[0].path == "");
  CHECK(dup[0].message.starts_with("line 2, column 1: duplicate key"));
  const auto broken = aibrix_problems("{\"app_name\": \"a\",\n  \"storm_service\": [}\n");
  REQUIRE(broken.size() == 1);
  CHECK(broken[0].message.starts_with("line 2"));
  CHECK_FALSE(aibrix_problems("").empty());
  CHECK_FALSE(aibrix_problems("\xff\xfe").empty());  // not UTF-8
}

TEST_CASE("aibrix config: NPUs within the hardware profile, per role") {
  auto c = aibrix_config();  // 800I_A2: 8 NPUs per server
  role_cfg(c, "prefill")["npu_num"] = 9;
  expect(aibrix_problems(c), "storm_service.prefill.npu_num", "1..8, got 9");
  role_cfg(c, "prefill")["npu_num"] = 0;
  expect(aibrix_problems(c), "storm_service.prefill.npu_num", "1..8");

  // A role may name its own profile: decode on A3 may use 16 NPUs while prefill stays on A2.
  c = aibrix_config();
  role_cfg(c, "decode")["hardware_type"] = "800I_A3";
  role_cfg(c, "decode")["npu_num"] = 16;
  role_cfg(c, "decode")["tp_size"] = 16;
  const auto cfg = aibrix_parse(c);
  CHECK(cfg.prefill.hardware->name == "800I_A2");
  CHECK(cfg.decode.hardware->name == "800I_A3");
  role_cfg(c, "decode")["hardware_type"] = "A3";
  expect(aibrix_problems(c), "storm_service.decode.hardware_type", "got \"A3\"");
}

TEST_CASE("aibrix config: dp_size, tp_size and npu_num must fit together") {
  auto c = aibrix_config();
  auto& d = role_cfg(c, "decode");
  d["podGroupSize"] = 2;
  d["dp_size"] = 3;
  d["tp_size"] = 1;
  // MindCluster: dp_size must be a multiple of podGroupSize.
  expect(aibrix_problems(c), "storm_service.decode.dp_size", "multiple of podGroupSize (2)");
  // start_server.sh: each pod runs dp_size/podGroupSize ranks of tp_size NPUs.
  d["dp_size"] = 4;
  d["tp_size"] = 8;
  expect(aibrix_problems(c), "storm_service.decode.npu_num", "(dp_size / podGroupSize) × tp_size = 2 × 8 = 16");
  d["tp_size"] = 4;
  CHECK(aibrix_problems(c).empty());
  // Fewer NPUs in use than requested is allowed (a whole server may be reserved).
  d["tp_size"] = 2;
  CHECK(aibrix_problems(c).empty());
  // A malformed number does not also produce a consistency message built on a default.
  d["dp_size"] = "4";
  const auto problems = aibrix_problems(c);
  CHECK(problems.size() == 1);
  CHECK(problems[0].path == "storm_service.decode.dp_size");
}

TEST_CASE("aibrix config: distributed_dp needs routing and dp_size > 1") {
  auto c = aibrix_config();
  ss_of(c)["distributed_dp"] = true;
  auto problems = aibrix_problems(c);
  expect(problems, "storm_service.routing", "required when distributed_dp is true");
  expect(problems, "storm_service.prefill.dp_size", "greater than 1");
  expect(problems, "storm_service.decode.dp_size", "greater than 1");

  ss_of(c).erase("distributed_dp");
  expect(aibrix_problems(c), "storm_service.routing", "distributed_dp defaults to true");

  ss_of(c)["distributed_dp"] = "true";  // the published tooling's spelling
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1"})");
  role_cfg(c, "prefill")["dp_size"] = 2;
  role_cfg(c, "prefill")["tp_size"] = 4;
  role_cfg(c, "decode")["dp_size"] = 8;
  role_cfg(c, "decode")["tp_size"] = 1;
  CHECK(aibrix_parse(c).distributed_dp);
  ss_of(c)["distributed_dp"] = "false";
  CHECK_FALSE(aibrix_parse(c).distributed_dp);

  // Routing is optional without distributed DP, and strict about its own keys.
  c = aibrix_config();
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1", "npu_num": 1, "server_port": 0})");
  problems = aibrix_problems(c);
  expect(problems, "storm_service.routing.npu_num", "not a known key");
  expect(problems, "storm_service.routing.server_port", "1..65535");
  ss_of(c)["routing"] = json::parse(R"({"replicas": 2})");
  expect(aibrix_problems(c), "storm_service.routing.image", "is required");
}

TEST_CASE("aibrix config: user labels, annotations and selectors that collide with ours are errors naming both") {
  auto c = aibrix_config();
  auto& p = role_cfg(c, "prefill");
  p["labels"] = json::parse(R"({
    "fault-scheduling": "grace", "fault-retry-times": "3", "pod-rescheduling": "on",
    "model.aibrix.ai/name": "x", "model.aibrix.ai/port": "80", "model.aibrix.ai/engine": "sglang",
    "role-name": "prefill", "storm-service-name": "demo",
    "stormservice.orchestration.aibrix.ai/pod-group-index": "0", "fault-rescheduling": "force"})");
  p["annotations"] = json::parse(R"({"huawei.com/schedule_minAvailable": "1",
    "huawei.com/recover_policy_path": "pod", "stormservice.orchestration.aibrix.ai/revision": "1",
    "huawei.com/schedule_policy": "chip8-node8"})");
  p["nodeSelector"] = json::parse(R"({"accelerator-type": "module-910b-8", "accelerator": "huawei-Ascend910",
    "host-arch": "huawei-arm"})");
  const auto problems = aibrix_problems(c);
  const std::string l = "storm_service.prefill.labels";
  expect(problems, l + ".fault-scheduling",
         "collides with the label kubectl-mindie sets from "
         "storm_service.fault_scheduling; remove it here");
  expect(problems, l + ".fault-retry-times", "storm_service.fault_retry_times");
  expect(problems, l + ".pod-rescheduling", "\"on\" exactly when podGroupSize is 1");
  expect(problems, l + "[\"model.aibrix.ai/name\"]", "storm_service.model_name");
  expect(problems, l + "[\"model.aibrix.ai/port\"]", "engine port 8080");
  expect(problems, l + "[\"model.aibrix.ai/engine\"]", "\"vllm\"");
  expect(problems, l + ".role-name", "AIBrix controller");
  expect(problems, l + ".storm-service-name", "AIBrix controller");
  expect(problems, l + "[\"stormservice.orchestration.aibrix.ai/pod-group-index\"]", "AIBrix controller");
  const std::string a = "storm_service.prefill.annotations";
  expect(problems, a + "[\"huawei.com/schedule_minAvailable\"]", "computes from replicas and podGroupSize");
  expect(problems, a + "[\"huawei.com/recover_policy_path\"]", "\"pod\" when podGroupSize is 1");
  expect(problems, a + "[\"stormservice.orchestration.aibrix.ai/revision\"]", "AIBrix controller");
  expect(problems, a + "[\"huawei.com/schedule_policy\"]", "from hardware_type 800I_A2 (\"chip8-node8\")");
  expect(problems, "storm_service.prefill.nodeSelector.accelerator-type",
         "collides with the node selector kubectl-mindie sets from hardware_type 800I_A2 (\"module-910b-8\")");
  expect(problems, "storm_service.prefill.nodeSelector.accelerator", "(\"huawei-Ascend910\")");
  // Keys nobody else sets are fine (the published example's "fault-rescheduling" typo is just a label).
  CHECK(problem_at(problems, l + ".fault-rescheduling").empty());
  CHECK(problem_at(problems, "storm_service.prefill.nodeSelector.host-arch").empty());
  CHECK(problems.size() == 15);

  // The routing role carries none of our keys, only AIBrix's are reserved there.
  c = aibrix_config();
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1",
    "labels": {"fault-scheduling": "force", "roleset-name": "x"},
    "annotations": {"huawei.com/schedule_minAvailable": "1"},
    "nodeSelector": {"accelerator-type": "cpu-node"}})");
  const auto routing = aibrix_problems(c);
  REQUIRE(routing.size() == 1);
  expect(routing, "storm_service.routing.labels.roleset-name", "AIBrix controller");
}

TEST_CASE("aibrix config: sp-block comes from the hardware profile") {
  auto c = aibrix_config();  // 800I_A2 has no logical SuperPoDs
  role_cfg(c, "prefill")["annotations"] = json::parse(R"({"sp-block": "8"})");
  expect(aibrix_problems(c), "storm_service.prefill.annotations.sp-block",
         "hardware with logical SuperPoDs (A3, A5) only");
  ss_of(c)["hardware_type"] = "800I_A3";
  expect(aibrix_problems(c), "storm_service.prefill.annotations.sp-block",
         "collides with the annotation kubectl-mindie sets from hardware_type 800I_A3 (npu_num: NPUs per pod)");
  ss_of(c)["hardware_type"] = "900_A3_SuperPoD";
  expect(aibrix_problems(c), "storm_service.prefill.annotations.sp-block", "(podGroupSize × npu_num");
  // Other annotations are the user's.
  role_cfg(c, "prefill")["annotations"] = json::parse(R"({"note": "sp-block is set for you"})");
  CHECK(aibrix_problems(c).empty());
}

TEST_CASE("aibrix config: paths and names") {
  auto c = aibrix_config();
  ss_of(c)["model_dir"] = "/data/models/";
  ss_of(c)["model_path"] = "/mnt/models/qwen3";
  expect(aibrix_problems(c), "storm_service.model_path", "inside model_dir \"/data/models\"");
  ss_of(c)["model_path"] = "/data/models";
  expect(aibrix_problems(c), "storm_service.model_path", "inside model_dir");
  ss_of(c)["model_path"] = "/data/models/qwen3";
  const auto cfg = aibrix_parse(c);
  CHECK(cfg.model_dir == "/data/models");  // the trailing '/' is dropped for mounts
  role_cfg(c, "decode")["annotations"] = json::object{{"big", std::string(256 * 1024, 'x')}};
  expect(aibrix_problems(c), "storm_service.decode.annotations", "at most 256 KiB");
  role_cfg(c, "decode").erase("annotations");
  ss_of(c)["scripts_dir"] = "/a:b";
  expect(aibrix_problems(c), "storm_service.scripts_dir", "without ':'");

  c = aibrix_config();
  c["app_name"] = "1demo";  // a DNS-1123 label, but Service names must start with a letter
  expect(aibrix_problems(c), "app_name", "starting with a letter");
  ss_of(c)["model_name"] = "";
  expect(aibrix_problems(c), "storm_service.model_name", "not empty");

  // With routing, Service names "<app>-<role>-<replica>[-<pod>]" must fit 63 characters at 64 replicas.
  c = aibrix_config();
  ss_of(c)["routing"] = json::parse(R"({"image": "proxy:1"})");
  c["app_name"] = std::string(53, 'a');  // + "-prefill-63" = 64
  expect(aibrix_problems(c), "app_name", "at most 52 characters");
  c["app_name"] = std::string(52, 'a');
  CHECK(aibrix_problems(c).empty());
  role_cfg(c, "decode")["podGroupSize"] = 2;  // "<app>-decode-63-0"
  role_cfg(c, "decode")["dp_size"] = 2;
  role_cfg(c, "decode")["tp_size"] = 1;
  expect(aibrix_problems(c), "app_name", "at most 51 characters");
}

TEST_CASE("aibrix config: min_available follows the published rules") {
  using aibrix::GroupShape;
  using aibrix::Role;
  // (a) a role with groups: its own podGroupSize.
  CHECK(aibrix::min_available(Role::Decode, GroupShape{3, 1}, GroupShape{2, 4}) == 4);
  CHECK(aibrix::min_available(Role::Prefill, GroupShape{3, 2}, GroupShape{5, 4}) == 2);
  // (b) single-pod role, the other uses groups: its own replicas.
  CHECK(aibrix::min_available(Role::Prefill, GroupShape{3, 1}, GroupShape{2, 4}) == 3);
  CHECK(aibrix::min_available(Role::Decode, GroupShape{3, 2}, GroupShape{5, 1}) == 5);
  // (c) both single-pod: the sum of both roles' replicas (one shared PodGroup).
  CHECK(aibrix::min_available(Role::Prefill, GroupShape{3, 1}, GroupShape{2, 1}) == 5);
  CHECK(aibrix::min_available(Role::Decode, GroupShape{3, 1}, GroupShape{2, 1}) == 5);
  CHECK_THROWS_AS(aibrix::min_available(Role::Routing, GroupShape{}, GroupShape{}), std::invalid_argument);

  CHECK(aibrix::role_from_string("decode") == Role::Decode);
  CHECK_FALSE(aibrix::role_from_string("Decode").has_value());
  CHECK(aibrix::to_string(Role::Routing) == "routing");
}
