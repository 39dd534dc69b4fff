// Rendered workloads checked the way `kubectl apply --validate=strict` would check them if they were sent as
// Deployments/StatefulSets: every role's workload spec (pod template included) against the Kubernetes 1.30 OpenAPI
// schemas of apps/v1 DeploymentSpec / StatefulSetSpec, unknown fields rejected.
//
// Why this and not the CRD: the InferServiceSet CRD marks role.spec x-kubernetes-preserve-unknown-fields, so
// the API server does not look inside it; a misspelt field there would be dropped silently by
// infer-operator's decoder. The schemas (tests/unit/schemas/workload_schemas.json) are generated from the npm
// package kubernetes-types, itself generated from the Kubernetes OpenAPI specification (field names, required
// fields, types; see generate_workload_schemas.mjs), and checked with the structural validator the unit tests use
// for CRDs (tests/support/openapi_schema). Enum values and formats are not in those schemas; the semantic
// rules the API server adds (unique names, mounts of existing volumes, requests within limits, privileged vs
// allowPrivilegeEscalation, label syntax) are checked below by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "config_test_support.h"
#include "kube/names.h"
#include "mindie/overrides.h"
#include "render_test_support.h"
#include "support/openapi_schema.h"
#include "workload_schema_support.h"

using namespace mindie;
using namespace mindie::test;
namespace json = boost::json;
using nlohmann::json_pointer;
using njson = nlohmann::json;

namespace {

struct WorkloadSchemas {
  njson deployment;
  njson statefulset;
};

const WorkloadSchemas& schemas() {
  static const WorkloadSchemas s = [] {
    WorkloadSchemas out;
    out.deployment = workload_schema("apps.v1.DeploymentSpec");
    out.statefulset = workload_schema("apps.v1.StatefulSetSpec");
    // infer-operator sets serviceName itself (its headless "service-<workload>" per StatefulSet instance).
    auto& req = out.statefulset["required"];
    req.erase(std::remove(req.begin(), req.end(), "serviceName"), req.end());
    return out;
  }();
  return s;
}

std::vector<testing::SchemaViolation> schema_violations(const json::object& role) {
  const std::string kind(role.at("workload").at("kind").as_string());
  const njson& schema = kind == "StatefulSet" ? schemas().statefulset : schemas().deployment;
  const std::string path = "roles[" + std::string(role.at("name").as_string()) + "].spec";
  return testing::validate_schema(schema, to_nlohmann(role.at("spec")), path);
}

long double q(const json::value& v) {
  auto r = kube::parse_quantity(std::string(v.as_string()));
  REQUIRE(r.has_value());
  return *r;
}

// The API server's own checks of a pod template that a schema cannot express (k8s.io/kubernetes
// pkg/apis/core/validation: ValidatePodSpec and friends), for what the renderer produces.
void check_semantics(const json::object& role) {
  const std::string name(role.at("name").as_string());
  CAPTURE(name);
  const auto& spec = role.at("spec").as_object();
  const auto& tpl = spec.at("template").as_object();
  const auto& pod = tpl.at("spec").as_object();
  // The selector selects the template.
  for (const auto& kv : spec.at("selector").at("matchLabels").as_object())
    CHECK(tpl.at("metadata").at("labels").at(kv.key()) == kv.value());
  for (const auto& kv : tpl.at("metadata").at("labels").as_object()) {
    CHECK(kube::is_qualified_name(kv.key()));
    CHECK(kube::is_label_value(kv.value().as_string()));
  }
  for (const auto& kv : role.at("metadata").at("labels").as_object())
    CHECK(kube::is_label_value(kv.value().as_string()));
  if (const auto* ann = tpl.at("metadata").as_object().if_contains("annotations"))
    for (const auto& kv : ann->as_object()) CHECK(kube::is_qualified_name(kv.key()));
  // Volumes: unique DNS-1123 names, exactly one source each.
  std::set<std::string> volumes;
  for (const auto& v : pod.at("volumes").as_array()) {
    const std::string vname(v.at("name").as_string());
    CHECK(kube::is_dns1123_label(vname));
    CHECK(volumes.insert(vname).second);
    CHECK(v.as_object().size() == 2);
  }
  for (const auto& c : pod.at("containers").as_array()) {
    const auto& co = c.as_object();
    CHECK(kube::is_dns1123_label(co.at("name").as_string()));
    // Mounts name existing volumes, at distinct absolute paths.
    std::set<std::string> paths;
    for (const auto& m : co.at("volumeMounts").as_array()) {
      CHECK(volumes.count(std::string(m.at("name").as_string())) == 1);
      const std::string path(m.at("mountPath").as_string());
      CHECK(path.front() == '/');
      CHECK(paths.insert(path).second);
    }
    std::set<std::string> env;
    for (const auto& e : co.at("env").as_array()) CHECK(env.insert(std::string(e.at("name").as_string())).second);
    // Requests within limits; extended resources (NPUs) requested exactly as limited.
    const auto& res = co.at("resources").as_object();
    for (const auto& kv : res.at("requests").as_object()) {
      const json::value* lim = res.at("limits").as_object().if_contains(kv.key());
      if (lim) CHECK(q(kv.value()) <= q(*lim));
      if (std::string_view(kv.key()).find('/') != std::string_view::npos) CHECK((lim && *lim == kv.value()));
    }
    if (const auto* sc = co.if_contains("securityContext")) {
      const auto& s = sc->as_object();
      // "cannot set allowPrivilegeEscalation to false and privileged to true"
      CHECK_FALSE((s.contains("privileged") && s.at("privileged") == true && s.contains("allowPrivilegeEscalation") &&
                   s.at("allowPrivilegeEscalation") == false));
    }
  }
  if (const auto* tol = pod.if_contains("tolerations"))
    for (const auto& t : tol->as_array())
      if (t.as_object().contains("tolerationSeconds")) CHECK(t.at("effect") == "NoExecute");
}

// An overrides file that touches every field on every kind of role.
constexpr const char* kFullOverrides = R"(
roles:
  prefill:
    resources: {requests: {cpu: "32", memory: 128Gi, ephemeral-storage: 10Gi}, limits: {memory: 512Gi}}
    labels: {team: llm, example.com/tier: gold}
    annotations: {example.com/owner: alice}
    nodeSelector: {example.com/pool: llm}
    tolerations:
    - {key: dedicated, operator: Equal, value: llm, effect: NoSchedule}
    - {key: example.com/maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
    volumes:
    - {name: cache, hostPath: {path: /data/cache, type: DirectoryOrCreate}}
    - {name: scratch, emptyDir: {medium: Memory, sizeLimit: 1Gi}}
    - {name: extra-config, configMap: {name: extra, defaultMode: 0o440, items: [{key: a, path: a.json}]}}
    - {name: creds, secret: {secretName: creds, optional: true}}
    - {name: models, persistentVolumeClaim: {claimName: models, readOnly: true}}
    - {name: share, nfs: {server: nfs.example.com, path: /export, readOnly: true}}
    volumeMounts:
    - {name: cache, mountPath: /root/.cache}
    - {name: models, mountPath: /models, readOnly: true, subPath: qwen}
    faultScheduling: force
    faultRetryTimes: 3
    gangSchedule: true
  decode:
    faultScheduling: "off"
    gangSchedule: false
  controller:
    labels: {team: llm}
    tolerations: [{key: dedicated, operator: Exists}]
    resources: {limits: {cpu: "16"}}
  coordinator:
    nodeSelector: {example.com/pool: gateway}
  kv-pool:
    annotations: {example.com/owner: bob}
)";

}  // namespace

TEST_CASE("every rendered workload is a valid Deployment/StatefulSet spec, with and without overrides") {
  const auto ovr = overrides::parse_overrides(kFullOverrides, "full.yaml");
  for (const char* hw : {"800I_A2", "800I_A3", "900_A3_SuperPoD"}) {
    for (const char* engine : {"vllm", "sglang"}) {
      for (bool kv : {false, true}) {
        for (bool with_overrides : {false, true}) {
          CAPTURE(hw);
          CAPTURE(engine);
          CAPTURE(kv);
          CAPTURE(with_overrides);
          auto cfg = valid_config();
          deploy_of(cfg)["hardware_type"] = hw;
          deploy_of(cfg)["single_p_instance_pod_num"] = 2;
          cfg["motor_engine_prefill_config"].as_object()["engine_type"] = engine;
          cfg["motor_engine_decode_config"].as_object()["engine_type"] = engine;
          if (kv) {
            cfg["motor_engine_prefill_config"].as_object()["engine_config"] =
                json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
            cfg["kv_cache_pool_config"] =
                json::parse(R"({"eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1})");
            cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
          }
          render::RenderOptions opts;
          if (with_overrides) opts.overrides = ovr;
          const auto iss = render_iss(parse(cfg), opts);
          for (const auto& r : iss.at("spec").at("template").at("roles").as_array()) {
            const auto violations = schema_violations(r.as_object());
            for (const auto& v : violations) INFO(v.field << ": " << v.reason << " " << v.message);
            CHECK(violations.empty());
            check_semantics(r.as_object());
          }
        }
      }
    }
  }
}

TEST_CASE("the strict check is not vacuous: misspelt, misplaced and mistyped fields are caught") {
  const auto iss = render_iss(parse(valid_config()));
  const auto base = to_nlohmann(role_of(iss, "prefill").at("spec"));
  const auto check_rejects = [&](const char* pointer, njson value, const char* reason) {
    CAPTURE(pointer);
    njson broken = base;
    broken[json_pointer<std::string>(pointer)] = std::move(value);
    const auto v = testing::validate_schema(schemas().statefulset, broken, "spec");
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().reason == reason);
  };
  check_rejects("/template/spec/nodeSelecter", njson::object(), "FieldValueUnknown");
  check_rejects("/template/spec/containers/0/volumeMount", njson::array(), "FieldValueUnknown");
  check_rejects("/template/spec/volumes/0/hostpath", njson::object(), "FieldValueUnknown");
  check_rejects("/template/metadata/label", njson::object(), "FieldValueUnknown");
  check_rejects("/template/spec/terminationGracePeriodSeconds", "10", "FieldValueTypeInvalid");
  check_rejects("/template/spec/containers/0/securityContext/capabilities/drop", "ALL", "FieldValueTypeInvalid");
  njson missing = base;
  missing["template"]["spec"]["containers"][0].erase("name");
  const auto v = testing::validate_schema(schemas().statefulset, missing, "spec");
  REQUIRE_FALSE(v.empty());
  CHECK(v.front().reason == "FieldValueRequired");
}
