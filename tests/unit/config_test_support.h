// Helpers shared by the config_* and render_* unit tests: a valid user_config.json built in code (so each test
// states only what it changes) and problem lookups.
#pragma once

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mindie/config.h"

namespace mindie::test {

/// A small valid infer_service_set config on 800I_A2 (vllm, 1 prefill + 1 decode, 8 NPUs per pod).
inline boost::json::object valid_config() {
  return boost::json::parse(R"({
    "version": "v2.0",
    "motor_deploy_config": {
      "job_id": "team-a", "image_name": "mindie:test", "hardware_type": "800I_A2",
      "p_instances_num": 1, "d_instances_num": 1, "p_pod_npu_num": 8, "d_pod_npu_num": 8
    },
    "motor_controller_config": {},
    "motor_coordinator_config": {},
    "motor_engine_prefill_config": {"engine_type": "vllm", "model_config": {"model_name": "qwen"}},
    "motor_engine_decode_config": {"engine_type": "vllm"}
  })")
      .as_object();
}

inline boost::json::object& deploy_of(boost::json::object& cfg) { return cfg["motor_deploy_config"].as_object(); }

/// valid_config() turned PD-hybrid: no prefill/decode fields, `instances` union instances of `pods` pods with
/// `npus` NPUs each, the coordinator in single_node mode.
inline boost::json::object hybrid_config(int instances = 3, int pods = 2, int npus = 4) {
  auto cfg = valid_config();
  auto& d = deploy_of(cfg);
  for (const char* key : {"p_instances_num", "d_instances_num", "p_pod_npu_num", "d_pod_npu_num"}) d.erase(key);
  d["hybrid_instances_num"] = instances;
  d["single_hybrid_instance_pod_num"] = pods;
  d["hybrid_pod_npu_num"] = npus;
  // The coordinator's mode for union instances (PyMotor 7d15c04 U4 rule 6).
  cfg["motor_coordinator_config"].as_object()["scheduler_config"] = boost::json::object{{"deploy_mode", "single_node"}};
  return cfg;
}

inline config::UserConfig parse(const boost::json::object& cfg) {
  return config::parse_user_config(boost::json::serialize(cfg), "user_config.json");
}

/// The problems parse_user_config reports for `cfg`; empty when it parses.
inline std::vector<validation::Problem> problems_of(const std::string& raw) {
  try {
    config::parse_user_config(raw, "user_config.json");
  } catch (const validation::ValidationError& e) {
    return e.problems();
  }
  return {};
}
inline std::vector<validation::Problem> problems_of(const boost::json::object& cfg) {
  return problems_of(boost::json::serialize(cfg));
}

inline bool has_problem(const std::vector<validation::Problem>& problems, const std::string& path) {
  for (const auto& p : problems)
    if (p.path == path) return true;
  return false;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mindie::test
