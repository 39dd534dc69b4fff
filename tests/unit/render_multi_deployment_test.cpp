// Rendering of the Deployment-based modes (mindie/render.h render_multi_*, render_single_container*): names,
// labels, env addresses, the coordinator's NodePort, the shared pod templates, and apps/v1 DeploymentSpec schema
// validity.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "config_test_support.h"
#include "mindie/overrides.h"
#include "mindie/render.h"
#include "render_test_support.h"
#include "support/openapi_schema.h"
#include "workload_schema_support.h"

using namespace mindie;
using mindie::test::deploy_of;
using mindie::test::parse;
using mindie::test::valid_config;
namespace json = boost::json;
using njson = nlohmann::json;

namespace {

json::object multi_config() {
  json::object cfg = valid_config();
  deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  deploy_of(cfg)["p_instances_num"] = 2;
  deploy_of(cfg)["d_instances_num"] = 3;
  deploy_of(cfg)["single_d_instance_pod_num"] = 2;
  return cfg;
}

std::string name_of(const json::object& o) { return std::string(o.at("metadata").at("name").as_string()); }

std::string label(const json::object& o, const char* key) {
  const auto* v = o.at("metadata").as_object().at("labels").as_object().if_contains(key);
  return v ? std::string(v->as_string()) : "";
}

const json::object& find(const std::vector<json::object>& objs, std::string_view kind, std::string_view name) {
  for (const auto& o : objs)
    if (o.at("kind").as_string() == kind && name_of(o) == name) return o;
  throw std::runtime_error("no " + std::string(kind) + "/" + std::string(name));
}

const json::object& container(const json::object& deployment) {
  return deployment.at("spec").at("template").at("spec").at("containers").at(0).as_object();
}

std::string env_of(const json::object& deployment, std::string_view name) {
  for (const auto& e : container(deployment).at("env").as_array())
    if (e.at("name").as_string() == name)
      return e.as_object().contains("value") ? std::string(e.at("value").as_string()) : "?";
  return "";
}

const njson& deployment_schema() {
  static const njson schema = mindie::test::workload_schema("apps.v1.DeploymentSpec");
  return schema;
}

}  // namespace

TEST_CASE("multi_deployment: objects, names and order (deploy.py's names; engine Deployments per instance)") {
  const auto cfg = parse(multi_config());
  const auto objs = render::render_multi_deployment(cfg, nullptr, {});
  std::vector<std::string> got;
  for (const auto& o : objs) got.push_back(std::string(o.at("kind").as_string()) + "/" + name_of(o));
  const std::vector<std::string> want = {
      "ConfigMap/motor-config",
      "ServiceAccount/mindie-motor-controller",
      "ClusterRole/mindie-motor-controller-team-a",
      "ClusterRoleBinding/mindie-motor-controller-team-a",
      "Role/mindie-motor-controller",
      "RoleBinding/mindie-motor-controller",
      "Deployment/mindie-motor-controller",
      "Service/mindie-motor-controller-service",
      "Service/mindie-motor-controller-observability-service",
      "Deployment/mindie-motor-coordinator",
      "Service/mindie-motor-coordinator-mgmt",
      "Service/mindie-motor-coordinator-infer",
      "Service/mindie-motor-coordinator-obs",
      "Deployment/vllm-p0",
      "Deployment/vllm-p1",
      "Deployment/vllm-d0",
      "Deployment/vllm-d1",
      "Deployment/vllm-d2",
  };
  CHECK(got == want);
  // The ConfigMap records the mode and the workload name (what delete, scale and status read).
  const auto& ann = objs[0].at("metadata").at("annotations").as_object();
  CHECK(ann.at(baseline::kDeployModeAnnotation) == "multi_deployment");
  CHECK(ann.at(baseline::kWorkloadNameAnnotation) == "mindie-motor-vllm");
  // Engine base from engine_type.
  json::object mindie = multi_config();
  mindie["motor_engine_prefill_config"].as_object()["engine_type"] = "mindie-llm";
  mindie["motor_engine_decode_config"].as_object()["engine_type"] = "mindie-llm";
  CHECK(render::engine_deployment_name(parse(mindie), "decode", 4) == "mindie-server-d4");
  CHECK_THROWS_AS(render::engine_deployment_name(cfg, "controller", 0), std::invalid_argument);
}

TEST_CASE("multi_deployment PD-hybrid: one Deployment <base>-u<i> per union instance, no prefill/decode (U4)") {
  auto raw = test::hybrid_config(2, 2, 4);  // 2 union instances of 2 pods x 4 NPUs
  deploy_of(raw)["deploy_mode"] = "multi_deployment";
  deploy_of(raw)["hardware_type"] = "800I_A3";
  const auto objs = render::render_multi_workloads(parse(raw), {});
  std::vector<std::string> engines;
  for (const auto& o : objs)
    if (test::is_str(o.at("kind"), "Deployment") && label(o, "app.kubernetes.io/component") != "controller" &&
        label(o, "app.kubernetes.io/component") != "coordinator")
      engines.push_back(name_of(o));
  CHECK(engines == std::vector<std::string>{"vllm-u0", "vllm-u1"});
  const auto& u1 = find(objs, "Deployment", "vllm-u1");
  CHECK(label(u1, "app.kubernetes.io/component") == "union");
  CHECK(label(u1, "kubectl-mindie/instance-index") == "1");
  CHECK(u1.at("spec").at("replicas") == 2);
  CHECK(env_of(u1, "ROLE") == "union");
  CHECK(env_of(u1, "COORDINATOR_OBS_SERVICE") == "mindie-motor-coordinator-obs.team-a.svc.cluster.local");
  CHECK(test::is_str(container(u1).at("resources").at("limits").at("huawei.com/Ascend910"), "4"));
  CHECK(test::is_str(u1.at("metadata").at("annotations").at("sp-block"), "8"));  // pods x NPUs of the instance (A3)
  CHECK(render::engine_deployment_name(parse(raw), "union", 3) == "vllm-u3");
  // Overrides of the union role reach its Deployments.
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides("roles:\n  union:\n    labels: {team: llm}\n", "overrides.yaml");
  const auto with = render::render_multi_workloads(parse(raw), opts);
  CHECK(test::is_str(
      find(with, "Deployment", "vllm-u0").at("spec").at("template").at("metadata").at("labels").at("team"), "llm"));
}

TEST_CASE("multi_deployment: every object carries the labels delete selects by; engines their role and index") {
  const auto cfg = parse(multi_config());
  render::RenderOptions opts;
  opts.service_set_name = "my-llm";
  const auto objs = render::render_multi_workloads(cfg, opts);
  for (const auto& o : objs) {
    CAPTURE(name_of(o));
    CHECK(label(o, render::kManagedByLabel) == "kubectl-mindie");
    CHECK(label(o, render::kInstanceLabel) == "my-llm");
    if (o.at("kind") != "Deployment") continue;
    // Pods carry them too (delete --wait and status select pods with them), and the selector matches the pods.
    const auto& tpl_labels = o.at("spec").at("template").at("metadata").at("labels").as_object();
    CHECK(tpl_labels.at(render::kManagedByLabel) == "kubectl-mindie");
    CHECK(tpl_labels.at(render::kInstanceLabel) == "my-llm");
    CHECK(tpl_labels.at("app") == json::value(name_of(o)));
    CHECK(tpl_labels.at("job-name") == "team-a");
    CHECK(o.at("spec").at("selector").at("matchLabels") == json::value(json::object{{"app", name_of(o)}}));
    CHECK(tpl_labels.at(render::kComponentLabel) == json::value(label(o, render::kComponentLabel)));
  }
  const auto& d2 = find(objs, "Deployment", "vllm-d2");
  CHECK(label(d2, render::kComponentLabel) == "decode");
  CHECK(label(d2, render::kInstanceIndexLabel) == "2");
  CHECK(d2.at("spec").at("template").at("metadata").at("labels").at(render::kInstanceIndexLabel) == "2");
  CHECK(d2.at("spec").at("replicas") == 2);  // pods per instance
  CHECK(find(objs, "Deployment", "vllm-p1").at("spec").at("replicas") == 1);
  CHECK(label(find(objs, "Deployment", "mindie-motor-coordinator"), render::kInstanceIndexLabel).empty());
}

TEST_CASE("multi_deployment: env addresses are the Services' cluster FQDNs; Services select the pods") {
  json::object raw = multi_config();
  raw["motor_engine_prefill_config"].as_object()["engine_config"] =
      json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
  raw["kv_cache_pool_config"] = json::parse(R"({"port": 50090, "eviction_high_watermark_ratio": 0.9,
                                                  "eviction_ratio": 0.1})");
  raw["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  const auto cfg = parse(raw);
  const auto objs = render::render_multi_workloads(cfg, {});
  for (const char* name : {"mindie-motor-controller", "mindie-motor-coordinator", "vllm-p0", "vllm-d2",
                           "mindie-motor-kv-pool", "mindie-motor-kv-conductor"}) {
    CAPTURE(name);
    const auto& d = find(objs, "Deployment", name);
    CHECK(env_of(d, "CONTROLLER_SERVICE") == "mindie-motor-controller-service.team-a.svc.cluster.local");
    CHECK(env_of(d, "COORDINATOR_SERVICE") == "mindie-motor-coordinator-mgmt.team-a.svc.cluster.local");
    // PyMotor 7d15c04 §U6: on the controller, the coordinator and the engines, not on kv-pool / kv-conductor.
    const bool wants_split = std::string_view(name) != "mindie-motor-kv-pool" &&
                             std::string_view(name) != "mindie-motor-kv-conductor";
    CHECK(env_of(d, "COORDINATOR_INFER_SERVICE") ==
          (wants_split ? "mindie-motor-coordinator-infer.team-a.svc.cluster.local" : ""));
    CHECK(env_of(d, "COORDINATOR_OBS_SERVICE") ==
          (wants_split ? "mindie-motor-coordinator-obs.team-a.svc.cluster.local" : ""));
    CHECK(env_of(d, "KVP_MASTER_SERVICE") == "kvp-master.team-a.svc.cluster.local");
    CHECK(env_of(d, "KV_CONDUCTOR_SERVICE") == "kv-conductor.team-a.svc.cluster.local");
    CHECK(env_of(d, "JOB_NAME") == "team-a");
  }
  CHECK(env_of(find(objs, "Deployment", "vllm-p0"), "ROLE") == "prefill");
  CHECK(env_of(find(objs, "Deployment", "mindie-motor-kv-pool"), "ROLE") == "kv_pool");
  const std::map<std::string, std::pair<std::string, int>> services = {
      {"mindie-motor-controller-service", {"mindie-motor-controller", 1026}},
      {"mindie-motor-controller-observability-service", {"mindie-motor-controller", 1027}},
      {"mindie-motor-coordinator-mgmt", {"mindie-motor-coordinator", 1026}},
      {"mindie-motor-coordinator-infer", {"mindie-motor-coordinator", 1025}},
      {"mindie-motor-coordinator-obs", {"mindie-motor-coordinator", 1027}},
      {"kvp-master", {"mindie-motor-kv-pool", 50090}},
      {"kv-conductor", {"mindie-motor-kv-conductor", 13333}},
  };
  for (const auto& [svc, want] : services) {
    CAPTURE(svc);
    const auto& s = find(objs, "Service", svc);
    CHECK(s.at("spec").at("selector") == json::value(json::object{{"app", want.first}}));
    CHECK(s.at("spec").at("ports").at(0).at("port") == want.second);
    CHECK(s.at("spec").at("ports").at(0).at("targetPort") == want.second);
    // The selected Deployment's pods carry that app label.
    CHECK(find(objs, "Deployment", want.first).at("spec").at("template").at("metadata").at("labels").at("app") ==
          json::value(want.first));
  }
}

TEST_CASE("multi_deployment: the NodePorts (infer, obs, controller obs) are allocated unless the keys fix them") {
  json::object raw = multi_config();
  auto objs = render::render_multi_workloads(parse(raw), {});
  for (const char* name : {render::kMultiCoordinatorInfer, render::kMultiCoordinatorObs, render::kMultiControllerObs}) {
    CAPTURE(name);
    const auto& svc = find(objs, "Service", name);
    CHECK(svc.at("spec").at("type") == "NodePort");
    CHECK_FALSE(svc.at("spec").at("ports").at(0).as_object().contains("nodePort"));
  }
  CHECK(find(objs, "Service", "mindie-motor-coordinator-mgmt").at("spec").at("type") == "ClusterIP");
  CHECK(find(objs, "Service", "mindie-motor-controller-service").at("spec").at("type") == "ClusterIP");
  CHECK(render::node_port_claims(parse(raw), {}).empty());  // nothing for deploy to check

  deploy_of(raw)["infer_node_port"] = 31015;
  objs = render::render_multi_workloads(parse(raw), {});
  CHECK(find(objs, "Service", "mindie-motor-coordinator-infer").at("spec").at("ports").at(0).at("nodePort") == 31015);
  auto claims = render::node_port_claims(parse(raw), {});
  REQUIRE(claims.size() == 1);
  CHECK(claims[0].service == "mindie-motor-coordinator-infer");
  CHECK(claims[0].port == 31015);
  CHECK(claims[0].key == "motor_deploy_config.infer_node_port");

  deploy_of(raw)["obs_node_port"] = 31017;
  deploy_of(raw)["controller_obs_node_port"] = 31027;
  objs = render::render_multi_workloads(parse(raw), {});
  CHECK(find(objs, "Service", "mindie-motor-coordinator-obs").at("spec").at("ports").at(0).at("nodePort") == 31017);
  CHECK(find(objs, "Service", "mindie-motor-controller-observability-service")
            .at("spec")
            .at("ports")
            .at(0)
            .at("nodePort") == 31027);
  claims = render::node_port_claims(parse(raw), {});
  REQUIRE(claims.size() == 3);
  CHECK(claims[1].service == "mindie-motor-coordinator-obs");
  CHECK(claims[1].port == 31017);
  CHECK(claims[1].key == "motor_deploy_config.obs_node_port");
  CHECK(claims[2].service == "mindie-motor-controller-observability-service");
  CHECK(claims[2].port == 31027);
  CHECK(claims[2].key == "motor_deploy_config.controller_obs_node_port");
  // The renamed management Service (deploy removes the old one when it is kubectl-mindie's).
  const auto renamed = render::renamed_services(parse(raw));
  REQUIRE(renamed.size() == 1);
  CHECK(renamed[0].old_name == "mindie-motor-coordinator-service");
  CHECK(renamed[0].new_name == "mindie-motor-coordinator-mgmt");
  CHECK(render::renamed_services(parse(valid_config())).empty());
  deploy_of(raw).erase("obs_node_port");
  deploy_of(raw).erase("controller_obs_node_port");

  deploy_of(raw)["infer_node_port"] = 8080;  // outside the default service-node-port-range
  const auto problems = test::problems_of(json::serialize(raw));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.infer_node_port");
}

TEST_CASE("multi_deployment: pod templates are the infer_service_set roles' (Ascend pieces, overrides)") {
  json::object raw = multi_config();
  deploy_of(raw)["hardware_type"] = "800I_A3";
  json::object iss_raw = raw;
  deploy_of(iss_raw)["deploy_mode"] = "infer_service_set";
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides(
      "roles:\n  decode:\n    labels: {team: llm}\n    resources: {limits: {memory: 300Gi}}\n", "ov.yaml");
  const auto objs = render::render_multi_workloads(parse(raw), opts);
  const auto iss_objs = render::render_infer_service_set(parse(iss_raw), nullptr, opts);
  const json::object* decode_role = nullptr;
  for (const auto& r : iss_objs.back().at("spec").at("template").at("roles").as_array())
    if (r.at("name") == "decode") decode_role = &r.as_object();
  REQUIRE(decode_role);
  const auto& d = find(objs, "Deployment", "vllm-d1");
  const auto& pod = d.at("spec").at("template").at("spec").as_object();
  const auto& iss_pod = decode_role->at("spec").at("template").at("spec").as_object();
  // The same pod spec but for the env addresses.
  json::object a = pod, b = iss_pod;
  a["containers"].as_array()[0].as_object().erase("env");
  b["containers"].as_array()[0].as_object().erase("env");
  CHECK(a == b);
  CHECK(pod.at("schedulerName") == "volcano");
  CHECK(container(d).at("resources").at("limits").at("huawei.com/Ascend910") == "8");
  CHECK(container(d).at("resources").at("limits").at("memory") == "300Gi");
  const auto& md = d.at("spec").at("template").at("metadata").as_object();
  CHECK(md.at("labels").at("team") == "llm");
  // The same annotations but for the template hash (the templates differ in env and labels) and sp-block, which
  // multi_deployment puts on the Deployment as pods x NPUs (PyMotor 7d15c04).
  json::object ann = md.at("annotations").as_object();
  json::object iss_ann = decode_role->at("spec").at("template").at("metadata").at("annotations").as_object();
  CHECK(ann.erase(render::kTemplateHashAnnotation) == 1);
  CHECK(iss_ann.erase(render::kTemplateHashAnnotation) == 1);
  CHECK(iss_ann.erase("sp-block") == 1);
  CHECK(ann == iss_ann);
  CHECK(d.at("metadata").at("annotations").at("sp-block") == "16");  // 2 pods x 8 NPUs
  // StatefulSet-only fields stay out of a Deployment.
  CHECK_FALSE(d.at("spec").as_object().contains("podManagementPolicy"));
}

TEST_CASE("multi_deployment: every Deployment spec passes the apps/v1 DeploymentSpec schema") {
  json::object raw = multi_config();
  raw["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  for (const auto& o : render::render_multi_workloads(parse(raw), {})) {
    if (o.at("kind") != "Deployment") continue;
    const auto v = testing::validate_schema(deployment_schema(), njson::parse(json::serialize(o.at("spec"))),
                                            name_of(o) + ".spec");
    for (const auto& x : v) FAIL_CHECK(x.field << ": " << x.message);
  }
}

TEST_CASE("multi_deployment: refusals name the field") {
  json::object raw = multi_config();
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides("roles:\n  prefill:\n    gangSchedule: true\n", "ov.yaml");
  deploy_of(raw)["single_p_instance_pod_num"] = 2;
  try {
    render::render_multi_workloads(parse(raw), opts);
    FAIL("expected a ValidationError");
  } catch (const validation::ValidationError& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "roles.prefill.gangSchedule");
    CHECK(e.source() == "ov.yaml");
  }
  render::RenderOptions bad;
  bad.service_set_name = "Bad_Name";
  CHECK_THROWS_AS(render::render_multi_workloads(parse(raw), bad), validation::ValidationError);
  CHECK_THROWS_AS(render::render_multi_workloads(parse(valid_config()), {}), std::invalid_argument);
}

TEST_CASE("multi_deployment with sglang: an mf-store Deployment and Service, engines pointed at it") {
  json::object raw = multi_config();
  raw["motor_engine_prefill_config"].as_object()["engine_type"] = "sglang";
  raw["motor_engine_decode_config"].as_object()["engine_type"] = "sglang";
  const auto objs = render::render_multi_workloads(parse(raw), {});
  const auto& store = find(objs, "Deployment", render::kMultiMfStore);
  CHECK(label(store, render::kComponentLabel) == "mf-store");
  const auto& svc = find(objs, "Service", render::kMfStoreService);
  CHECK(svc.at("spec").at("ports").at(0).at("port") == 50089);
  CHECK(svc.at("spec").at("selector").at("app") == render::kMultiMfStore);
  const auto& engine = find(objs, "Deployment", "sglang-d2");
  CHECK(env_of(engine, "ASCEND_MF_STORE_URL") == "tcp://mf-store.team-a.svc.cluster.local:50089");
  CHECK(env_of(engine, "ASCEND_MF_TRANSFER_PROTOCOL") == "device_rdma");
  CHECK(env_of(engine, "SGLANG_HOST_IP") == "?");
  // vllm: none of it.
  const auto plain = render::render_multi_workloads(parse(multi_config()), {});
  CHECK_THROWS(find(plain, "Deployment", render::kMultiMfStore));
  CHECK(env_of(find(plain, "Deployment", "vllm-p0"), "ASCEND_MF_STORE_URL").empty());
}

namespace {

json::object single_config() {
  json::object cfg = valid_config();
  deploy_of(cfg)["deploy_mode"] = "single_container";
  deploy_of(cfg)["p_pod_npu_num"] = 4;
  deploy_of(cfg)["d_pod_npu_num"] = 8;
  deploy_of(cfg)["infer_node_port"] = 31100;
  return cfg;
}

}  // namespace

TEST_CASE("single_container: one Deployment (NPUs = the larger of p/d) and its NodePort Service") {
  const auto cfg = parse(single_config());
  const auto objs = render::render_single_container(cfg, nullptr, {});
  std::vector<std::string> got;
  for (const auto& o : objs) got.push_back(std::string(o.at("kind").as_string()) + "/" + name_of(o));
  CHECK(got == std::vector<std::string>{"ConfigMap/motor-config", "ServiceAccount/mindie-motor-controller",
                                        "ClusterRole/mindie-motor-controller-team-a",
                                        "ClusterRoleBinding/mindie-motor-controller-team-a",
                                        "Role/mindie-motor-controller", "RoleBinding/mindie-motor-controller",
                                        "Deployment/team-a-single-container", "Service/team-a-coordinator-service"});
  CHECK(objs[0].at("metadata").at("annotations").at(baseline::kDeployModeAnnotation) == "single_container");
  const auto& d = find(objs, "Deployment", "team-a-single-container");
  CHECK(d.at("spec").at("replicas") == 1);
  CHECK(label(d, render::kComponentLabel) == "single-container");
  CHECK(env_of(d, "ROLE") == "SINGLE_CONTAINER");
  CHECK(env_of(d, "CONTROLLER_SERVICE").empty());  // every component is in this pod
  const auto& c = container(d);
  CHECK(c.at("resources").at("limits").at("huawei.com/Ascend910") == "8");
  const auto& pod = d.at("spec").at("template").at("spec").as_object();
  CHECK(pod.at("nodeSelector").at("accelerator-type") == "module-910b-8");
  CHECK(pod.at("serviceAccountName") == "mindie-motor-controller");
  CHECK(pod.at("automountServiceAccountToken") == true);
  CHECK_FALSE(d.at("spec").as_object().contains("podManagementPolicy"));
  // PyMotor's name for it (§U6); it selects the Deployment's pods.
  const auto& svc = find(objs, "Service", "team-a-coordinator-service");
  CHECK(svc.at("spec").at("type") == "NodePort");
  CHECK(svc.at("spec").at("ports").at(0).at("port") == 1025);
  CHECK(svc.at("spec").at("ports").at(0).at("nodePort") == 31100);
  CHECK(svc.at("spec").at("selector").at("app") == "team-a-single-container");
  CHECK(d.at("spec").at("template").at("metadata").at("labels").at("app") == "team-a-single-container");
  const auto v = testing::validate_schema(deployment_schema(), njson::parse(json::serialize(d.at("spec"))), "spec");
  for (const auto& x : v) FAIL_CHECK(x.field << ": " << x.message);
  // status reads only the single-container role from the baseline.
  const auto desired = render::desired_role_replicas(cfg);
  CHECK(desired.at("single-container") == 1);
  CHECK(desired.at("prefill") == 0);
  CHECK(desired.at("controller") == 0);
  const auto claims = render::node_port_claims(cfg, {});
  REQUIRE(claims.size() == 1);
  CHECK(claims[0].service == "team-a-coordinator-service");
  CHECK(claims[0].key == "motor_deploy_config.infer_node_port");
  const auto renamed = render::renamed_services(cfg);
  REQUIRE(renamed.size() == 1);
  CHECK(renamed[0].old_name == "team-a-single-container");
  CHECK(renamed[0].new_name == "team-a-coordinator-service");
}

TEST_CASE("single_container: overrides only of its own role; a job_id too long for the suffix") {
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides("roles:\n  prefill:\n    labels: {a: b}\n", "ov.yaml");
  try {
    render::render_single_container_workloads(parse(single_config()), opts);
    FAIL("expected a ValidationError");
  } catch (const validation::ValidationError& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "roles.prefill");
  }
  opts.overrides = overrides::parse_overrides("roles:\n  single-container:\n    labels: {a: b}\n", "ov.yaml");
  const auto objs = render::render_single_container_workloads(parse(single_config()), opts);
  CHECK(find(objs, "Deployment", "team-a-single-container")
            .at("spec")
            .at("template")
            .at("metadata")
            .at("labels")
            .at("a") == "b");

  // "<job_id>-coordinator-service" must fit 63 characters: job_id at most 43, refused when parsed.
  json::object raw = single_config();
  deploy_of(raw)["job_id"] = std::string(43, 'a');
  CHECK(name_of(render::render_single_container_workloads(parse(raw), {}).back()) ==
        std::string(43, 'a') + "-coordinator-service");
  deploy_of(raw)["job_id"] = std::string(44, 'a');
  const auto problems = test::problems_of(raw);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.job_id");
}
