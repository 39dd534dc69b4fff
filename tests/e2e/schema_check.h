// The tool's own -o json reports checked against the JSON Schemas under docs/schemas that document them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace e2e {

/// Checks `report` (a command's -o json) against the JSON Schema docs/schemas/`name`.schema.json that documents it:
/// each violation is a failed check naming the field.
void check_schema(const std::string& name, const nlohmann::json& report);

}  // namespace e2e
