// A structural OpenAPI v3 schema checker for CRD schemas (the subset Kubernetes CRDs use), for the unit tests
// (checking rendered objects against ../shared/reference/crds and the workload schemas, as kube-apiserver validates
// custom resources).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mindie::testing {

/// One schema violation, shaped like a Status cause: `field` is the JSON path ("spec.template.roles[0].replicas"),
/// `reason` the Kubernetes cause type ("FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported",
/// "FieldValueTypeInvalid", "FieldValueUnknown" for pruned/unknown fields).
struct SchemaViolation {
  std::string field;
  std::string reason;
  std::string message;
};

/// Checks `value` against OpenAPI v3 `schema` (type, or JSON Schema's list of types, properties, required, items,
/// additionalProperties, enum, minimum/maximum, minLength/maxLength, pattern, format int32/int64 ranges, anyOf for
/// int-or-string, x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
/// nullable). Unknown fields (not in `properties`, not preserved) are reported, as under fieldValidation=Strict. `root`
/// is the path prefix for reported fields ("" for the object itself). Returns every violation found.
std::vector<SchemaViolation> validate_schema(const nlohmann::json& schema, const nlohmann::json& value,
                                             const std::string& root = "");

/// Reads a multi-document CRD YAML file and returns, for each CRD, (kind, version name, openAPIV3Schema).
/// Throws std::runtime_error naming the file when it cannot be read or parsed.
struct CrdVersionSchema {
  std::string group;
  std::string kind;
  std::string plural;
  std::string version;
  bool namespaced = true;
  bool status_subresource = false;
  nlohmann::json schema;
};
std::vector<CrdVersionSchema> load_crd_schemas(const std::string& path);

/// YAML text (one document) to nlohmann::json with YAML 1.2 core-schema scalar resolution; quoted scalars stay
/// strings. Throws std::runtime_error.
nlohmann::json yaml_to_nlohmann(const std::string& text);

}  // namespace mindie::testing
