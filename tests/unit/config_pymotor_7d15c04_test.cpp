// Parity with PyMotor's deployer 7d15c04 (issue 16; Ascend/MindIE-PyMotor examples/deployer at 7d15c04): the
// engine section and MODEL_NAME, the A5 hardware types, and the example configs written for that deployer.
#include <doctest/doctest.h>

#include <set>

#include "config_test_support.h"
#include "mindie/baseline_policy.h"
#include "mindie/deployer_scripts.h"
#include "mindie/env_script.h"
#include "mindie/render.h"
#include "render_test_support.h"
#include "util/json_text.h"

using namespace mindie;
using namespace mindie::test;
namespace json = boost::json;

namespace {

std::string example_path(const std::string& name) {
  return std::string(MINDIE_SHARED_DIR) + "/reference/user_configs/pymotor-7d15c04/" + name + "/user_config.json";
}

// An example of the new deployer, with an image where the example leaves it empty (deploy.py does not check it).
json::object example(const std::string& name) {
  auto cfg = json::parse(read_text(example_path(name))).as_object();
  if (deploy_of(cfg).at("image_name").as_string().empty()) deploy_of(cfg)["image_name"] = "mindie:test";
  return cfg;
}

std::string exported(const config::UserConfig& cfg, const std::string& var) {
  for (const auto& [k, v] : env_script::derived_common_env(cfg, "sid"))
    if (k == var) return v;
  FAIL("no " << var);
  return "";
}

json::object& engine_config(json::object& cfg, const char* section) {
  return cfg[section].as_object()["engine_config"].emplace_object();
}

}  // namespace

TEST_CASE("7d15c04 examples parse; their model names come from engine_config (U10, U15)") {
  const std::pair<const char*, const char*> cases[] = {
      {"vllm", "qwen3-8B"}, {"sglang", ""}, {"deepseek_v4_pro", ""}, {"pd_hybrid", "qwen3-8B"}};
  for (const auto& [name, model] : cases) {
    CAPTURE(name);
    const auto raw = example(name);
    const auto cfg = parse(raw);
    // The name the example gives, whatever it is: the engine section's served_model_name / served-model-name.
    const json::object& section = raw.contains("motor_engine_prefill_config")
                                      ? raw.at("motor_engine_prefill_config").as_object()
                                      : raw.at("motor_engine_union_config").as_object();
    const auto& engine = section.at("engine_config").as_object();
    const char* key = cfg.engine_type == "sglang" ? "served-model-name" : "served_model_name";
    REQUIRE(engine.contains(key));
    CHECK(cfg.model_name == engine.at(key).as_string());
    if (*model) CHECK(cfg.model_name == model);
    CHECK(exported(cfg, "MODEL_NAME") == cfg.model_name);
    CHECK(cfg.model_name != "Unknown");
  }
}

TEST_CASE("PD-hybrid in PyMotor's shape: the union section is the engine section (U10)") {
  auto raw = example("pd_hybrid");
  auto cfg = parse(raw);
  CHECK(cfg.hybrid());
  CHECK(cfg.hybrid_instances == 1);
  CHECK(cfg.engine_type == "vllm");
  CHECK(cfg.engine_base == "vllm");
  CHECK_FALSE(cfg.kv_pool);
  // The KV pool switch is read from the engine section too.
  engine_config(raw,
                "motor_engine_union_config")["kv_transfer_config"] = json::object{{"kv_connector", "MultiConnector"}};
  raw["kv_cache_pool_config"] = json::object{{"eviction_high_watermark_ratio", 0.9}, {"eviction_ratio", 0.1}};
  CHECK(parse(raw).kv_pool);
  raw["motor_engine_union_config"].as_object()["engine_type"] = "sglang";
  CHECK(parse(raw).engine_base == "sglang");
  raw["motor_engine_union_config"].as_object()["engine_type"] = "tgi";
  const auto problems = problems_of(raw);
  CHECK(has_problem(problems, "motor_engine_union_config.engine_type"));
  // Without hybrid_instances_num the prefill and decode sections are required as before.
  auto pd = example("pd_hybrid");
  auto& d = deploy_of(pd);
  for (const char* key : {"hybrid_instances_num", "single_hybrid_instance_pod_num", "hybrid_pod_npu_num"}) d.erase(key);
  d["p_instances_num"] = 1;
  d["d_instances_num"] = 1;
  d["p_pod_npu_num"] = 2;
  d["d_pod_npu_num"] = 2;
  const auto pd_problems = problems_of(pd);
  CHECK(has_problem(pd_problems, "motor_engine_prefill_config"));
  CHECK(has_problem(pd_problems, "motor_engine_decode_config"));
}

TEST_CASE("PD-hybrid: the coordinator must be in single_node mode and engine_topology absent (U4 rules 3, 6)") {
  auto raw = example("pd_hybrid");
  CHECK(problems_of(raw).empty());
  auto& scheduler = raw["motor_coordinator_config"].as_object()["scheduler_config"].as_object();
  scheduler["deploy_mode"] = "pd_separate";
  auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_coordinator_config.scheduler_config.deploy_mode");
  CHECK(problems[0].message.find("must be \"single_node\"") != std::string::npos);
  CHECK(problems[0].message.find("got string \"pd_separate\"") != std::string::npos);
  scheduler.erase("deploy_mode");
  problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].message.find("it is absent") != std::string::npos);
  scheduler["deploy_mode"] = "single_node";
  deploy_of(raw)["engine_topology"] = json::object{};
  problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.engine_topology");
  // Prefill/decode deployments are not held to it: single_node is a hybrid rule only.
  auto pd = valid_config();
  pd["motor_coordinator_config"].as_object()["scheduler_config"] = json::object{{"deploy_mode", "pd_separate"}};
  CHECK(problems_of(json::serialize(pd)).empty());
}

TEST_CASE("the engine section is the prefill section when non-empty, else the union section (U10)") {
  auto raw = valid_config();
  raw["motor_engine_union_config"] = json::object{{"engine_type", "vllm"},
                                                  {"engine_config", {{"served_model_name", "from-union"}}}};
  engine_config(raw, "motor_engine_prefill_config")["served_model_name"] = "from-prefill";
  CHECK(parse(raw).model_name == "from-prefill");
  // A decode or union engine_type other than the engine section's is refused, naming both.
  raw["motor_engine_union_config"].as_object()["engine_type"] = "sglang";
  const auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_engine_union_config.engine_type");
  CHECK(problems[0].message == "must match motor_engine_prefill_config.engine_type (\"vllm\"); got \"sglang\"");
}

TEST_CASE("MODEL_NAME: served_model_name (served-model-name for sglang), then model_config.model_name, then Unknown") {
  auto raw = valid_config();  // model_config.model_name "qwen"
  CHECK(parse(raw).model_name == "qwen");
  auto& engine = engine_config(raw, "motor_engine_prefill_config");
  engine["served_model_name"] = "qwen3-8B";
  CHECK(parse(raw).model_name == "qwen3-8B");
  engine["served_model_name"] = json::array{"qwen3-8B-a", "qwen3-8B-b"};  // vLLM's list: the first is the name
  CHECK(parse(raw).model_name == "qwen3-8B-a");
  engine["served_model_name"] = "";  // empty: the fallback
  CHECK(parse(raw).model_name == "qwen");
  // sglang spells the key with hyphens; the underscore key is then not the name.
  raw["motor_engine_prefill_config"].as_object()["engine_type"] = "sglang";
  raw["motor_engine_decode_config"].as_object()["engine_type"] = "sglang";
  engine_config(raw, "motor_engine_prefill_config")["served_model_name"] = "ignored";
  CHECK(parse(raw).model_name == "qwen");
  engine_config(raw, "motor_engine_prefill_config")["served-model-name"] = "ds-r1";
  CHECK(parse(raw).model_name == "ds-r1");
  // Nothing names the model: PyMotor exports Unknown.
  raw["motor_engine_prefill_config"].as_object().erase("model_config");
  raw["motor_engine_prefill_config"].as_object().erase("engine_config");
  const auto cfg = parse(raw);
  CHECK(cfg.model_name == "Unknown");
  CHECK(exported(cfg, "MODEL_NAME") == "Unknown");
  // A name of the wrong type is refused with its path.
  engine_config(raw, "motor_engine_prefill_config")["served-model-name"] = 7;
  const auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_engine_prefill_config.engine_config.served-model-name");
  CHECK(problems[0].message ==
        "must be a model name (a string, or a list whose first entry is the name); got "
        "integer 7");
  // A list names the model by its first entry: that must be a string; an empty one means none.
  engine_config(raw, "motor_engine_prefill_config")["served-model-name"] = json::array{1};
  const auto list_problems = problems_of(raw);
  REQUIRE(list_problems.size() == 1);
  CHECK(list_problems[0].path == "motor_engine_prefill_config.engine_config.served-model-name[0]");
  CHECK(list_problems[0].message == "must be a string (the model name), got integer 1");
  engine_config(raw, "motor_engine_prefill_config")["served-model-name"] = json::array{""};
  CHECK(parse(raw).model_name == "Unknown");
}

TEST_CASE("A5 hardware types on every mode: huawei.com/npu, huawei-npu selectors, policy, no ring label (U1)") {
  auto raw = example("vllm");  // 800I_A3, 16 NPUs per pod
  deploy_of(raw)["hardware_type"] = "950-SuperPod-Atlas-8";
  // 950-SuperPod-Atlas-8 has 8 NPUs per node (chip8-node8-ra64-sp): the example's 16 do not fit (upstream's X9).
  const auto problems = problems_of(raw);
  CHECK(has_problem(problems, "motor_deploy_config.p_pod_npu_num"));
  CHECK(has_problem(problems, "motor_deploy_config.d_pod_npu_num"));
  deploy_of(raw)["p_pod_npu_num"] = 8;
  deploy_of(raw)["single_p_instance_pod_num"] = 2;
  deploy_of(raw)["d_pod_npu_num"] = 4;
  // The observed upstream rendering (doc U1): ISS prefill sp-block 8; MD vllm-p0 16 and vllm-d0 4; SC 8.
  const auto iss = render_iss(parse(raw));
  const auto& prefill = role_of(iss, "prefill");
  CHECK(is_str(pod_annotations_of(prefill).at("sp-block"), "8"));
  CHECK(is_str(pod_annotations_of(prefill).at("huawei.com/schedule_policy"), "chip8-node8-ra64-sp"));
  CHECK(pod_spec_of(prefill).at("nodeSelector") ==
        json::object{{"accelerator", "huawei-npu"}, {"accelerator-type", "950-SuperPod-Atlas-8"}});
  const auto& limits = container_of(prefill).at("resources").at("limits").as_object();
  CHECK(is_str(limits.at("huawei.com/npu"), "8"));
  CHECK_FALSE(limits.contains("huawei.com/Ascend910"));
  CHECK_FALSE(pod_labels_of(prefill).contains("ring-controller.atlas"));
  CHECK(is_str(pod_annotations_of(role_of(iss, "decode")).at("sp-block"), "4"));

  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  for (const auto& o : render::render_multi_workloads(parse(raw), {})) {
    const std::string name(o.at("metadata").at("name").as_string());
    if (name == "vllm-p0") CHECK(is_str(o.at("metadata").at("annotations").at("sp-block"), "16"));
    if (name == "vllm-d0") CHECK(is_str(o.at("metadata").at("annotations").at("sp-block"), "4"));
  }
  deploy_of(raw)["deploy_mode"] = "single_container";
  const auto sc = find_kind(render::render_single_container_workloads(parse(raw), {}), "Deployment");
  CHECK(is_str(sc.at("metadata").at("annotations").at("sp-block"), "8"));
  CHECK(sc.at("spec")
            .at("template")
            .at("spec")
            .at("containers")
            .at(0)
            .at("resources")
            .at("limits")
            .as_object()
            .contains("huawei.com/npu"));
}

TEST_CASE("hardware_type names are exact: upstream's spelling, no aliases or case folding (U1)") {
  auto raw = valid_config();
  for (const char* bad : {"350-atlas-8", "950-SuperPoD-Atlas-8", "A5", "350_Atlas_8"}) {
    CAPTURE(bad);
    deploy_of(raw)["hardware_type"] = bad;
    CHECK(has_problem(problems_of(raw), "motor_deploy_config.hardware_type"));
  }
  deploy_of(raw)["hardware_type"] = "350-Atlas-16";
  deploy_of(raw)["p_pod_npu_num"] = 16;
  CHECK(parse(raw).p_npus_per_pod == 16);
  deploy_of(raw)["p_pod_npu_num"] = 17;
  CHECK(has_problem(problems_of(raw), "motor_deploy_config.p_pod_npu_num"));
}

TEST_CASE(
    "controller and coordinator probes: PyMotor 7d15c04's timings in infer_service_set and multi_deployment (U8)") {
  // startup 10 s x 100; readiness and liveness 10 s, 30 s timeout, 5 failures (also on the ISS controller: X11).
  auto check_probes = [](const json::object& container) {
    const auto& startup = container.at("startupProbe").as_object();
    CHECK(startup.at("periodSeconds") == 10);
    CHECK(startup.at("failureThreshold") == 100);
    for (const char* probe : {"readinessProbe", "livenessProbe"}) {
      CAPTURE(probe);
      const auto& p = container.at(probe).as_object();
      CHECK(p.at("periodSeconds") == 10);
      CHECK(p.at("timeoutSeconds") == 30);
      CHECK(p.at("failureThreshold") == 5);
    }
  };
  auto raw = valid_config();
  const auto iss = render_iss(parse(raw));
  for (const char* role : {"controller", "coordinator"}) {
    CAPTURE(role);
    check_probes(container_of(role_of(iss, role)));
  }
  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  int seen = 0;
  for (const auto& o : render::render_multi_workloads(parse(raw), {})) {
    const std::string name(o.at("metadata").at("name").as_string());
    if (!is_str(o.at("kind"), "Deployment") ||
        (name != "mindie-motor-controller" && name != "mindie-motor-coordinator"))
      continue;
    CAPTURE(name);
    check_probes(container_of(o));
    ++seen;
  }
  CHECK(seen == 2);
}

namespace {

// A config whose KV pool is on through MultiConnector, with the two required ratios.
json::object kv_pool_config() {
  auto raw = valid_config();
  engine_config(raw,
                "motor_engine_prefill_config")["kv_transfer_config"] = json::object{{"kv_connector", "MultiConnector"}};
  raw["kv_cache_pool_config"] = json::object{{"eviction_high_watermark_ratio", 0.9}, {"eviction_ratio", 0.1}};
  return raw;
}

// The env of a container as (name, value) pairs; "<field>" for a fieldRef.
std::vector<std::pair<std::string, std::string>> env_pairs(const json::object& container) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : container.at("env").as_array()) {
    const auto& o = e.as_object();
    out.emplace_back(std::string(o.at("name").as_string()),
                     o.contains("value") ? std::string(o.at("value").as_string()) : "<field>");
  }
  return out;
}

// The KV pool's entries of a container's env, in their order.
std::vector<std::pair<std::string, std::string>> kv_pool_env(const json::object& container) {
  static const std::set<std::string> names = {"KVP_MASTER_SERVICE", "KV_POOL_PORT",
                                              "KV_POOL_EVICTION_HIGH_WATERMARK_RATIO", "KV_POOL_EVICTION_RATIO",
                                              "DEFAULT_KV_LEASE_TTL"};
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : env_pairs(container))
    if (names.contains(kv.first)) out.push_back(kv);
  return out;
}

}  // namespace

TEST_CASE(
    "KV pool trigger: MultiConnector or one of the pool's own keys; Mooncake client settings alone leave it off (U9, "
    "X1)") {
  // GLM-5's section: Mooncake client settings, MooncakeConnectorV1 (upstream 7d15c04 refuses this config).
  auto raw = valid_config();
  raw["kv_cache_pool_config"] =
      json::object{{"metadata_server", "P2PHANDSHAKE"}, {"protocol", "ascend"}, {"global_segment_size", "1GB"}};
  auto cfg = parse(raw);
  CHECK_FALSE(cfg.kv_pool);
  REQUIRE(cfg.notices.size() == 1);
  CHECK(cfg.notices[0] ==
        "kv_cache_pool_config holds none of the KV pool's keys (port, eviction_high_watermark_ratio, eviction_ratio, "
        "default_kv_lease_ttl), so no KV pool is deployed; "
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector \"MultiConnector\" or one of "
        "those keys turns it on");
  CHECK(role_of(render_iss(cfg), "kv-pool").at("replicas") == 0);  // rendered at 0 instances, no Service
  CHECK_FALSE(role_of(render_iss(cfg), "kv-pool").contains("services"));
  // A pool section inside an engine section is not read: a notice says where it belongs.
  auto nested = valid_config();
  nested["motor_engine_prefill_config"].as_object()["kv_cache_pool_config"] = json::object{{"port", 50100}};
  const auto nested_cfg = parse(nested);
  CHECK_FALSE(nested_cfg.kv_pool);
  REQUIRE(nested_cfg.notices.size() == 1);
  CHECK(nested_cfg.notices[0] ==
        "motor_engine_prefill_config.kv_cache_pool_config is not read: the KV pool's "
        "settings are the top-level section kv_cache_pool_config");
  // An empty section says nothing.
  raw["kv_cache_pool_config"] = json::object{};
  CHECK(parse(raw).notices.empty());
  // One own key turns the pool on, and then the ratios are required.
  raw["kv_cache_pool_config"] = json::object{{"protocol", "ascend"}, {"port", 50100}};
  auto problems = problems_of(raw);
  CHECK(has_problem(problems, "kv_cache_pool_config.eviction_high_watermark_ratio"));
  CHECK(has_problem(problems, "kv_cache_pool_config.eviction_ratio"));
  raw["kv_cache_pool_config"].as_object()["eviction_high_watermark_ratio"] = 0.8;
  raw["kv_cache_pool_config"].as_object()["eviction_ratio"] = 0.05;
  cfg = parse(raw);
  CHECK(cfg.kv_pool);
  CHECK(cfg.notices.empty());
  CHECK(cfg.kv_pool_port == 50100);
  // MultiConnector without the section: the error names the switch and the two keys.
  auto multi = kv_pool_config();
  multi.erase("kv_cache_pool_config");
  problems = problems_of(multi);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "kv_cache_pool_config");
  CHECK(problems[0].message ==
        "is required (an object with eviction_high_watermark_ratio and eviction_ratio; port, default_kv_lease_ttl "
        "optional) because motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector is "
        "\"MultiConnector\" (KV pool on)");
}

TEST_CASE("default_kv_lease_ttl: milliseconds, 1..604800000, default 11000; port 9003 is kvp-master's metrics (U9)") {
  auto raw = kv_pool_config();
  CHECK(parse(raw).kv_lease_ttl_ms == 11000);
  auto& pool = raw["kv_cache_pool_config"].as_object();
  pool["default_kv_lease_ttl"] = 30000;
  CHECK(parse(raw).kv_lease_ttl_ms == 30000);
  for (json::value bad : {json::value(0), json::value(604800001), json::value("11000"), json::value(1.5)}) {
    CAPTURE(bad);
    pool["default_kv_lease_ttl"] = bad;
    CHECK(has_problem(problems_of(raw), "kv_cache_pool_config.default_kv_lease_ttl"));
  }
  pool["default_kv_lease_ttl"] = 604800000;
  CHECK(parse(raw).kv_lease_ttl_ms == 604800000);
  pool["port"] = 9003;
  const auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "kv_cache_pool_config.port");
  CHECK(problems[0].message == "must not be 9003, the metrics port of service kvp-master");
}

TEST_CASE("KV pool rendering: the kv-pool env in PyMotor's order and kvp-master's business + metrics ports (U9)") {
  auto raw = kv_pool_config();
  raw["kv_cache_pool_config"].as_object()["default_kv_lease_ttl"] = 20000;
  raw["kv_cache_pool_config"].as_object()["port"] = 50090;
  const std::vector<std::pair<std::string, std::string>> want_tail = {
      {"KV_POOL_PORT", "50090"},
      {"KV_POOL_EVICTION_HIGH_WATERMARK_RATIO", "0.9"},  // as Python writes the number, not "9E-1"
      {"KV_POOL_EVICTION_RATIO", "0.1"},
      {"DEFAULT_KV_LEASE_TTL", "20000"}};
  const json::array want_ports = {
      json::object{{"name", "business"}, {"port", 50090}, {"protocol", "TCP"}, {"targetPort", 50090}},
      json::object{{"name", "metrics"}, {"port", 9003}, {"protocol", "TCP"}, {"targetPort", 9003}}};

  const auto iss = render_iss(parse(raw));
  const auto& pool_role = role_of(iss, "kv-pool");
  auto env = kv_pool_env(container_of(pool_role));
  REQUIRE(env.size() == 5);
  CHECK(env[0] == std::pair<std::string, std::string>{
                      "KVP_MASTER_SERVICE", "kvp-master-mindie-motor-vllm-0-kv-pool.team-a.svc.cluster.local"});
  CHECK(std::vector(env.begin() + 1, env.end()) == want_tail);
  CHECK(pool_role.at("services").at(0).at("spec").at("ports") == want_ports);
  // Engines only learn where the master is.
  for (const auto& [k, v] : env_pairs(container_of(role_of(iss, "prefill")))) CHECK(k != "DEFAULT_KV_LEASE_TTL");

  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  const auto objs = render::render_multi_workloads(parse(raw), {});
  int seen = 0;
  for (const auto& o : objs) {
    const std::string name(o.at("metadata").at("name").as_string());
    if (is_str(o.at("kind"), "Service") && name == "kvp-master") {
      CHECK(o.at("spec").at("ports") == want_ports);
      ++seen;
    }
    if (is_str(o.at("kind"), "Deployment") && name == "mindie-motor-kv-pool") {
      env = kv_pool_env(container_of(o));
      REQUIRE(env.size() == 5);
      CHECK(env[0].second == "kvp-master.team-a.svc.cluster.local");
      CHECK(std::vector(env.begin() + 1, env.end()) == want_tail);
      ++seen;
    }
  }
  CHECK(seen == 2);

  // single_container: the one pod runs the master itself, at its own IP.
  deploy_of(raw)["deploy_mode"] = "single_container";
  const auto sc = find_kind(render::render_single_container_workloads(parse(raw), {}), "Deployment");
  env = kv_pool_env(sc.at("spec").at("template").at("spec").at("containers").at(0).as_object());
  REQUIRE(env.size() == 5);
  CHECK(env[0] == std::pair<std::string, std::string>{"KVP_MASTER_SERVICE", "<field>"});
  CHECK(std::vector(env.begin() + 1, env.end()) == want_tail);
}

TEST_CASE("a baseline deploy.py 7d15c04 stored compares equal to the user's file (U11)") {
  // The user's file: no deploy_mode, the KV pool on with port and lease TTL left to their defaults.
  const auto user = kv_pool_config();
  auto with_north = user;
  with_north["north_config"] = json::object{{"name", "北向"}};
  // What deploy.py stores for it: its own serialisation (2-space indent, non-ASCII as \uXXXX), deploy_mode
  // appended to motor_deploy_config, the pool defaults written in.
  const std::string stored_text = R"({
  "version": "v2.0",
  "motor_deploy_config": {
    "job_id": "team-a",
    "image_name": "mindie:test",
    "hardware_type": "800I_A2",
    "p_instances_num": 1,
    "d_instances_num": 1,
    "p_pod_npu_num": 8,
    "d_pod_npu_num": 8,
    "deploy_mode": "infer_service_set"
  },
  "motor_controller_config": {},
  "motor_coordinator_config": {},
  "motor_engine_prefill_config": {
    "engine_type": "vllm",
    "model_config": {
      "model_name": "qwen"
    },
    "engine_config": {
      "kv_transfer_config": {
        "kv_connector": "MultiConnector"
      }
    }
  },
  "motor_engine_decode_config": {
    "engine_type": "vllm"
  },
  "kv_cache_pool_config": {
    "eviction_high_watermark_ratio": 0.9,
    "eviction_ratio": 0.1,
    "port": 50088,
    "default_kv_lease_ttl": 11000
  },
  "north_config": {
    "name": "\u5317\u5411"
  }
}
)";
  // The stored text reads as a config (scale and update-config parse the baseline).
  const auto base = config::parse_user_config(stored_text, "configmap/motor-config");
  CHECK(base.kv_pool);
  CHECK(base.kv_lease_ttl_ms == 11000);
  // Nothing differs but what deploy.py wrote in: update-config and scale -f see no change.
  CHECK(policy::disallowed_changes(base.doc, parse(with_north).doc, policy::update_config_whitelist()).empty());
  CHECK(policy::disallowed_changes(base.doc, parse(with_north).doc, {policy::kPrefillInstancesPath}).empty());
  // scale without -f edits the stored text in place.
  const std::string scaled = util::replace_json_number(stored_text, policy::kPrefillInstancesPath, 3);
  CHECK(config::parse_user_config(scaled, "configmap/motor-config").p_instances == 3);
  // Real differences still count: another port, another mode, a non-default lease TTL written by the user.
  auto other = with_north;
  other["kv_cache_pool_config"].as_object()["port"] = 50100;
  CHECK(policy::disallowed_changes(base.doc, parse(other).doc, {}) ==
        std::vector<std::string>{"kv_cache_pool_config.port"});
  other = with_north;
  deploy_of(other)["deploy_mode"] = "multi_deployment";
  CHECK(policy::disallowed_changes(base.doc, parse(other).doc, {}) ==
        std::vector<std::string>{"motor_deploy_config.deploy_mode"});
  other = with_north;
  other["kv_cache_pool_config"].as_object()["default_kv_lease_ttl"] = 12000;
  CHECK(policy::disallowed_changes(base.doc, parse(other).doc, {}) ==
        std::vector<std::string>{"kv_cache_pool_config.default_kv_lease_ttl"});
}

TEST_CASE("PD heterogeneous scheduling: prefill and decode select their own node label, in both modes (U2)") {
  auto raw = valid_config();
  deploy_of(raw)["hardware_type"] = "950-SuperPod-Atlas-8";
  deploy_of(raw)["enable_pd_heterogeneous"] = true;
  const json::object base{{"accelerator", "huawei-npu"}, {"accelerator-type", "950-SuperPod-Atlas-8"}};
  auto with = [&](const char* key, const char* value) {
    json::object o = base;
    o[key] = value;
    return o;
  };
  // Upstream's defaults: card_type = Ascend950PR / Ascend950DT.
  auto iss = render_iss(parse(raw));
  CHECK(pod_spec_of(role_of(iss, "prefill")).at("nodeSelector") == with("card_type", "Ascend950PR"));
  CHECK(pod_spec_of(role_of(iss, "decode")).at("nodeSelector") == with("card_type", "Ascend950DT"));
  const auto& coordinator = pod_spec_of(role_of(iss, "coordinator"));
  const bool coordinator_selects = coordinator.contains("nodeSelector") &&
                                   coordinator.at("nodeSelector").as_object().contains("card_type");
  CHECK_FALSE(coordinator_selects);
  deploy_of(raw)["pd_heterogeneous_label_key"] = "node.kubernetes.io/npu.chip.name";
  deploy_of(raw)["pd_heterogeneous_prefill_label_value"] = "Ascend950PR";
  deploy_of(raw)["pd_heterogeneous_decode_label_value"] = "Ascend950DT";
  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  int seen = 0;
  for (const auto& o : render::render_multi_workloads(parse(raw), {})) {
    const std::string name(o.at("metadata").at("name").as_string());
    if (name != "vllm-p0" && name != "vllm-d0") continue;
    CHECK(pod_spec_of(o).at("nodeSelector") ==
          with("node.kubernetes.io/npu.chip.name", name == "vllm-p0" ? "Ascend950PR" : "Ascend950DT"));
    ++seen;
  }
  CHECK(seen == 2);
  // Off (absent or false): no extra selector.
  deploy_of(raw)["enable_pd_heterogeneous"] = false;
  deploy_of(raw)["deploy_mode"] = "infer_service_set";
  CHECK(pod_spec_of(role_of(render_iss(parse(raw)), "prefill")).at("nodeSelector") == base);
}

TEST_CASE("PD heterogeneous keys are validated, not silently off (U2)") {
  auto raw = valid_config();
  const std::string path = "motor_deploy_config.";
  auto single_problem = [&](const json::object& cfg) {
    const auto problems = problems_of(cfg);
    REQUIRE(problems.size() == 1);
    return problems[0];
  };
  deploy_of(raw)["enable_pd_heterogeneous"] = "true";  // upstream: silently off
  auto p = single_problem(raw);
  CHECK(p.path == path + "enable_pd_heterogeneous");
  deploy_of(raw)["enable_pd_heterogeneous"] = true;
  deploy_of(raw)["pd_heterogeneous_label_key"] = "card type";
  p = single_problem(raw);
  CHECK(p.path == path + "pd_heterogeneous_label_key");
  CHECK(p.message.starts_with("must be a label key: "));
  deploy_of(raw)["pd_heterogeneous_label_key"] = "accelerator-type";  // would replace the hardware selector
  p = single_problem(raw);
  CHECK(p.message == "must not be \"accelerator-type\": hardware_type 800I_A2 selects its nodes by that label already");
  deploy_of(raw).erase("pd_heterogeneous_label_key");
  for (const char* bad : {"", "-Ascend", "a b", "x/y"}) {
    CAPTURE(bad);
    deploy_of(raw)["pd_heterogeneous_decode_label_value"] = bad;
    CHECK(single_problem(raw).path == path + "pd_heterogeneous_decode_label_value");
  }
  deploy_of(raw).erase("pd_heterogeneous_decode_label_value");
  CHECK(parse(raw).notices.empty());
  // Where there are no prefill/decode pods, a notice says the switch does nothing.
  auto hybrid = hybrid_config();
  deploy_of(hybrid)["enable_pd_heterogeneous"] = true;
  const auto cfg = parse(hybrid);
  REQUIRE(cfg.notices.size() == 1);
  CHECK(cfg.notices[0] ==
        "motor_deploy_config.enable_pd_heterogeneous has no effect with hybrid_instances_num (the "
        "union role runs prefill and decode together)");
  deploy_of(raw)["deploy_mode"] = "single_container";
  CHECK(parse(raw).notices.size() == 1);
}

TEST_CASE("encode instances: multi_deployment renders <base>-e<i> first; the other modes refuse e_instances_num (U5)") {
  auto raw = valid_config();
  deploy_of(raw)["hardware_type"] = "800I_A3";
  deploy_of(raw)["e_instances_num"] = 2;
  deploy_of(raw)["single_e_instance_pod_num"] = 2;
  deploy_of(raw)["e_pod_npu_num"] = 4;
  // infer_service_set (and single_container) have no encode workload: an error, not upstream's silent store.
  auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.e_instances_num");
  CHECK(problems[0].message ==
        "encode instances run in deploy_mode multi_deployment only (PyMotor's EPD guide); "
        "deploy_mode is infer_service_set: set deploy_mode multi_deployment, or remove the key");
  deploy_of(raw)["deploy_mode"] = "single_container";
  CHECK(has_problem(problems_of(raw), "motor_deploy_config.e_instances_num"));
  // 0 is no encode instance: accepted anywhere.
  deploy_of(raw)["e_instances_num"] = 0;
  CHECK_FALSE(parse(raw).encode);

  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  deploy_of(raw)["e_instances_num"] = 2;
  const auto cfg = parse(raw);
  CHECK(cfg.encode);
  CHECK(cfg.e_instances == 2);
  std::vector<std::string> engines;
  for (const auto& o : render::render_multi_workloads(cfg, {})) {
    if (!is_str(o.at("kind"), "Deployment")) continue;
    const std::string name(o.at("metadata").at("name").as_string());
    if (name.starts_with("mindie-motor-")) continue;
    engines.push_back(name);
    if (name != "vllm-e1") continue;
    CHECK(o.at("spec").at("replicas") == 2);  // single_e_instance_pod_num (upstream's X5 used decode's)
    CHECK(is_str(o.at("metadata").at("annotations").at("sp-block"), "8"));
    const auto& c = container_of(o);
    CHECK(is_str(c.at("resources").at("limits").at("huawei.com/Ascend910"), "4"));
    bool role_encode = false;
    for (const auto& [k, v] : env_pairs(c)) role_encode = role_encode || (k == "ROLE" && v == "encode");
    CHECK(role_encode);
  }
  CHECK(engines == std::vector<std::string>{"vllm-e0", "vllm-e1", "vllm-p0", "vllm-d0"});
  CHECK(cfg.notices.empty());
  // PD heterogeneous scheduling leaves encode pods alone, and says so.
  auto hetero = raw;
  deploy_of(hetero)["enable_pd_heterogeneous"] = true;
  const auto hetero_cfg = parse(hetero);
  REQUIRE(hetero_cfg.notices.size() == 1);
  CHECK(hetero_cfg.notices[0].find("does not reach the encode instances") != std::string::npos);
  // The encode settings are validated, and need e_instances_num.
  deploy_of(raw).erase("e_pod_npu_num");
  CHECK(has_problem(problems_of(raw), "motor_deploy_config.e_pod_npu_num"));
  deploy_of(raw)["e_pod_npu_num"] = 17;
  CHECK(has_problem(problems_of(raw), "motor_deploy_config.e_pod_npu_num"));
  deploy_of(raw)["e_pod_npu_num"] = 4;
  deploy_of(raw)["e_instances_num"] = 17;
  CHECK(has_problem(problems_of(raw), "motor_deploy_config.e_instances_num"));
  deploy_of(raw).erase("e_instances_num");
  problems = problems_of(raw);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].message == "is an encode setting: it needs e_instances_num");
}

TEST_CASE("script warnings: boot.sh / engine.sh without the union or encode route, and upstream's X6 (U12)") {
  const std::string new_boot = "case \"$ROLE\" in\n  prefill|decode|union|encode) source engine.sh ;;\nesac\n";
  const std::string old_boot =
      "case \"$ROLE\" in\n  prefill|decode) source engine.sh ;;\n  *) echo Unknown ROLE ;;\nesac\n";
  const std::string old_engine = "# reunion_check is not a route\nset_prefill_env\n";
  const auto hybrid = parse(hybrid_config(1, 1, 4));
  CHECK(deployer_scripts::script_warnings(hybrid, {{"boot.sh", new_boot}, {"engine.sh", new_boot}}).empty());
  auto warnings = deployer_scripts::script_warnings(hybrid, {{"boot.sh", old_boot}, {"engine.sh", old_engine}});
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].starts_with("boot.sh never names ROLE union, which this deployment's union pods run"));
  CHECK(warnings[1].starts_with("engine.sh never names ROLE union"));  // "reunion_check" is not the word
  // A prefill/decode deployment runs no union or encode pods; absent scripts are deploy's own error.
  CHECK(deployer_scripts::script_warnings(parse(valid_config()), {{"boot.sh", old_boot}}).empty());
  CHECK(deployer_scripts::script_warnings(hybrid, {}).empty());

  auto raw = valid_config();
  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  deploy_of(raw)["hardware_type"] = "800I_A3";
  deploy_of(raw)["e_instances_num"] = 1;
  deploy_of(raw)["e_pod_npu_num"] = 4;
  warnings = deployer_scripts::script_warnings(parse(raw), {{"boot.sh", old_boot}});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with("boot.sh never names ROLE encode"));

  // X6: only a mooncake_config.py importing lib.utils with kvevent_instance on an enabled kv-conductor.
  raw = valid_config();
  raw["kv_conductor_config"] = json::object{{"http_server_port", 13333},
                                            {"kvevent_config", json::object{{"kvevent_instance", json::array{1}}}}};
  const std::map<std::string, std::string> x6 = {
      {"mooncake_config.py", "sys.path.insert(0, root)\nfrom lib.utils import resolve_model_name\n"}};
  warnings = deployer_scripts::script_warnings(parse(raw), x6);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("X6") != std::string::npos);
  CHECK(deployer_scripts::script_warnings(parse(raw), {{"mooncake_config.py", "import json\n"}}).empty());
  raw["kv_conductor_config"].as_object()["http_server_port"] = 0;
  CHECK(deployer_scripts::script_warnings(parse(raw), x6).empty());
}
