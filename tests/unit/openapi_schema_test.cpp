#include "support/openapi_schema.h"

#include <doctest/doctest.h>

#include <algorithm>

using mindie::testing::load_crd_schemas;
using mindie::testing::SchemaViolation;
using mindie::testing::validate_schema;
using mindie::testing::yaml_to_nlohmann;
using nlohmann::json;

namespace {

const std::string kCrdFile = std::string(MINDIE_SHARED_DIR) + "/reference/crds/mindcluster.huawei.com_crds.yaml";

json infer_service_set_schema() {
  for (const auto& crd : load_crd_schemas(kCrdFile))
    if (crd.kind == "InferServiceSet" && crd.version == "v1") return crd.schema;
  FAIL("InferServiceSet v1 not found in " << kCrdFile);
  return nullptr;
}

json hand_made_iss() {
  return yaml_to_nlohmann(R"(
apiVersion: mindcluster.huawei.com/v1
kind: InferServiceSet
metadata:
  name: demo
  namespace: mindie
  labels: {app: mindie}
spec:
  replicas: 1
  template:
    roles:
    - name: controller
      replicas: 1
      workload: {apiVersion: apps/v1, kind: Deployment}
      services:
      - name: ctrl
        spec:
          ports: [{port: 1026, targetPort: 1026, protocol: TCP}]
      spec:
        replicas: 2
        template:
          spec:
            containers: [{name: c, image: "mindie:1"}]
    - name: prefill
      replicas: 2
      workload: {apiVersion: apps/v1, kind: StatefulSet}
      spec: {replicas: 1}
status:
  replicas: 1
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2025-01-01T00:00:00Z"}
)");
}

bool has(const std::vector<SchemaViolation>& v, const std::string& field, const std::string& reason) {
  return std::any_of(v.begin(), v.end(), [&](const auto& x) { return x.field == field && x.reason == reason; });
}

}  // namespace

TEST_CASE("CRD file: all three mindcluster kinds with their subresources") {
  const auto crds = load_crd_schemas(kCrdFile);
  REQUIRE(crds.size() == 3);
  for (const auto& c : crds) {
    CHECK(c.group == "mindcluster.huawei.com");
    CHECK(c.namespaced);
    CHECK(c.status_subresource);
    CHECK(c.schema.is_object());
  }
  CHECK(crds[0].plural == "inferservicesets");
  CHECK_THROWS_AS(load_crd_schemas("/nonexistent/crds.yaml"), std::runtime_error);
}

TEST_CASE("schema: a hand-made InferServiceSet is valid") {
  const auto violations = validate_schema(infer_service_set_schema(), hand_made_iss());
  for (const auto& v : violations) CAPTURE(v.field + ": " + v.message);
  CHECK(violations.empty());
}

TEST_CASE("schema: violations carry Kubernetes cause types and field paths") {
  const json schema = infer_service_set_schema();
  json iss = hand_made_iss();
  iss["spec"]["replicas"] = "one";
  iss["spec"]["template"]["roles"][1]["replicas"] = 3000000000LL;  // beyond int32
  iss["spec"]["template"]["roles"][0]["services"][0]["spec"]["ports"][0].erase("port");
  iss["spec"]["template"]["roles"][0]["services"][0]["spec"]["ports"][0]["targetPort"] = true;
  iss["spec"]["bogus"] = 1;
  iss["status"]["conditions"][0]["status"] = "Maybe";
  iss["status"]["conditions"][0]["reason"] = "not a reason";
  iss["status"]["conditions"][0].erase("message");
  const auto v = validate_schema(schema, iss);
  CHECK(has(v, "spec.replicas", "FieldValueTypeInvalid"));
  CHECK(has(v, "spec.template.roles[1].replicas", "FieldValueInvalid"));
  CHECK(has(v, "spec.template.roles[0].services[0].spec.ports[0].port", "FieldValueRequired"));
  CHECK(has(v, "spec.template.roles[0].services[0].spec.ports[0].targetPort", "FieldValueTypeInvalid"));
  CHECK(has(v, "spec.bogus", "FieldValueUnknown"));
  CHECK(has(v, "status.conditions[0].status", "FieldValueNotSupported"));
  CHECK(has(v, "status.conditions[0].reason", "FieldValueInvalid"));
  CHECK(has(v, "status.conditions[0].message", "FieldValueRequired"));
  // The role's spec preserves unknown fields: anything goes inside it.
  CHECK_FALSE(has(v, "spec.template.roles[0].spec.template", "FieldValueUnknown"));
}

TEST_CASE("schema: int-or-string, nullable and additionalProperties") {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"port", {{"x-kubernetes-int-or-string", true}}},
                         {"labels", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}},
                         {"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 64}}},
                         {"s", {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}, {"pattern", "^[a-z]+$"}}}}}};
  CHECK(validate_schema(schema, {{"port", 80}}, "spec").empty());
  CHECK(validate_schema(schema, {{"port", "http"}}, "spec").empty());
  CHECK(has(validate_schema(schema, {{"port", 1.5}}, "spec"), "spec.port", "FieldValueTypeInvalid"));
  CHECK(has(validate_schema(schema, {{"labels", {{"a", 1}}}}, "spec"), "spec.labels.a", "FieldValueTypeInvalid"));
  CHECK(validate_schema(schema, {{"n", nullptr}}, "spec").empty());
  CHECK(has(validate_schema(schema, {{"n", 65}}, "spec"), "spec.n", "FieldValueInvalid"));
  CHECK(has(validate_schema(schema, {{"n", 0}}, "spec"), "spec.n", "FieldValueInvalid"));
  CHECK(has(validate_schema(schema, {{"s", "a"}}, "spec"), "spec.s", "FieldValueInvalid"));
  CHECK(has(validate_schema(schema, {{"s", "abcd"}}, "spec"), "spec.s", "FieldValueTooLong"));
  CHECK(has(validate_schema(schema, {{"s", "AB"}}, "spec"), "spec.s", "FieldValueInvalid"));
}

TEST_CASE("yaml_to_nlohmann: YAML 1.2 core schema") {
  const json j = yaml_to_nlohmann(
      "a: 1\nb: '1'\nc: true\nd: yes\ne: ~\nf: 1.5\ng: 0x1F\nh: \"true\"\ni: [1, two]\nj: 99999999999999999999\n");
  CHECK(j["a"] == 1);
  CHECK(j["b"] == "1");
  CHECK(j["c"] == true);
  CHECK(j["d"] == "yes");  // YAML 1.1 booleans are strings in 1.2
  CHECK(j["e"].is_null());
  CHECK(j["f"] == 1.5);
  CHECK(j["g"] == 31);
  CHECK(j["h"] == "true");
  CHECK(j["i"] == json::array({1, "two"}));
  CHECK(j["j"].is_number());
  CHECK_THROWS_AS(yaml_to_nlohmann("a: [1, 2"), std::runtime_error);
  CHECK(yaml_to_nlohmann(R"({"json": "is yaml"})")["json"] == "is yaml");
}

TEST_CASE("schema: JSON Schema's list of types (the report schemas under docs/schemas)") {
  const json schema = json::parse(R"({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}})");
  CHECK(validate_schema(schema, json::parse(R"({"n": 3})")).empty());
  CHECK(validate_schema(schema, json::parse(R"({"n": null})")).empty());
  const auto v = validate_schema(schema, json::parse(R"({"n": "3"})"));
  REQUIRE(v.size() == 1);
  CHECK(v[0].field == "n");
  CHECK(v[0].reason == "FieldValueTypeInvalid");
  CHECK(v[0].message.find("must be of type integer or null") != std::string::npos);
}
