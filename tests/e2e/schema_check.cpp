#include "schema_check.h"

#include <doctest/doctest.h>

#include <vector>

#include "support/openapi_schema.h"

namespace e2e {

void check_schema(const std::string& name, const nlohmann::json& report) {
  const nlohmann::json schema =
      nlohmann::json::parse(read_file(std::string(MINDIE_SOURCE_DIR) + "/docs/schemas/" + name + ".schema.json"));
  // A root anyOf alone would say only "must match at least one schema": each document is checked on its own.
  std::vector<nlohmann::json> documents;
  if (schema.contains("anyOf")) documents.assign(schema["anyOf"].begin(), schema["anyOf"].end());
  else documents.push_back(schema);
  std::vector<mindie::testing::SchemaViolation> closest;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    auto violations = mindie::testing::validate_schema(documents[i], report);
    if (violations.empty()) return;
    if (i == 0 || violations.size() < closest.size()) closest = std::move(violations);
  }
  for (const auto& v : closest) FAIL_CHECK(name << ".schema.json: " << v.field << ": " << v.message);
}

void check_report_schemas(const Target& target, const std::string& ns) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"wait", {"wait", "--for=ready", "--timeout", "0"}},
      {"list", {"list"}},
      {"history", {"history"}},
      {"history", {"history", "--revision", "1"}},
      {"rollout", {"rollout", "status", "--watch=false"}}};
  for (auto [schema, args] : commands) {
    args.insert(args.end(), {"-n", ns, "-o", "json"});
    std::string command;
    for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
    CAPTURE(command);
    const auto run = target.mindie(args);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    check_schema(schema, nlohmann::json::parse(run.out));
  }
}

}  // namespace e2e
