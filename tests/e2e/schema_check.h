// The tool's own -o json reports checked against the JSON Schemas under docs/schemas that document them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness.h"

namespace e2e {

/// Checks `report` (a command's -o json) against the JSON Schema docs/schemas/`name`.schema.json that documents it:
/// each violation is a failed check naming the field (for a schema whose root is an anyOf of documents, those of
/// the document it comes closest to).
void check_schema(const std::string& name, const nlohmann::json& report);

/// Runs `wait`, `list -n`, `history`, `history --revision 1` and `rollout status --watch=false` with -o json in
/// namespace `ns`, which holds a ready deployment with a recorded revision, and checks each against its schema.
void check_report_schemas(const Target& target, const std::string& ns);

}  // namespace e2e
