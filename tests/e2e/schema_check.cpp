#include "schema_check.h"

#include <doctest/doctest.h>

#include "harness.h"
#include "support/openapi_schema.h"

namespace e2e {

void check_schema(const std::string& name, const nlohmann::json& report) {
  const nlohmann::json schema =
      nlohmann::json::parse(read_file(std::string(MINDIE_SOURCE_DIR) + "/docs/schemas/" + name + ".schema.json"));
  for (const auto& v : mindie::testing::validate_schema(schema, report))
    FAIL_CHECK(name << ".schema.json: " << v.field << ": " << v.message);
}

}  // namespace e2e
