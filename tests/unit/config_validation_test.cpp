// Validation and defaults of user_config.json / env.json (mindie/config.h, mindie/env_config.h).
#include <doctest/doctest.h>

#include "config_test_support.h"
#include "mindie/env_config.h"

using namespace mindie;
using mindie::test::deploy_of;
using mindie::test::has_problem;
using mindie::test::parse;
using mindie::test::problems_of;
using mindie::test::valid_config;
namespace json = boost::json;

TEST_CASE("a valid config parses with the documented defaults") {
  auto cfg = valid_config();
  const std::string raw = json::serialize(cfg);
  auto c = config::parse_user_config(raw, "user_config.json");
  CHECK(c.raw == raw);
  CHECK(c.job_id == "team-a");
  CHECK(c.deploy_mode == config::DeployMode::InferServiceSet);  // missing deploy_mode
  CHECK(c.image_name == "mindie:test");
  REQUIRE(c.hardware != nullptr);
  CHECK(c.hardware->accelerator_type == "module-910b-8");
  CHECK(c.p_instances == 1);
  CHECK(c.d_instances == 1);
  CHECK(c.p_pods_per_instance == 1);
  CHECK(c.d_pods_per_instance == 1);
  CHECK(c.p_npus_per_pod == 8);
  CHECK(c.weight_mount_path == "/mnt/weight");
  CHECK(c.engine_type == "vllm");
  CHECK(c.engine_base == "vllm");
  CHECK(c.model_name == "qwen");
  CHECK_FALSE(c.controller_standby);
  CHECK_FALSE(c.coordinator_standby);
  CHECK_FALSE(c.kv_pool);
  CHECK_FALSE(c.kv_conductor);
  CHECK(c.controller_log_dir == "/root/ascend/log");
  CHECK(c.engine_log_dir == "/root/ascend/log");
  CHECK(c.disaggregation_bootstrap_port.empty());
}

TEST_CASE("engine type defaults to mindie-llm and maps to its engine base") {
  auto cfg = valid_config();
  cfg["motor_engine_prefill_config"].as_object().erase("engine_type");
  cfg["motor_engine_decode_config"].as_object().erase("engine_type");
  auto c = parse(cfg);
  CHECK(c.engine_type == "mindie-llm");
  CHECK(c.engine_base == "mindie-server");
  cfg["motor_engine_prefill_config"].as_object()["engine_type"] = "sglang";
  CHECK(parse(cfg).engine_base == "sglang");
}

TEST_CASE("every deploy mode is accepted by name") {
  auto cfg = valid_config();
  for (auto m : {config::DeployMode::InferServiceSet, config::DeployMode::MultiDeployment,
                 config::DeployMode::SingleContainer}) {
    deploy_of(cfg)["deploy_mode"] = config::to_string(m);
    CHECK(parse(cfg).deploy_mode == m);
    CHECK(config::deploy_mode_from_string(config::to_string(m)) == m);
  }
  CHECK_FALSE(config::deploy_mode_from_string("k8s").has_value());
}

TEST_CASE("optional switches: standby, KV pool, KV conductor, log dirs, bootstrap port") {
  auto cfg = valid_config();
  cfg["motor_controller_config"] = json::parse(
      R"({"standby_config": {"enable_master_standby": true}, "logging_config": {"host_log_dir": "/var/log/ctl"}})");
  cfg["motor_coordinator_config"] = json::parse(R"({"standby_config": {"enable_master_standby": true}})");
  cfg["motor_engine_prefill_config"].as_object()["engine_config"] = json::parse(
      R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}, "disaggregation_bootstrap_port": 8998})");
  cfg["kv_cache_pool_config"] = json::parse(R"({"eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1})");
  cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  cfg["motor_nodemanger_config"] = json::parse(R"({"logging_config": {"host_log_dir": "/var/log/engine"}})");
  auto c = parse(cfg);
  CHECK(c.controller_standby);
  CHECK(c.coordinator_standby);
  CHECK(c.kv_pool);
  CHECK(c.kv_pool_port == 50088);  // default port
  CHECK(c.kv_conductor);
  CHECK(c.kv_conductor_port == 13333);
  CHECK(c.controller_log_dir == "/var/log/ctl");
  CHECK(c.coordinator_log_dir == "/root/ascend/log");
  CHECK(c.engine_log_dir == "/var/log/engine");
  CHECK(c.disaggregation_bootstrap_port == "8998");

  cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 0})");
  CHECK_FALSE(parse(cfg).kv_conductor);
  cfg["kv_cache_pool_config"].as_object()["port"] = 50100;
  CHECK(parse(cfg).kv_pool_port == 50100);
}

// One failing input per rule: (description, mutation, expected problem path).
struct Case {
  const char* what;
  void (*mutate)(json::object&);
  const char* path;
};

static json::object& dep(json::object& c) { return deploy_of(c); }

static const Case kCases[] = {
    {"job_id missing", [](json::object& c) { dep(c).erase("job_id"); }, "motor_deploy_config.job_id"},
    {"job_id upper case", [](json::object& c) { dep(c)["job_id"] = "Team-A"; }, "motor_deploy_config.job_id"},
    {"job_id underscore", [](json::object& c) { dep(c)["job_id"] = "team_a"; }, "motor_deploy_config.job_id"},
    {"job_id too long", [](json::object& c) { dep(c)["job_id"] = std::string(64, 'a'); }, "motor_deploy_config.job_id"},
    {"job_id not a string", [](json::object& c) { dep(c)["job_id"] = 5; }, "motor_deploy_config.job_id"},
    {"image_name empty", [](json::object& c) { dep(c)["image_name"] = ""; }, "motor_deploy_config.image_name"},
    {"image_name missing", [](json::object& c) { dep(c).erase("image_name"); }, "motor_deploy_config.image_name"},
    {"image_name whitespace", [](json::object& c) { dep(c)["image_name"] = "a b"; }, "motor_deploy_config.image_name"},
    {"hardware_type unknown", [](json::object& c) { dep(c)["hardware_type"] = "800T_A2"; },
     "motor_deploy_config.hardware_type"},
    {"hardware_type missing", [](json::object& c) { dep(c).erase("hardware_type"); },
     "motor_deploy_config.hardware_type"},
    {"deploy_mode unknown", [](json::object& c) { dep(c)["deploy_mode"] = "helm"; }, "motor_deploy_config.deploy_mode"},
    {"deploy_mode not a string", [](json::object& c) { dep(c)["deploy_mode"] = true; },
     "motor_deploy_config.deploy_mode"},
    {"p_instances_num float", [](json::object& c) { dep(c)["p_instances_num"] = 2.0; },
     "motor_deploy_config.p_instances_num"},
    {"p_instances_num string", [](json::object& c) { dep(c)["p_instances_num"] = "2"; },
     "motor_deploy_config.p_instances_num"},
    {"p_instances_num bool", [](json::object& c) { dep(c)["p_instances_num"] = true; },
     "motor_deploy_config.p_instances_num"},
    {"p_instances_num 0", [](json::object& c) { dep(c)["p_instances_num"] = 0; },
     "motor_deploy_config.p_instances_num"},
    {"p_instances_num 17", [](json::object& c) { dep(c)["p_instances_num"] = 17; },
     "motor_deploy_config.p_instances_num"},
    {"p_instances_num missing", [](json::object& c) { dep(c).erase("p_instances_num"); },
     "motor_deploy_config.p_instances_num"},
    {"d_instances_num huge", [](json::object& c) { dep(c)["d_instances_num"] = std::uint64_t(1) << 63; },
     "motor_deploy_config.d_instances_num"},
    {"d_instances_num negative", [](json::object& c) { dep(c)["d_instances_num"] = -1; },
     "motor_deploy_config.d_instances_num"},
    {"single_p_instance_pod_num 0", [](json::object& c) { dep(c)["single_p_instance_pod_num"] = 0; },
     "motor_deploy_config.single_p_instance_pod_num"},
    {"single_d_instance_pod_num 65", [](json::object& c) { dep(c)["single_d_instance_pod_num"] = 65; },
     "motor_deploy_config.single_d_instance_pod_num"},
    {"single_d_instance_pod_num float", [](json::object& c) { dep(c)["single_d_instance_pod_num"] = 1.5; },
     "motor_deploy_config.single_d_instance_pod_num"},
    {"p_pod_npu_num above the A2 maximum", [](json::object& c) { dep(c)["p_pod_npu_num"] = 16; },
     "motor_deploy_config.p_pod_npu_num"},
    {"d_pod_npu_num 0", [](json::object& c) { dep(c)["d_pod_npu_num"] = 0; }, "motor_deploy_config.d_pod_npu_num"},
    {"d_pod_npu_num missing", [](json::object& c) { dep(c).erase("d_pod_npu_num"); },
     "motor_deploy_config.d_pod_npu_num"},
    {"weight_mount_path relative", [](json::object& c) { dep(c)["weight_mount_path"] = "mnt/weight"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path empty", [](json::object& c) { dep(c)["weight_mount_path"] = ""; },
     "motor_deploy_config.weight_mount_path"},
    // A hostPath mounted read-write into every engine pod: the host's root or a system folder would hand it over.
    {"weight_mount_path the host root", [](json::object& c) { dep(c)["weight_mount_path"] = "/"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path /etc", [](json::object& c) { dep(c)["weight_mount_path"] = "/etc"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path below /etc", [](json::object& c) { dep(c)["weight_mount_path"] = "/etc/ssl/private"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path /etc spelt //etc/", [](json::object& c) { dep(c)["weight_mount_path"] = "//etc/"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path with ..", [](json::object& c) { dep(c)["weight_mount_path"] = "/mnt/../etc"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path .. that stays in /mnt", [](json::object& c) { dep(c)["weight_mount_path"] = "/mnt/a/../b"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path the kubelet's folder",
     [](json::object& c) { dep(c)["weight_mount_path"] = "/var/lib/kubelet/pods"; },
     "motor_deploy_config.weight_mount_path"},
    {"weight_mount_path all of /root", [](json::object& c) { dep(c)["weight_mount_path"] = "/root"; },
     "motor_deploy_config.weight_mount_path"},
    {"tls_config not an object", [](json::object& c) { dep(c)["tls_config"] = "on"; },
     "motor_deploy_config.tls_config"},
    {"motor_deploy_config missing", [](json::object& c) { c.erase("motor_deploy_config"); }, "motor_deploy_config"},
    {"motor_deploy_config not an object", [](json::object& c) { c["motor_deploy_config"] = json::array(); },
     "motor_deploy_config"},
    {"motor_controller_config missing", [](json::object& c) { c.erase("motor_controller_config"); },
     "motor_controller_config"},
    {"motor_coordinator_config not an object", [](json::object& c) { c["motor_coordinator_config"] = 1; },
     "motor_coordinator_config"},
    {"motor_engine_prefill_config missing", [](json::object& c) { c.erase("motor_engine_prefill_config"); },
     "motor_engine_prefill_config"},
    {"motor_engine_decode_config missing", [](json::object& c) { c.erase("motor_engine_decode_config"); },
     "motor_engine_decode_config"},
    {"engine_type unknown",
     [](json::object& c) { c["motor_engine_prefill_config"].as_object()["engine_type"] = "tgi"; },
     "motor_engine_prefill_config.engine_type"},
    {"engine_type differs between prefill and decode",
     [](json::object& c) { c["motor_engine_decode_config"].as_object()["engine_type"] = "sglang"; },
     "motor_engine_decode_config.engine_type"},
    {"model_config not an object",
     [](json::object& c) { c["motor_engine_prefill_config"].as_object()["model_config"] = "qwen"; },
     "motor_engine_prefill_config.model_config"},
    {"standby flag not a bool",
     [](json::object& c) {
       c["motor_controller_config"] = json::parse(R"({"standby_config": {"enable_master_standby": "yes"}})");
     },
     "motor_controller_config.standby_config.enable_master_standby"},
    {"standby_config not an object",
     [](json::object& c) { c["motor_coordinator_config"] = json::parse(R"({"standby_config": true})"); },
     "motor_coordinator_config.standby_config"},
    {"host_log_dir relative",
     [](json::object& c) {
       c["motor_coordinator_config"] = json::parse(R"({"logging_config": {"host_log_dir": "logs"}})");
     },
     "motor_coordinator_config.logging_config.host_log_dir"},
    {"host_log_dir the host root",
     [](json::object& c) {
       c["motor_controller_config"] = json::parse(R"({"logging_config": {"host_log_dir": "/"}})");
     },
     "motor_controller_config.logging_config.host_log_dir"},
    {"KV pool on without kv_cache_pool_config",
     [](json::object& c) {
       c["motor_engine_prefill_config"].as_object()["engine_config"] =
           json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
     },
     "kv_cache_pool_config"},
    {"KV pool on without eviction_ratio",
     [](json::object& c) {
       c["motor_engine_prefill_config"].as_object()["engine_config"] =
           json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
       c["kv_cache_pool_config"] = json::parse(R"({"eviction_high_watermark_ratio": 0.9})");
     },
     "kv_cache_pool_config.eviction_ratio"},
    {"KV pool port out of range",
     [](json::object& c) {
       c["motor_engine_prefill_config"].as_object()["engine_config"] =
           json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
       c["kv_cache_pool_config"] =
           json::parse(R"({"port": 70000, "eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1})");
     },
     "kv_cache_pool_config.port"},
    {"kv_cache_pool_config not an object", [](json::object& c) { c["kv_cache_pool_config"] = "x"; },
     "kv_cache_pool_config"},
    {"kv conductor port a string",
     [](json::object& c) { c["kv_conductor_config"] = json::parse(R"({"http_server_port": "13333"})"); },
     "kv_conductor_config.http_server_port"},
    {"bootstrap port out of range",
     [](json::object& c) {
       c["motor_engine_prefill_config"].as_object()["engine_config"] =
           json::parse(R"({"disaggregation_bootstrap_port": 0})");
     },
     "motor_engine_prefill_config.engine_config.disaggregation_bootstrap_port"},
    {"north_config not an object", [](json::object& c) { c["north_config"] = json::array(); }, "north_config"},
};

TEST_CASE("each validation rule reports its JSON path") {
  for (const auto& tc : kCases) {
    const std::string what = tc.what;  // the text, not the pointer, in a failure's log
    CAPTURE(what);
    auto cfg = valid_config();
    tc.mutate(cfg);
    auto problems = problems_of(cfg);
    CHECK(has_problem(problems, tc.path));
  }
}

TEST_CASE("A3 allows 16 NPUs per pod, A2 only 8") {
  auto cfg = valid_config();
  deploy_of(cfg)["p_pod_npu_num"] = 16;
  deploy_of(cfg)["hardware_type"] = "800I_A3";
  auto c = parse(cfg);
  CHECK(c.p_npus_per_pod == 16);
  CHECK(c.hardware->sp_block.any());
  CHECK(c.hardware->accelerator_type == "module-a3-16");
  deploy_of(cfg)["p_pod_npu_num"] = 17;
  CHECK(has_problem(problems_of(cfg), "motor_deploy_config.p_pod_npu_num"));
}

TEST_CASE("all problems are reported at once") {
  auto cfg = valid_config();
  dep(cfg)["job_id"] = "Bad_Name";
  dep(cfg)["image_name"] = "";
  dep(cfg)["hardware_type"] = "X";
  dep(cfg)["p_instances_num"] = 2.0;
  dep(cfg)["d_instances_num"] = "2";
  dep(cfg)["deploy_mode"] = "helm";
  cfg.erase("motor_controller_config");
  try {
    parse(cfg);
    FAIL("expected a ValidationError");
  } catch (const validation::ValidationError& e) {
    CHECK(e.problems().size() == 7);
    CHECK(e.source() == "user_config.json");
    const std::string what = e.what();
    CHECK(what.find("user_config.json: 7 problems") == 0);
    for (const char* p :
         {"motor_deploy_config.job_id", "motor_deploy_config.image_name", "motor_deploy_config.hardware_type",
          "motor_deploy_config.p_instances_num", "motor_deploy_config.d_instances_num",
          "motor_deploy_config.deploy_mode", "motor_controller_config"}) {
      CAPTURE(p);
      CHECK(has_problem(e.problems(), p));
      CHECK(what.find(std::string("* ") + p + ": ") != std::string::npos);
    }
  }
}

TEST_CASE("host paths: system folders and '..' are refused with the reason; ordinary folders are kept") {
  for (const char* ok : {"/mnt/weight", "/mnt/weight/", "/data/models", "/home/ai/weights", "/root/ascend/log",
                         "/var/lib/models", "/mnt/weight.v2/..x"}) {
    auto cfg = valid_config();
    dep(cfg)["weight_mount_path"] = ok;
    CHECK_MESSAGE(problems_of(cfg).empty(), ok);
  }
  auto cfg = valid_config();
  dep(cfg)["weight_mount_path"] = "/mnt/../etc";
  auto p = problems_of(cfg);
  REQUIRE(p.size() == 1);
  CHECK_MESSAGE(p[0].message.find("must not contain '..'") != std::string::npos, p[0].message);
  dep(cfg)["weight_mount_path"] = "/usr/lib";
  p = problems_of(cfg);
  REQUIRE(p.size() == 1);
  CHECK_MESSAGE(p[0].message.find("is the host's /usr") != std::string::npos, p[0].message);
  CHECK(p[0].message.find("mounted from the host into the pods") != std::string::npos);
}

TEST_CASE("unknown keys are allowed") {
  auto cfg = valid_config();
  cfg["motor_engine_prefill_config"].as_object()["engine_config"] =
      json::parse(R"({"max-num-seqs": 16, "speculative-config": {"method": "mtp"}})");
  dep(cfg)["env_path"] = "/somewhere";
  cfg["something_new"] = json::array{1, 2};
  CHECK(problems_of(cfg).empty());
}

TEST_CASE("syntax errors and non-object documents are one problem at the document") {
  auto p = problems_of("{\n  \"a\": 1,\n  oops\n}");
  REQUIRE(p.size() == 1);
  CHECK(p[0].path.empty());
  CHECK(p[0].message.find("line 3") != std::string::npos);
  p = problems_of("");
  REQUIRE(p.size() == 1);
  CHECK(p[0].path.empty());
  p = problems_of("[1, 2]");
  REQUIRE(p.size() == 1);
  CHECK(p[0].message.find("JSON object") != std::string::npos);
  p = problems_of("{\"a\": 1} trailing");
  REQUIRE(p.size() == 1);
  try {
    config::parse_user_config("[]", "cfg.json");
  } catch (const validation::ValidationError& e) {
    CHECK(std::string(e.what()).find("* (document): ") != std::string::npos);
  }
}

TEST_CASE("the shared example configs") {
  const std::string dir = std::string(MINDIE_SHARED_DIR) + "/reference/user_configs/";
  SUBCASE("deepseek_v3_1 parses") {
    auto c = config::parse_user_config(mindie::test::read_text(dir + "deepseek_v3_1/user_config.json"), "ds");
    CHECK(c.job_id == "mindie-motor");
    CHECK(c.hardware->name == "800I_A3");
    CHECK(c.p_instances == 2);
    CHECK(c.d_pods_per_instance == 2);
    CHECK(c.p_npus_per_pod == 16);
    CHECK(c.weight_mount_path == "/mnt/weight/");
    CHECK(c.engine_base == "vllm");
    auto env = config::parse_env_config(mindie::test::read_text(dir + "deepseek_v3_1/env.json"), "env.json");
    CHECK(env.doc.contains("motor_common_env"));
  }
  SUBCASE("vllm has an empty image_name, and only that is wrong") {
    auto problems = problems_of(mindie::test::read_text(dir + "vllm/user_config.json"));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].path == "motor_deploy_config.image_name");
    auto env = config::parse_env_config(mindie::test::read_text(dir + "vllm/env.json"), "env.json");
    CHECK(env.raw == mindie::test::read_text(dir + "vllm/env.json"));
  }
}

TEST_CASE("the shipped example parses") {
  const std::string dir = std::string(MINDIE_SOURCE_DIR) + "/examples/";
  auto c = config::parse_user_config(mindie::test::read_text(dir + "user_config.json"), "user_config.json");
  CHECK(c.job_id == "mindie-demo");
  CHECK(c.hardware->name == "800I_A2");
  CHECK(c.engine_type == "vllm");
  CHECK(c.deploy_mode == config::DeployMode::InferServiceSet);
  CHECK(c.doc.at("motor_deploy_config").as_object().contains("deploy_mode"));
  CHECK_NOTHROW(config::parse_env_config(mindie::test::read_text(dir + "env.json"), "env.json"));
}

TEST_CASE("env.json: sections of scalar variables") {
  CHECK_NOTHROW(
      config::parse_env_config(R"({"version": "1", "motor_common_env": {"A": "x", "B": 2, "C": true}})", "env.json"));
  auto problems_env = [](const std::string& raw) {
    try {
      config::parse_env_config(raw, "env.json");
    } catch (const validation::ValidationError& e) {
      return e.problems();
    }
    return std::vector<validation::Problem>{};
  };
  auto p = problems_env(R"({"motor_common_env": {"A": {"nested": 1}, "B": [1], "C": null}, "x": 3})");
  CHECK(p.size() == 4);
  CHECK(has_problem(p, "motor_common_env.A"));
  CHECK(has_problem(p, "motor_common_env.B"));
  CHECK(has_problem(p, "motor_common_env.C"));
  CHECK(has_problem(p, "x"));
  CHECK(has_problem(problems_env(R"({"s": {"1BAD": "v"}})"), "s.1BAD"));
  CHECK(has_problem(problems_env(R"({"version": 2})"), "version"));
  CHECK(problems_env("[]").size() == 1);
  CHECK(problems_env("{").size() == 1);
}

TEST_CASE("a float in an integer field is quoted as the operator wrote it, not in exponent form") {
  // Regression: the message said "got number 2E0" for 2.0 (Boost.JSON's serialization of doubles).
  const auto problems = problems_of(R"({"motor_deploy_config": {"p_instances_num": 2.0, "d_instances_num": 1.5}})");
  std::string messages;
  for (const auto& p : problems) messages += p.path + ": " + p.message + "\n";
  CHECK(messages.find("motor_deploy_config.p_instances_num: must be a JSON integer 1..16, got number 2.0") !=
        std::string::npos);
  CHECK(messages.find("got number 1.5") != std::string::npos);
}

TEST_CASE("settings update-config can change are checked, since running pods re-read them") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"("motor_controller_config": {"logging_config": {"log_level": {"x": 1}}})",
       "motor_controller_config.logging_config.log_level"},
      {R"("motor_controller_config": {"logging_config": {"log_level": "VERBOSE"}})",
       "motor_controller_config.logging_config.log_level"},
      {R"("motor_coordinator_config": {"timeout_config": {"request_timeout": "abc"}})",
       "motor_coordinator_config.timeout_config.request_timeout"},
      {R"("motor_coordinator_config": {"timeout_config": {"request_timeout": -1}})",
       "motor_coordinator_config.timeout_config.request_timeout"},
      {R"("motor_coordinator_config": {"exception_config": {"max_retry": 2.5}})",
       "motor_coordinator_config.exception_config.max_retry"},
      {R"("north_config": {"port": 999999})", "north_config.port"},
      {R"("north_config": {"ip": ""})", "north_config.ip"},
      {R"("motor_controller_config": {"observability_config": {"observability_enable": "yes"}})",
       "motor_controller_config.observability_config.observability_enable"},
  };
  for (const auto& [fragment, path] : cases) {
    auto cfg = valid_config();
    const auto extra = boost::json::parse(std::string("{") + fragment + "}").as_object();
    for (const auto& kv : extra) cfg[kv.key()] = kv.value();
    CHECK_MESSAGE(has_problem(problems_of(cfg), path), fragment);
  }
  auto ok = valid_config();
  ok["motor_coordinator_config"] =
      boost::json::parse(R"({"logging_config": {"log_level": "debug"}, "timeout_config": {"request_timeout": 600}})");
  CHECK(problems_of(ok).empty());
}

TEST_CASE("control characters in keys are escaped in the report, so every problem is shown") {
  // A NUL would end what() (a C string) after the first key; an ESC would reach the terminal.
  const std::string raw = R"({"motor_controller_env": {"N\u0000UL": "x", "ESC\u001b[31m": "y"}})";
  try {
    config::parse_env_config(raw, "env.json");
    FAIL("accepted");
  } catch (const validation::ValidationError& e) {
    const std::string what = e.what();
    CHECK(what.find("motor_controller_env[\"N\\u0000UL\"]") != std::string::npos);
    CHECK(what.find("ESC\\u001b[31m") != std::string::npos);
    CHECK(std::string(e.what()).size() == what.size());
    CHECK(what.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("PD-hybrid: hybrid fields, p/d counts absent or 0, not single_container, and each misuse named") {
  auto cfg = mindie::test::hybrid_config(2, 1, 8);
  auto& d = deploy_of(cfg);
  d.erase("single_hybrid_instance_pod_num");
  auto c = parse(cfg);
  CHECK(c.hybrid_instances == 2);
  CHECK(c.hybrid_pods_per_instance == 1);  // the default
  CHECK(c.hybrid_npus_per_pod == 8);
  CHECK(c.p_npus_per_pod == 8);  // the empty prefill/decode templates take the union's NPUs
  // Explicit zeros are not mixing.
  d["p_instances_num"] = 0;
  d["d_instances_num"] = 0;
  CHECK(parse(cfg).hybrid());

  struct Case {
    const char* what;
    void (*mutate)(json::object&);
    const char* path;
  };
  const Case cases[] = {
      {"mixing with p counts", [](json::object& m) { m["p_instances_num"] = 1; },
       "motor_deploy_config.p_instances_num"},
      {"mixing with d counts", [](json::object& m) { m["d_instances_num"] = 2; },
       "motor_deploy_config.d_instances_num"},
      {"hybrid count 0", [](json::object& m) { m["hybrid_instances_num"] = 0; },
       "motor_deploy_config.hybrid_instances_num"},
      {"hybrid count 17", [](json::object& m) { m["hybrid_instances_num"] = 17; },
       "motor_deploy_config.hybrid_instances_num"},
      {"NPUs missing", [](json::object& m) { m.erase("hybrid_pod_npu_num"); },
       "motor_deploy_config.hybrid_pod_npu_num"},
      {"NPUs above the server", [](json::object& m) { m["hybrid_pod_npu_num"] = 9; },
       "motor_deploy_config.hybrid_pod_npu_num"},
      {"pods 0", [](json::object& m) { m["single_hybrid_instance_pod_num"] = 0; },
       "motor_deploy_config.single_hybrid_instance_pod_num"},
      {"single_container", [](json::object& m) { m["deploy_mode"] = "single_container"; },
       "motor_deploy_config.hybrid_instances_num"},
      // prefill/decode settings would shape only the empty roles: refused, as hybrid settings are without hybrid.
      {"p NPUs", [](json::object& m) { m["p_pod_npu_num"] = 2; }, "motor_deploy_config.p_pod_npu_num"},
      {"d NPUs", [](json::object& m) { m["d_pod_npu_num"] = 2; }, "motor_deploy_config.d_pod_npu_num"},
      {"p pods", [](json::object& m) { m["single_p_instance_pod_num"] = 3; },
       "motor_deploy_config.single_p_instance_pod_num"},
      {"d pods", [](json::object& m) { m["single_d_instance_pod_num"] = 1; },
       "motor_deploy_config.single_d_instance_pod_num"},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.what);
    auto bad = cfg;
    tc.mutate(deploy_of(bad));
    CHECK(has_problem(problems_of(bad), tc.path));
  }
  // multi_deployment runs union instances as Deployments (PyMotor 7d15c04 U4); single_container is refused, saying
  // what to change.
  auto md = cfg;
  deploy_of(md)["deploy_mode"] = "multi_deployment";
  CHECK(parse(md).hybrid_instances == 2);
  auto sc = cfg;
  deploy_of(sc)["deploy_mode"] = "single_container";
  const auto sc_problems = problems_of(sc);
  REQUIRE(sc_problems.size() == 1);
  CHECK(sc_problems[0].message ==
        "PD-hybrid (union instances) needs deploy_mode infer_service_set or multi_deployment: single_container runs "
        "one pod with every component; remove hybrid_instances_num or change deploy_mode");
  // Hybrid settings without hybrid_instances_num are a mistake, not ignored.
  auto pd = valid_config();
  deploy_of(pd)["hybrid_pod_npu_num"] = 8;
  CHECK(has_problem(problems_of(pd), "motor_deploy_config.hybrid_pod_npu_num"));
  CHECK_FALSE(parse(valid_config()).hybrid());
}

TEST_CASE("sglang turns the mf-store on; other engines do not") {
  auto cfg = valid_config();
  CHECK_FALSE(parse(cfg).mf_store);
  cfg["motor_engine_prefill_config"].as_object()["engine_type"] = "sglang";
  cfg["motor_engine_decode_config"].as_object()["engine_type"] = "sglang";
  CHECK(parse(cfg).mf_store);
}

TEST_CASE("duplicate keys, numbers beyond a double and NUL in env values are problems, not silently changed input") {
  // The failing inputs: C's first value, 1e400 (read as Infinity) and "x\u0000y" all reached the env functions.
  const auto env_problems = [](const std::string& raw) {
    try {
      config::parse_env_config(raw, "env.json");
    } catch (const validation::ValidationError& e) {
      return e.problems();
    }
    return std::vector<validation::Problem>{};
  };
  const auto env = env_problems(R"({"motor_common_env": {"A": 1e400, "B": "x\u0000y", "C": "1", "C": "2"}})");
  CHECK(has_problem(env, "motor_common_env.A"));
  CHECK(has_problem(env, "motor_common_env.B"));
  CHECK(has_problem(env, "motor_common_env.C"));
  CHECK(env.size() == 3);
  CHECK(env_problems(R"({"motor_common_env": {"A": 1e300, "B": "x\ny", "C": "$HOME"}})").empty());

  // user_config.json: a duplicate anywhere, with its path (array elements included).
  std::string raw = json::serialize(valid_config());
  raw.insert(raw.find("\"p_instances_num\""), R"("p_instances_num": 9, )");
  auto problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.p_instances_num");
  CHECK(problems[0].message.find("appears twice") != std::string::npos);
  auto cfg = valid_config();
  cfg["north_config"] = json::parse(R"({"list": [{"a": 1}, {"b": 2}]})");
  raw = json::serialize(cfg);
  raw.insert(raw.find("{\"b\""), R"({"x": 1, "x": 2}, )");
  problems = problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "north_config.list[1].x");
  cfg["motor_engine_prefill_config"].as_object()["huge"] = 1.0;
  raw = json::serialize(cfg);
  raw.replace(raw.find("1E0"), 3, "-1e999");
  CHECK(has_problem(problems_of(raw), "motor_engine_prefill_config.huge"));
}

// PyMotor 7d15c04 §U6: the coordinator's and the controller's observability Services (port 1027) get nodePorts of
// their own keys, validated like infer_node_port; one nodePort per Service; single_container has none of them.
TEST_CASE("nodePorts: infer/obs/controller_obs in range, integers, distinct; obs keys refused in single_container") {
  auto cfg = valid_config();
  auto c = parse(cfg);
  CHECK(c.infer_node_port == 0);
  CHECK(c.obs_node_port == 0);
  CHECK(c.controller_obs_node_port == 0);
  deploy_of(cfg)["obs_node_port"] = 31200;
  deploy_of(cfg)["controller_obs_node_port"] = 31201;
  c = parse(cfg);
  CHECK(c.obs_node_port == 31200);
  CHECK(c.controller_obs_node_port == 31201);

  for (const char* key : {"infer_node_port", "obs_node_port", "controller_obs_node_port"}) {
    CAPTURE(key);
    const std::string path = std::string("motor_deploy_config.") + key;
    for (const json::value bad : {json::value(29999), json::value(32768), json::value("31200"), json::value(31200.5)}) {
      auto b = valid_config();
      deploy_of(b)[key] = bad;
      const auto problems = problems_of(b);
      REQUIRE(problems.size() == 1);
      CHECK(problems[0].path == path);
    }
  }

  // infer_service_set renders every default, so a set port equal to another key's default collides too; the
  // message names both keys.
  auto same = valid_config();
  deploy_of(same)["infer_node_port"] = 31017;
  auto problems = problems_of(same);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.infer_node_port");
  CHECK(problems[0].message.find("motor_deploy_config.obs_node_port (absent: the default 31017)") != std::string::npos);
  same = valid_config();
  deploy_of(same)["obs_node_port"] = 31300;
  deploy_of(same)["controller_obs_node_port"] = 31300;
  problems = problems_of(same);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.controller_obs_node_port");
  CHECK(problems[0].message.find(
            "motor_deploy_config.obs_node_port and motor_deploy_config.controller_obs_node_port") != std::string::npos);
  // multi_deployment: Kubernetes allocates the absent ones, so only the set ports are compared.
  auto multi = valid_config();
  deploy_of(multi)["deploy_mode"] = "multi_deployment";
  deploy_of(multi)["infer_node_port"] = 31017;
  CHECK(problems_of(multi).empty());
  deploy_of(multi)["obs_node_port"] = 31017;
  CHECK(has_problem(problems_of(multi), "motor_deploy_config.obs_node_port"));

  // single_container: one Service (1025); the observability keys are refused by name.
  auto single = valid_config();
  deploy_of(single)["deploy_mode"] = "single_container";
  deploy_of(single)["infer_node_port"] = 31017;
  CHECK(problems_of(single).empty());
  for (const char* key : {"obs_node_port", "controller_obs_node_port"}) {
    CAPTURE(key);
    auto s = single;
    deploy_of(s)[key] = 31400;
    problems = problems_of(s);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].path == std::string("motor_deploy_config.") + key);
    CHECK(problems[0].message.find("single_container") != std::string::npos);
  }
}

// single_container's Service is PyMotor's "<job_id>-coordinator-service" (§U6): a DNS label of at most 63.
TEST_CASE("single_container: job_id at most 43 characters") {
  auto cfg = valid_config();
  deploy_of(cfg)["deploy_mode"] = "single_container";
  deploy_of(cfg)["job_id"] = std::string(43, 'a');
  CHECK(problems_of(cfg).empty());
  deploy_of(cfg)["job_id"] = std::string(44, 'a');
  const auto problems = problems_of(cfg);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.job_id");
  CHECK(problems[0].message.find("at most 43") != std::string::npos);
  CHECK(problems[0].message.find("-coordinator-service") != std::string::npos);
  // The other modes keep the namespace limit.
  deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  CHECK(problems_of(cfg).empty());
}
