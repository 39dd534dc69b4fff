// Rendering of the infer_service_set objects (mindie/render.h), including a schema check of the InferServiceSet
// against the published CRD in ../shared/reference/crds.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "config_test_support.h"
#include "mindie/manifests.h"
#include "mindie/overrides.h"
#include "mindie/render.h"
#include "render_test_support.h"
#include "support/openapi_schema.h"
#include "util/yaml_json.h"

using namespace mindie;
using mindie::test::container_of;
using mindie::test::deploy_of;
using mindie::test::find_kind;
using mindie::test::hybrid_config;
using mindie::test::is_str;
using mindie::test::parse;
using mindie::test::role_of;
using mindie::test::to_nlohmann;
using mindie::test::valid_config;
namespace json = boost::json;

namespace {

std::vector<json::object> render_all(const config::UserConfig& c, const render::RenderOptions& opts = {}) {
  return render::render_infer_service_set(c, nullptr, opts);
}

// Env value by name, or "" (absent).
std::string env_of(const json::object& role, std::string_view name) {
  for (const auto& e : container_of(role).at("env").as_array())
    if (is_str(e.at("name"), name))
      return e.as_object().contains("value") ? std::string(e.at("value").as_string()) : "?";
  return "";
}

// valid_config() with sglang engines on `hardware` (an mf-store deployment).
json::object sglang_config(const char* hardware) {
  auto cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = hardware;
  cfg["motor_engine_prefill_config"].as_object()["engine_type"] = "sglang";
  cfg["motor_engine_decode_config"].as_object()["engine_type"] = "sglang";
  return cfg;
}

}  // namespace

TEST_CASE("objects come in write order with names, namespaces and the managed-by label") {
  auto c = parse(valid_config());
  auto objs = render_all(c);
  REQUIRE(objs.size() == 7);
  const char* kinds[] = {"ConfigMap", "ServiceAccount", "ClusterRole",    "ClusterRoleBinding",
                         "Role",      "RoleBinding",    "InferServiceSet"};
  for (std::size_t i = 0; i < 7; ++i) {
    CAPTURE(kinds[i]);
    CHECK(objs[i].at("kind") == kinds[i]);
    CHECK(objs[i].contains("apiVersion"));
    const auto& md = objs[i].at("metadata").as_object();
    CHECK(!md.at("name").as_string().empty());
    CHECK(md.at("labels").at("app.kubernetes.io/managed-by") == "kubectl-mindie");
    const bool cluster_scoped = objs[i].at("kind") == "ClusterRole" || objs[i].at("kind") == "ClusterRoleBinding";
    CHECK(md.contains("namespace") == !cluster_scoped);
    if (!cluster_scoped) CHECK(md.at("namespace") == "team-a");
    mindie::test::check_label_values(objs[i], kinds[i]);
  }
  const auto& iss = objs[6];
  CHECK(iss.at("apiVersion") == "mindcluster.huawei.com/v1");
  CHECK(iss.at("metadata").at("name") == "mindie-motor-vllm");
  CHECK(iss.at("spec").at("replicas") == 1);
  CHECK(objs[1].at("metadata").at("name") == "mindie-motor-controller");
}

TEST_CASE("RBAC: names embed the namespace, the binding points at the namespaced ServiceAccount") {
  auto cfg = valid_config();
  auto a = render_all(parse(cfg));
  deploy_of(cfg)["job_id"] = "team-b";
  auto b = render_all(parse(cfg));
  const auto& role_a = find_kind(a, "ClusterRole");
  const auto& role_b = find_kind(b, "ClusterRole");
  CHECK(role_a.at("metadata").at("name") == "mindie-motor-controller-team-a");
  CHECK(role_a.at("metadata").at("name") != role_b.at("metadata").at("name"));
  // Cluster-wide only what lies outside any namespace: the nodes, read-only.
  REQUIRE(role_a.at("rules").as_array().size() == 1);
  const auto& rules = role_a.at("rules").at(0).as_object();
  std::set<std::string> resources, verbs;
  for (const auto& r : rules.at("resources").as_array()) resources.insert(std::string(r.as_string()));
  for (const auto& v : rules.at("verbs").as_array()) verbs.insert(std::string(v.as_string()));
  CHECK(resources == std::set<std::string>{"nodes"});
  CHECK(verbs == std::set<std::string>{"get", "list", "watch"});

  const auto& bind_b = find_kind(b, "ClusterRoleBinding");
  CHECK(bind_b.at("metadata").at("name") == "mindie-motor-controller-team-b");
  CHECK(bind_b.at("roleRef").at("name") == "mindie-motor-controller-team-b");
  CHECK(bind_b.at("roleRef").at("kind") == "ClusterRole");
  const auto& subject = bind_b.at("subjects").at(0).as_object();
  CHECK(subject.at("kind") == "ServiceAccount");
  CHECK(subject.at("name") == "mindie-motor-controller");
  CHECK(subject.at("namespace") == "team-b");
}

TEST_CASE("RBAC: ConfigMaps and pods are read through a Role of the deployment's namespace only") {
  auto cfg = valid_config();
  deploy_of(cfg)["job_id"] = "team-b";
  const auto objs = render_all(parse(cfg));
  const auto& role = find_kind(objs, "Role");
  CHECK(role.at("metadata").at("name") == "mindie-motor-controller");
  CHECK(role.at("metadata").at("namespace") == "team-b");
  REQUIRE(role.at("rules").as_array().size() == 1);
  const auto& rule = role.at("rules").at(0).as_object();
  std::set<std::string> resources, verbs;
  for (const auto& r : rule.at("resources").as_array()) resources.insert(std::string(r.as_string()));
  for (const auto& v : rule.at("verbs").as_array()) verbs.insert(std::string(v.as_string()));
  CHECK(rule.at("apiGroups") == boost::json::array{""});
  CHECK(resources == std::set<std::string>{"configmaps", "pods"});
  CHECK(verbs == std::set<std::string>{"get", "list", "watch"});
  const auto& binding = find_kind(objs, "RoleBinding");
  CHECK(binding.at("metadata").at("namespace") == "team-b");
  CHECK(binding.at("roleRef").at("kind") == "Role");
  CHECK(binding.at("roleRef").at("name") == "mindie-motor-controller");
  const auto& subject = binding.at("subjects").at(0).as_object();
  CHECK(subject.at("name") == "mindie-motor-controller");
  CHECK(subject.at("namespace") == "team-b");
}

TEST_CASE("roles, replicas and pods per instance") {
  auto cfg = valid_config();
  deploy_of(cfg)["p_instances_num"] = 3;
  deploy_of(cfg)["d_instances_num"] = 2;
  deploy_of(cfg)["single_p_instance_pod_num"] = 2;
  deploy_of(cfg)["single_d_instance_pod_num"] = 4;
  auto c = parse(cfg);
  const auto& iss = find_kind(render_all(c), "InferServiceSet");
  std::vector<std::string> names;
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array())
    names.emplace_back(r.at("name").as_string());
  // encode (multi_deployment only), union (PD-hybrid), mf-store (sglang) and single-container are rendered only when
  // on.
  CHECK(names == std::vector<std::string>{"controller", "coordinator", "prefill", "decode", "kv-pool", "kv-conductor"});
  CHECK(render::role_names() == std::vector<std::string>{"controller", "coordinator", "prefill", "decode", "encode",
                                                         "union", "kv-pool", "kv-conductor", "mf-store",
                                                         "single-container"});

  struct Want {
    const char* role;
    int replicas;
    int pods;
    const char* kind;
  };
  for (const Want& w : {Want{"controller", 1, 1, "Deployment"}, Want{"coordinator", 1, 1, "Deployment"},
                        Want{"prefill", 3, 2, "StatefulSet"}, Want{"decode", 2, 4, "StatefulSet"},
                        Want{"kv-pool", 0, 1, "Deployment"}, Want{"kv-conductor", 0, 1, "Deployment"}}) {
    CAPTURE(w.role);
    const auto& r = role_of(iss, w.role);
    CHECK(r.at("replicas") == w.replicas);
    CHECK(r.at("spec").at("replicas") == w.pods);
    CHECK(r.at("workload").at("apiVersion") == "apps/v1");
    CHECK(r.at("workload").at("kind") == w.kind);
    // Selector matches the pod template's labels.
    const auto& match = r.at("spec").at("selector").at("matchLabels").as_object();
    const auto& labels = r.at("spec").at("template").at("metadata").at("labels").as_object();
    for (const auto& kv : match) CHECK(labels.at(kv.key()) == kv.value());
    CHECK(container_of(r).at("image") == "mindie:test");
    CHECK(env_of(r, "JOB_NAME") == "team-a");
  }
  auto desired = render::desired_role_replicas(c);
  CHECK(desired.at("prefill") == 3);
  CHECK(desired.at("decode") == 2);
  CHECK(desired.at("kv-pool") == 0);

  cfg["motor_controller_config"] = json::parse(R"({"standby_config": {"enable_master_standby": true}})");
  cfg["motor_coordinator_config"] = json::parse(R"({"standby_config": {"enable_master_standby": true}})");
  const auto& iss2 = find_kind(render_all(parse(cfg)), "InferServiceSet");
  CHECK(role_of(iss2, "controller").at("spec").at("replicas") == 2);
  CHECK(role_of(iss2, "coordinator").at("spec").at("replicas") == 2);
  CHECK(role_of(iss2, "controller").at("replicas") == 1);
}

TEST_CASE("controller, coordinator and engine pod details") {
  auto c = parse(valid_config());
  const auto& iss = find_kind(render_all(c), "InferServiceSet");
  const auto& ctl = role_of(iss, "controller");
  const auto& ctl_pod = ctl.at("spec").at("template").at("spec").as_object();
  CHECK(ctl_pod.at("serviceAccountName") == "mindie-motor-controller");
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
    CAPTURE(probe);
    const auto& cmd = container_of(ctl).at(probe).at("exec").at("command").as_array();
    CHECK(cmd.at(1) == "/mnt/configmap/probe.sh");
  }
  CHECK(container_of(ctl).at("startupProbe").at("exec").at("command").at(2) == "startup");
  CHECK(container_of(role_of(iss, "coordinator")).at("livenessProbe").at("exec").at("command").at(2) == "liveness");
  CHECK(env_of(ctl, "ROLE") == "controller");
  CHECK(env_of(role_of(iss, "kv-pool"), "ROLE") == "kv_pool");

  // Services (PyMotor 7d15c04 §U6, our short entry names): controller 1026 and observability 1027 (NodePort 31027);
  // coordinator management 1026, inference 1025 (NodePort 31015) and observability 1027 (NodePort 31017).
  struct Entry {
    const char* name;
    const char* type;
    int port;
    int node_port;  // 0: none
  };
  const auto check_entries = [](const json::object& role, std::vector<Entry> want) {
    const auto& svc = role.at("services").as_array();
    REQUIRE(svc.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(want[i].name);
      const auto& e = svc.at(i).as_object();
      CHECK(e.at("name") == want[i].name);
      CHECK(e.at("spec").at("type") == want[i].type);
      const auto& p = e.at("spec").at("ports").at(0).as_object();
      CHECK(p.at("port") == want[i].port);
      CHECK(p.at("targetPort") == want[i].port);
      CHECK(p.at("protocol") == "TCP");
      if (want[i].node_port) CHECK(p.at("nodePort") == want[i].node_port);
      else CHECK_FALSE(p.contains("nodePort"));
      CHECK(e.at("spec").at("selector").at("app") ==
            json::value("mindie-motor-vllm-" + std::string(role.at("name").as_string())));
    }
  };
  check_entries(ctl, {{"controller", "ClusterIP", 1026, 0}, {"obs", "NodePort", 1027, 31027}});
  check_entries(role_of(iss, "coordinator"), {{"coordinator", "ClusterIP", 1026, 0},
                                              {"infer", "NodePort", 1025, 31015},
                                              {"obs", "NodePort", 1027, 31017}});
  CHECK_FALSE(role_of(iss, "kv-pool").contains("services"));
  // The keys move them.
  auto moved = valid_config();
  deploy_of(moved)["obs_node_port"] = 31500;
  deploy_of(moved)["controller_obs_node_port"] = 31501;
  const auto& iss_moved = find_kind(render_all(parse(moved)), "InferServiceSet");
  check_entries(role_of(iss_moved, "controller"),
                {{"controller", "ClusterIP", 1026, 0}, {"obs", "NodePort", 1027, 31501}});
  check_entries(role_of(iss_moved, "coordinator"), {{"coordinator", "ClusterIP", 1026, 0},
                                                    {"infer", "NodePort", 1025, 31015},
                                                    {"obs", "NodePort", 1027, 31500}});

  const auto& prefill = role_of(iss, "prefill");
  const auto& pod_tpl = prefill.at("spec").at("template").as_object();
  const auto& pod = pod_tpl.at("spec").as_object();
  CHECK(pod.at("schedulerName") == "volcano");
  CHECK(pod.at("nodeSelector").at("accelerator-type") == "module-910b-8");
  CHECK(pod_tpl.at("metadata").at("labels").at("fault-scheduling") == "grace");
  CHECK(pod_tpl.at("metadata").at("labels").at("fault-retry-times").is_string());
  // No sp-block on A2; the profile's Volcano scheduling policy.
  CHECK_FALSE(pod_tpl.at("metadata").at("annotations").as_object().contains("sp-block"));
  CHECK(pod_tpl.at("metadata").at("annotations").at("huawei.com/schedule_policy") == "chip8-node8");
  const auto& res = container_of(prefill).at("resources").as_object();
  CHECK(res.at("requests").at("huawei.com/Ascend910") == "8");
  CHECK(res.at("limits").at("huawei.com/Ascend910") == "8");
  CHECK(env_of(prefill, "ROLE") == "prefill");
  CHECK(env_of(role_of(iss, "decode"), "ROLE") == "decode");
  // Controller and coordinator carry no NPUs.
  CHECK_FALSE(container_of(ctl).at("resources").at("limits").as_object().contains("huawei.com/Ascend910"));

  // Volumes: the ConfigMap at /mnt/configmap, shm in memory, the weights at weight_mount_path.
  std::map<std::string, json::object> volumes;
  for (const auto& v : pod.at("volumes").as_array()) volumes[std::string(v.at("name").as_string())] = v.as_object();
  CHECK(volumes.at("motor-config").at("configMap").at("name") == "motor-config");
  CHECK(volumes.at("dshm").at("emptyDir").at("medium") == "Memory");
  CHECK(volumes.at("weight-mount").at("hostPath").at("path") == "/mnt/weight");
  CHECK(volumes.at("log-path").at("hostPath").at("path") == "/root/ascend/log");
  std::map<std::string, std::string> mounts;
  for (const auto& m : container_of(prefill).at("volumeMounts").as_array())
    mounts[std::string(m.at("name").as_string())] = std::string(m.at("mountPath").as_string());
  CHECK(mounts.at("motor-config") == "/mnt/configmap");
  CHECK(mounts.at("weight-mount") == "/mnt/weight");
  CHECK(mounts.at("dshm") == "/dev/shm");
  const auto& cmd = container_of(prefill).at("command").as_array();
  CHECK(cmd.back().as_string().find("/mnt/configmap/boot.sh") != json::string::npos);
}

// The roles of a prefill/decode deployment of vllm or mindie-llm.
const std::vector<std::string> kDefaultRoles = {"controller", "coordinator", "prefill",
                                                "decode",     "kv-pool",     "kv-conductor"};

TEST_CASE("env addresses follow the operator's Service naming") {
  auto cfg = valid_config();
  render::RenderOptions opts;
  opts.service_set_name = "svc";
  auto c = parse(cfg);
  const auto& iss = find_kind(render_all(c, opts), "InferServiceSet");
  CHECK(iss.at("metadata").at("name") == "svc");
  for (const auto& role : kDefaultRoles) {
    CAPTURE(role);
    const auto& r = role_of(iss, role);
    CHECK(env_of(r, "CONTROLLER_SERVICE") == "controller-svc-0-controller.team-a.svc.cluster.local");
    CHECK(env_of(r, "COORDINATOR_SERVICE") == "coordinator-svc-0-coordinator.team-a.svc.cluster.local");
    CHECK(env_of(r, "KVP_MASTER_SERVICE").empty());
    CHECK(env_of(r, "KV_CONDUCTOR_SERVICE").empty());
    // PyMotor 7d15c04 §U6: the coordinator's inference and observability Services, right after COORDINATOR_SERVICE,
    // on the controller, the coordinator and the engines only.
    const bool wants_split = role != "kv-pool" && role != "kv-conductor";
    CHECK(env_of(r, "COORDINATOR_INFER_SERVICE") ==
          (wants_split ? "infer-svc-0-coordinator.team-a.svc.cluster.local" : ""));
    CHECK(env_of(r, "COORDINATOR_OBS_SERVICE") ==
          (wants_split ? "obs-svc-0-coordinator.team-a.svc.cluster.local" : ""));
    if (wants_split) {
      const auto& env = container_of(r).at("env").as_array();
      std::size_t at = env.size();
      for (std::size_t i = 0; i < env.size(); ++i)
        if (env[i].at("name") == "COORDINATOR_SERVICE") at = i;
      REQUIRE(at + 2 < env.size());
      CHECK(env[at + 1].at("name") == "COORDINATOR_INFER_SERVICE");
      CHECK(env[at + 2].at("name") == "COORDINATOR_OBS_SERVICE");
    }
  }
  // The addresses name Services the role entries actually define.
  CHECK(role_of(iss, "controller").at("services").at(0).at("name") == render::kControllerService);
  CHECK(role_of(iss, "coordinator").at("services").at(0).at("name") == render::kCoordinatorService);
  CHECK(role_of(iss, "coordinator").at("services").at(1).at("name") == render::kCoordinatorInferService);
  CHECK(role_of(iss, "coordinator").at("services").at(2).at("name") == render::kCoordinatorObsService);
  CHECK(render::operator_service_address("a", "b", "c", "d") == "a-b-0-c.d.svc.cluster.local");

  cfg["motor_engine_prefill_config"].as_object()["engine_config"] = json::parse(
      R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}, "disaggregation_bootstrap_port": "8998"})");
  cfg["kv_cache_pool_config"] =
      json::parse(R"({"port": 50100, "eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1})");
  cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  const auto& iss2 = find_kind(render_all(parse(cfg), opts), "InferServiceSet");
  for (const auto& role : kDefaultRoles) {
    CAPTURE(role);
    const auto& r = role_of(iss2, role);
    CHECK(env_of(r, "KVP_MASTER_SERVICE") == "kvp-master-svc-0-kv-pool.team-a.svc.cluster.local");
    CHECK(env_of(r, "KV_CONDUCTOR_SERVICE") == "kv-conductor-svc-0-kv-conductor.team-a.svc.cluster.local");
  }
  CHECK(env_of(role_of(iss2, "coordinator"), "DISAGGREGATION_BOOTSTRAP_PORT") == "8998");
  CHECK(env_of(role_of(iss2, "prefill"), "DISAGGREGATION_BOOTSTRAP_PORT").empty());
  CHECK(role_of(iss2, "kv-pool").at("replicas") == 1);
  CHECK(role_of(iss2, "kv-conductor").at("replicas") == 1);
  CHECK(role_of(iss2, "kv-pool").at("services").at(0).at("spec").at("ports").at(0).at("port") == 50100);
  CHECK(role_of(iss2, "kv-conductor").at("services").at(0).at("spec").at("ports").at(0).at("port") == 13333);
}

TEST_CASE("A3: accelerator-type module-a3-16 and sp-block = NPUs per pod on engine templates") {
  auto cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = "800I_A3";
  deploy_of(cfg)["p_pod_npu_num"] = 16;
  deploy_of(cfg)["d_pod_npu_num"] = 8;
  deploy_of(cfg)["weight_mount_path"] = "/data/models";
  const auto& iss = find_kind(render_all(parse(cfg)), "InferServiceSet");
  for (auto [role, npus] : {std::pair{"prefill", "16"}, std::pair{"decode", "8"}}) {
    CAPTURE(role);
    const auto& tpl = role_of(iss, role).at("spec").at("template").as_object();
    CHECK(tpl.at("spec").at("nodeSelector").at("accelerator-type") == "module-a3-16");
    CHECK(tpl.at("metadata").at("annotations").at("sp-block") == npus);
    CHECK(container_of(role_of(iss, role)).at("resources").at("limits").at("huawei.com/Ascend910") == npus);
  }
  const auto& ctl_tpl = role_of(iss, "controller").at("spec").at("template").as_object();
  // No Ascend annotations on the controller (only kubectl-mindie's template hash).
  CHECK(ctl_tpl.at("metadata").at("annotations").as_object().size() == 1);
  CHECK(ctl_tpl.at("metadata").at("annotations").as_object().contains(render::kTemplateHashAnnotation));
  bool mounted = false;
  for (const auto& m : container_of(role_of(iss, "decode")).at("volumeMounts").as_array())
    if (m.at("name") == "weight-mount") mounted = m.at("mountPath") == "/data/models";
  CHECK(mounted);
}

TEST_CASE("InferServiceSet names: default from the engine, DNS label, derived names within 63") {
  auto cfg = valid_config();
  cfg["motor_engine_prefill_config"].as_object()["engine_type"] = "mindie-llm";
  cfg["motor_engine_decode_config"].as_object()["engine_type"] = "mindie-llm";
  auto c = parse(cfg);
  CHECK(render::default_service_set_name(c) == "mindie-motor-mindie-server");
  CHECK(render::check_service_set_name("mindie-motor-mindie-server").empty());
  // The longest derived name is "kv-conductor-<name>-0-kv-conductor": 28 characters plus the name.
  CHECK(render::check_service_set_name(std::string(35, 'a')).empty());
  auto long_problems = render::check_service_set_name(std::string(36, 'a'));
  REQUIRE(long_problems.size() == 1);
  CHECK(long_problems[0].path == "metadata.name");
  CHECK(long_problems[0].message.find("at most 35") != std::string::npos);
  CHECK(render::check_service_set_name("Bad_Name").size() == 1);

  render::RenderOptions opts;
  opts.service_set_name = std::string(40, 'x');
  CHECK_THROWS_AS(render::render_infer_service_set(c, nullptr, opts), validation::ValidationError);
  deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  CHECK_THROWS_AS(render::render_infer_service_set(parse(cfg), nullptr, {}), std::invalid_argument);
}

TEST_CASE("ConfigMap: exact baseline bytes, env.json, scripts, annotations") {
  const std::string raw =
      "{\"motor_deploy_config\":{\"job_id\":\"team-a\",\"image_name\":\"m:1\",\n"
      "  \"hardware_type\":\"800I_A2\",\"p_instances_num\":1,\"d_instances_num\":1,\n"
      "  \"p_pod_npu_num\":8,\"d_pod_npu_num\":8},   \"motor_controller_config\":{},\n"
      "\"motor_coordinator_config\":{},\"motor_engine_prefill_config\":{\"engine_type\":\"vllm\"},"
      "\"motor_engine_decode_config\":{}}\n\n";
  auto c = config::parse_user_config(raw, "user_config.json");
  auto env = config::parse_env_config("{\"motor_common_env\": {\"A\": 1}}\n", "env.json");
  render::RenderOptions opts;
  opts.scripts = {{"boot.sh", "#!/bin/bash\necho hi\n"}, {"probe.sh", "exit 0\n"}};
  auto cm = render::render_config_map(c, &env, opts);
  CHECK(cm.at("apiVersion") == "v1");
  CHECK(cm.at("kind") == "ConfigMap");
  CHECK(cm.at("metadata").at("name") == "motor-config");
  CHECK(cm.at("metadata").at("namespace") == "team-a");
  CHECK(cm.at("metadata").at("labels").at("app.kubernetes.io/managed-by") == "kubectl-mindie");
  CHECK(cm.at("metadata").at("annotations").at("kubectl-mindie/deploy-mode") == "infer_service_set");
  CHECK(cm.at("metadata").at("annotations").at("kubectl-mindie/infer-service-set") == "mindie-motor-vllm");
  const auto& data = cm.at("data").as_object();
  CHECK(data.at("user_config.json").as_string() == raw);
  CHECK(data.at("env.json").as_string() == env.raw);
  CHECK(data.at("boot.sh") == "#!/bin/bash\necho hi\n");
  // + env_functions.sh: env.json as the set_*_env functions the startup scripts call (mindie/env_script.h)
  CHECK(data.contains("env_functions.sh"));
  CHECK(data.size() == 5);
  // Bytes survive serialisation (what is sent) too.
  CHECK(json::parse(json::serialize(cm)).at("data").at("user_config.json").as_string() == raw);

  auto no_env = render::render_config_map(c, nullptr, {});
  CHECK_FALSE(no_env.at("data").as_object().contains("env.json"));

  render::RenderOptions bad;
  bad.scripts = {{"user_config.json", "x"}, {"bad/key", "x"}, {"bin.sh", std::string("\xff\xfe", 2)}};
  try {
    render::render_config_map(c, nullptr, bad);
    FAIL("expected ValidationError");
  } catch (const validation::ValidationError& e) {
    CHECK(e.problems().size() == 3);
  }
  render::RenderOptions huge;
  huge.scripts = {{"big.txt", std::string(1024 * 1024, 'x')}};
  CHECK_THROWS_AS(render::render_config_map(c, nullptr, huge), validation::ValidationError);
}

TEST_CASE("the rendered InferServiceSet satisfies the published CRD schema") {
  const auto crds =
      testing::load_crd_schemas(std::string(MINDIE_SHARED_DIR) + "/reference/crds/mindcluster.huawei.com_crds.yaml");
  const testing::CrdVersionSchema* schema = nullptr;
  for (const auto& crd : crds)
    if (crd.kind == "InferServiceSet" && crd.version == "v1") schema = &crd;
  REQUIRE(schema != nullptr);

  auto cfg = valid_config();
  SUBCASE("A2, everything off") {}
  SUBCASE("PD-hybrid: a union role") { cfg = hybrid_config(); }
  SUBCASE("sglang: an mf-store role") { cfg = sglang_config("800I_A2"); }
  SUBCASE("A3 with standby, KV pool and conductor") {
    deploy_of(cfg)["hardware_type"] = "800I_A3";
    deploy_of(cfg)["p_pod_npu_num"] = 16;
    deploy_of(cfg)["p_instances_num"] = 16;
    cfg["motor_controller_config"] = json::parse(R"({"standby_config": {"enable_master_standby": true}})");
    cfg["motor_engine_prefill_config"].as_object()["engine_config"] =
        json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
    cfg["kv_cache_pool_config"] = json::parse(R"({"eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1})");
    cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  }
  render::RenderOptions opts;
  SUBCASE("A3 SuperPoD, 2 pods per instance, with overrides on every role kind") {
    deploy_of(cfg)["hardware_type"] = "900_A3_SuperPoD";
    deploy_of(cfg)["single_d_instance_pod_num"] = 2;
    opts.overrides = overrides::parse_overrides(R"(roles:
  prefill: {labels: {team: llm}, annotations: {example.com/a: b}, faultScheduling: force, gangSchedule: false}
  decode: {gangSchedule: true, tolerations: [{key: dedicated, operator: Exists}]}
  controller: {nodeSelector: {example.com/pool: control}, resources: {limits: {cpu: "16"}}}
)",
                                                "ov.yaml");
  }
  const auto& iss = find_kind(render_all(parse(cfg), opts), "InferServiceSet");
  auto violations = testing::validate_schema(schema->schema, to_nlohmann(iss));
  for (const auto& v : violations) INFO(v.field << " " << v.reason << " " << v.message);
  CHECK(violations.empty());

  // The check is not vacuous: a wrongly typed role field is caught.
  auto broken = to_nlohmann(iss);
  broken["spec"]["template"]["roles"][0]["replicas"] = "1";
  CHECK_FALSE(testing::validate_schema(schema->schema, broken).empty());
}

TEST_CASE("the shipped example and the shared examples render (with an image set)") {
  auto example = config::parse_user_config(
      mindie::test::read_text(std::string(MINDIE_SOURCE_DIR) + "/examples/user_config.json"), "user_config.json");
  auto objs = render_all(example);
  CHECK(find_kind(objs, "InferServiceSet").at("metadata").at("namespace") == "mindie-demo");
  // Round trip through YAML (the -o yaml path) is lossless.
  for (const auto& o : objs) CHECK(util::yaml_to_json(util::json_to_yaml(o), "rendered") == json::value(o));

  auto ds = json::parse(mindie::test::read_text(std::string(MINDIE_SHARED_DIR) +
                                                "/reference/user_configs/deepseek_v3_1/user_config.json"))
                .as_object();
  const auto& iss = find_kind(render_all(parse(ds)), "InferServiceSet");
  CHECK(role_of(iss, "prefill").at("replicas") == 2);
  CHECK(role_of(iss, "decode").at("spec").at("replicas") == 2);
  CHECK(role_of(iss, "decode").at("spec").at("template").at("metadata").at("annotations").at("sp-block") == "16");
}

TEST_CASE("every built-in manifest parses") {
  for (const auto& [path, text] : manifests::embedded()) {
    CAPTURE(std::string(path));
    CHECK_NOTHROW(util::yaml_to_json(std::string(text), std::string(path)));
  }
  CHECK(manifests::embedded().count("infer_service_set/inferserviceset.yaml") == 1);
}

TEST_CASE("PD-hybrid: one union role of hybrid_instances_num instances; prefill and decode at 0") {
  const auto c = parse(hybrid_config());
  CHECK(c.hybrid());
  CHECK(c.p_instances == 0);
  CHECK(c.d_instances == 0);
  const auto iss = find_kind(render_all(c), "InferServiceSet");
  std::vector<std::string> names;
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array())
    names.emplace_back(r.at("name").as_string());
  CHECK(names ==
        std::vector<std::string>{"controller", "coordinator", "prefill", "decode", "union", "kv-pool", "kv-conductor"});
  const auto& u = role_of(iss, "union");
  CHECK(u.at("replicas") == 3);
  CHECK(u.at("spec").at("replicas") == 2);
  CHECK(u.at("workload").at("kind") == "StatefulSet");
  CHECK(env_of(u, "ROLE") == "union");
  // Engines get the coordinator's split addresses (PyMotor 7d15c04 §U6), the union role too.
  CHECK(env_of(u, "COORDINATOR_SERVICE") == "coordinator-mindie-motor-vllm-0-coordinator.team-a.svc.cluster.local");
  CHECK(env_of(u, "COORDINATOR_INFER_SERVICE") == "infer-mindie-motor-vllm-0-coordinator.team-a.svc.cluster.local");
  CHECK(env_of(u, "COORDINATOR_OBS_SERVICE") == "obs-mindie-motor-vllm-0-coordinator.team-a.svc.cluster.local");
  CHECK(container_of(u).at("resources").at("limits").at("huawei.com/Ascend910") == "4");
  // Two pods per instance form a gang; the engine template's Volcano pieces apply.
  CHECK(u.at("metadata").at("labels").at(render::kGangScheduleLabel) == "true");
  CHECK(u.at("spec").at("template").at("spec").at("schedulerName") == "volcano");
  CHECK(role_of(iss, "prefill").at("replicas") == 0);
  CHECK(role_of(iss, "decode").at("replicas") == 0);
  CHECK(render::desired_role_replicas(c).at("union") == 3);

  // Without PD-hybrid there is no union role, and overrides of it say why.
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides("roles:\n  union:\n    labels: {a: b}\n", "ov.yaml");
  try {
    render_all(parse(valid_config()), opts);
    FAIL("expected a ValidationError");
  } catch (const validation::ValidationError& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "roles.union");
    CHECK(e.problems()[0].message.find("hybrid_instances_num") != std::string::npos);
  }
  // With it, the union role takes overrides like any engine role.
  const auto with = find_kind(render_all(c, opts), "InferServiceSet");
  CHECK(role_of(with, "union").at("spec").at("template").at("metadata").at("labels").at("a") == "b");
}

TEST_CASE("sglang: an mf-store role, and engines get its address, the profile's transfer protocol and their IP") {
  for (auto [hardware, protocol] :
       {std::pair{"800I_A2", "device_rdma"}, std::pair{"800I_A3", "sdma"}, std::pair{"900_A3_SuperPoD", "sdma"}}) {
    CAPTURE(hardware);
    auto cfg = sglang_config(hardware);
    if (std::string_view(hardware) != "800I_A2") {
      deploy_of(cfg)["p_pod_npu_num"] = 16;
      deploy_of(cfg)["d_pod_npu_num"] = 16;
    }
    cfg["motor_engine_prefill_config"].as_object()["engine_config"] =
        json::parse(R"({"disaggregation_bootstrap_port": 8998})");
    render::RenderOptions opts;
    opts.service_set_name = "svc";
    const auto iss = find_kind(render_all(parse(cfg), opts), "InferServiceSet");
    const auto& store = role_of(iss, "mf-store");
    CHECK(store.at("replicas") == 1);
    CHECK(store.at("workload").at("kind") == "Deployment");
    CHECK(store.at("services").at(0).at("name") == render::kMfStoreService);
    CHECK(store.at("services").at(0).at("spec").at("ports").at(0).at("port") == 50089);
    CHECK(env_of(store, "ROLE") == "mf_store");
    CHECK(env_of(store, "COORDINATOR_INFER_SERVICE").empty());  // not on mf-store (PyMotor 7d15c04 §U6)
    CHECK(env_of(store, "COORDINATOR_OBS_SERVICE").empty());
    for (const char* engine : {"prefill", "decode"}) {
      CAPTURE(engine);
      const auto& r = role_of(iss, engine);
      CHECK(env_of(r, "ASCEND_MF_STORE_URL") == "tcp://mf-store-svc-0-mf-store.team-a.svc.cluster.local:50089");
      CHECK(env_of(r, "ASCEND_MF_TRANSFER_PROTOCOL") == protocol);
      CHECK(env_of(r, "SGLANG_HOST_IP") == "?");  // from the downward API
      CHECK(env_of(r, "DISAGGREGATION_BOOTSTRAP_PORT") == "8998");
    }
    // Only engines talk to the store.
    for (const char* other : {"controller", "coordinator", "mf-store"}) {
      CAPTURE(other);
      CHECK(env_of(role_of(iss, other), "ASCEND_MF_STORE_URL").empty());
      CHECK(env_of(role_of(iss, other), "SGLANG_HOST_IP").empty());
    }
  }
  // Not sglang: no store, and no engine is handed the address of one.
  const auto iss = find_kind(render_all(parse(valid_config())), "InferServiceSet");
  CHECK_THROWS(role_of(iss, "mf-store"));
  for (const char* engine : {"prefill", "decode"}) {
    CHECK(env_of(role_of(iss, engine), "ASCEND_MF_STORE_URL").empty());
    CHECK(env_of(role_of(iss, engine), "ASCEND_MF_TRANSFER_PROTOCOL").empty());
    CHECK(env_of(role_of(iss, engine), "SGLANG_HOST_IP").empty());
  }
}

// infer-operator refuses a NodePort role Service without a nodePort and then creates no coordinator at all
// (Ascend/mind-cluster infer-operator, instanceset_controller.go validateServices): the default config must render one.
TEST_CASE("infer_service_set: the coordinator's inference NodePort always has a nodePort (31015 unless set)") {
  auto cfg = valid_config();
  const auto infer_port = [](const json::object& iss) {
    for (const auto& s : role_of(iss, "coordinator").at("services").as_array())
      if (is_str(s.at("name"), render::kCoordinatorInferService)) {
        CHECK(s.at("spec").at("type") == "NodePort");
        return s.at("spec").at("ports").at(0).at("nodePort").as_int64();
      }
    throw std::runtime_error("no infer entry");
  };
  CHECK(infer_port(mindie::test::render_iss(parse(cfg))) == 31015);
  // Every fixed nodePort is claimed (PyMotor 7d15c04 §U6 adds the two observability Services), naming its key.
  auto claims = render::node_port_claims(parse(cfg), {});
  REQUIRE(claims.size() == 3);
  CHECK(claims[0].ns == "team-a");
  CHECK(claims[0].service == "infer-mindie-motor-vllm-0-coordinator");
  CHECK(claims[0].port == 31015);
  CHECK(claims[0].key == "motor_deploy_config.infer_node_port");
  CHECK(claims[1].service == "obs-mindie-motor-vllm-0-coordinator");
  CHECK(claims[1].port == 31017);
  CHECK(claims[1].key == "motor_deploy_config.obs_node_port");
  CHECK(claims[2].service == "obs-mindie-motor-vllm-0-controller");
  CHECK(claims[2].port == 31027);
  CHECK(claims[2].key == "motor_deploy_config.controller_obs_node_port");

  deploy_of(cfg)["infer_node_port"] = 31100;
  deploy_of(cfg)["obs_node_port"] = 31101;
  deploy_of(cfg)["controller_obs_node_port"] = 31102;
  render::RenderOptions named;
  named.service_set_name = "svc";
  CHECK(infer_port(mindie::test::render_iss(parse(cfg), named)) == 31100);
  claims = render::node_port_claims(parse(cfg), named);
  REQUIRE(claims.size() == 3);
  CHECK(claims[0].service == "infer-svc-0-coordinator");
  CHECK(claims[0].port == 31100);
  CHECK(claims[1].service == "obs-svc-0-coordinator");
  CHECK(claims[1].port == 31101);
  CHECK(claims[2].service == "obs-svc-0-controller");
  CHECK(claims[2].port == 31102);
  // Every NodePort entry of every role has one (the operator's rule is per entry, not per role).
  const auto rendered = mindie::test::render_iss(parse(cfg));
  for (const auto& r : rendered.at("spec").at("template").at("roles").as_array())
    if (const auto* services = r.as_object().if_contains("services"))
      for (const auto& s : services->as_array())
        if (s.at("spec").at("type") == "NodePort")
          for (const auto& p : s.at("spec").at("ports").as_array()) CHECK(p.at("nodePort").as_int64() != 0);
}

TEST_CASE("every rendered pod template carries its template hash; a changed template changes it") {
  auto cfg = valid_config();
  const auto iss = mindie::test::render_iss(parse(cfg));
  std::set<std::string> hashes;
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array()) {
    const auto& tpl = r.at("spec").at("template").as_object();
    const auto ann = mindie::test::pod_annotations_of(r.as_object());
    REQUIRE(ann.contains(render::kTemplateHashAnnotation));
    const std::string hash(ann.at(render::kTemplateHashAnnotation).as_string());
    CHECK(hash.size() == 16);
    // The annotation itself is not part of what it hashes; the pods per instance are.
    CHECK(hash == render::template_hash(tpl, r.at("spec").at("replicas").as_int64()));
    CHECK(hash != render::template_hash(tpl, r.at("spec").at("replicas").as_int64() + 1));
    hashes.insert(hash);
  }
  CHECK(hashes.size() >= 4);  // controller, coordinator, prefill and decode templates differ
  // Same input, same hashes (re-renders are identical); another image, another engine hash.
  CHECK(mindie::test::render_iss(parse(cfg)) == iss);
  cfg["motor_deploy_config"].as_object()["image_name"] = "registry.local/mindie:2";
  const auto changed = mindie::test::render_iss(parse(cfg));
  CHECK(mindie::test::pod_annotations_of(role_of(changed, "prefill")).at(render::kTemplateHashAnnotation) !=
        mindie::test::pod_annotations_of(role_of(iss, "prefill")).at(render::kTemplateHashAnnotation));
}
