// The Kubernetes apps/v1 workload spec schemas (tests/unit/schemas/workload_schemas.json) with their $refs inlined,
// for checking rendered Deployment/StatefulSet specs with testing::validate_schema. Shared by the render_* tests.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mindie::test {

/// Replaces every {"$ref": "#/definitions/X"} by the definition, recursively (the pod schemas have no cycles; the
/// depth bound turns one into a test failure instead of a hang).
inline nlohmann::json inline_refs(const nlohmann::json& s, const nlohmann::json& defs, int depth = 0) {
  if (depth > 64) throw std::runtime_error("schema references nest deeper than 64: a cycle?");
  if (s.is_object()) {
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      return inline_refs(defs.at(ref.substr(std::string("#/definitions/").size())), defs, depth + 1);
    }
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : s.items()) out[k] = inline_refs(v, defs, depth + 1);
    return out;
  }
  if (s.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : s) out.push_back(inline_refs(v, defs, depth + 1));
    return out;
  }
  return s;
}

/// The definition `name` ("apps.v1.DeploymentSpec", "apps.v1.StatefulSetSpec") of workload_schemas.json, inlined.
inline nlohmann::json workload_schema(const std::string& name) {
  std::ifstream in(std::string(MINDIE_SOURCE_DIR) + "/tests/unit/schemas/workload_schemas.json");
  REQUIRE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(buf.str());
  return inline_refs(doc.at("definitions").at(name), doc.at("definitions"));
}

}  // namespace mindie::test
