// Helpers shared by the aibrix_* unit tests: a valid stormservice config built in code (each test states only what
// it changes), problem lookups and a minimal RFC 6902 applier (test/replace) to check scale plans.
#pragma once

#include <boost/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "aibrix/storm_config.h"

namespace mindie::test {

/// A small valid config on 800I_A2: prefill 1 × 1 pod, decode 1 × 1 pod, 8 NPUs, no DP, no routing.
inline boost::json::object aibrix_config() {
  return boost::json::parse(R"({
    "app_name": "demo",
    "app_namespace": "team-a",
    "storm_service": {
      "model_name": "qwen3",
      "model_path": "/mnt/models/qwen3",
      "hardware_type": "800I_A2",
      "distributed_dp": false,
      "prefill": {"replicas": 1, "npu_num": 8, "tp_size": 8, "image": "vllm-ascend:test"},
      "decode": {"replicas": 1, "npu_num": 8, "tp_size": 8, "image": "vllm-ascend:test"}
    }
  })")
      .as_object();
}

inline boost::json::object& ss_of(boost::json::object& cfg) { return cfg["storm_service"].as_object(); }
inline boost::json::object& role_cfg(boost::json::object& cfg, const char* role) {
  return ss_of(cfg)[role].as_object();
}

inline aibrix::StormConfig aibrix_parse(const boost::json::object& cfg) {
  return aibrix::parse_storm_config(boost::json::serialize(cfg), "stormservice.yaml");
}

inline std::vector<validation::Problem> aibrix_problems(const std::string& raw) {
  try {
    aibrix::parse_storm_config(raw, "stormservice.yaml");
  } catch (const validation::ValidationError& e) {
    return e.problems();
  }
  return {};
}
inline std::vector<validation::Problem> aibrix_problems(const boost::json::object& cfg) {
  return aibrix_problems(boost::json::serialize(cfg));
}

/// The message of the problem at `path`, or "" when there is none.
inline std::string problem_at(const std::vector<validation::Problem>& problems, const std::string& path) {
  for (const auto& p : problems)
    if (p.path == path) return p.message.empty() ? "?" : p.message;
  return "";
}

/// The value at RFC 6901 pointer `pointer` in `v` (throws std::out_of_range when absent).
inline boost::json::value& at_pointer(boost::json::value& v, const std::string& pointer) {
  boost::json::value* cur = &v;
  std::size_t pos = 1;
  while (pos <= pointer.size()) {
    std::size_t next = pointer.find('/', pos);
    if (next == std::string::npos) next = pointer.size();
    std::string token = pointer.substr(pos, next - pos);
    for (std::size_t i; (i = token.find("~1")) != std::string::npos;) token.replace(i, 2, "/");
    for (std::size_t i; (i = token.find("~0")) != std::string::npos;) token.replace(i, 2, "~");
    if (cur->is_array()) cur = &cur->as_array().at(std::stoul(token));
    else cur = &cur->as_object().at(token);
    pos = next + 1;
  }
  return *cur;
}

/// Applies test/replace operations as kube-apiserver would; throws std::runtime_error when a test fails.
inline boost::json::value apply_patch(boost::json::value doc, const boost::json::array& ops) {
  for (const auto& op : ops) {
    const auto& o = op.as_object();
    const std::string path(o.at("path").as_string());
    if (o.at("op") == "test") {
      if (at_pointer(doc, path) != o.at("value")) throw std::runtime_error("test failed at " + path);
    } else if (o.at("op") == "replace") {
      at_pointer(doc, path) = o.at("value");
    } else {
      throw std::runtime_error("unexpected op");
    }
  }
  return doc;
}

}  // namespace mindie::test
