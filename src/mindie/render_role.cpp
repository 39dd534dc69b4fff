// One role's pod template, as every deploy mode renders it (an InferServiceSet role, or the spec of a role's
// Deployments): the built-in template with the config's image, env, host paths and the hardware profile's pieces,
// then the role's overrides.
#include <algorithm>
#include <stdexcept>

#include "mindcluster/labels.h"
#include "mindie/render_parts.h"

namespace mindie::render::detail {
namespace json = boost::json;
using config::UserConfig;
using validation::Problem;

namespace {

// Engine roles: NPUs, Volcano, the hardware profile's node selection.
bool is_engine_role(std::string_view role) { return is_instance_engine_role(role) || role == "single-container"; }

// A role service entry; the operator names the Service "<name>-<iss>-<i>-<role>".
json::object service_entry(const std::string& name, const char* type, const char* port_name, int port,
                           const std::string& app) {
  return json::object{
      {"name", name},
      {"spec",
       json::object{{"type", type},
                    {"selector", json::object{{"app", app}}},
                    {"ports", json::array{json::object{
                                  {"name", port_name}, {"port", port}, {"protocol", "TCP"}, {"targetPort", port}}}}}}};
}

// Pods per instance (role.spec.replicas) for `role`.
int pods_per_instance(const UserConfig& cfg, std::string_view role) {
  if (role == "controller") return cfg.controller_standby ? 2 : 1;
  if (role == "coordinator") return cfg.coordinator_standby ? 2 : 1;
  if (role == "prefill") return cfg.p_pods_per_instance;
  if (role == "decode") return cfg.d_pods_per_instance;
  if (role == "union") return cfg.hybrid_pods_per_instance;
  if (role == "encode") return cfg.e_pods_per_instance;
  return 1;
}

// NPUs of one pod of engine `role`; single_container's pod runs both engines, so it gets the larger (deploy.py).
int npus_per_pod(const UserConfig& cfg, std::string_view role) {
  if (role == "prefill") return cfg.p_npus_per_pod;
  if (role == "decode") return cfg.d_npus_per_pod;
  if (role == "union") return cfg.hybrid_npus_per_pod;
  if (role == "encode") return cfg.e_npus_per_pod;
  return std::max(cfg.p_npus_per_pod, cfg.d_npus_per_pod);
}

// The sp-block annotation value of engine `role` under `rule` (NPUs per pod, or per instance), empty for None.
std::string sp_block_value(const UserConfig& cfg, std::string_view role, hardware::SpBlockRule rule) {
  if (rule == hardware::SpBlockRule::PerPod) return std::to_string(npus_per_pod(cfg, role));
  if (rule == hardware::SpBlockRule::PerInstance)
    return std::to_string(npus_per_pod(cfg, role) * pods_per_instance(cfg, role));
  return "";
}

json::object field_env(std::string_view name, std::string_view field_path) {
  return json::object{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

// The env that points a role's processes at the other components: the controller and the coordinator's management
// Service always; right after them, on the controller, the coordinator and the engines only (PyMotor 7d15c04 §U6:
// not kv-pool, kv-conductor, mf-store), the coordinator's inference and observability Services (the controller
// reads the coordinator's metrics at COORDINATOR_OBS_SERVICE:1027); the KV pool, KV conductor and mf-store exactly
// when they are rendered (never an address of a missing component).
void add_service_env(const UserConfig& cfg, const std::string& role, bool engine, const Addresses& addr,
                     json::array& env) {
  env.push_back(env_var("CONTROLLER_SERVICE", addr.controller));
  env.push_back(env_var("COORDINATOR_SERVICE", addr.coordinator));
  if (engine || role == "controller" || role == "coordinator") {
    env.push_back(env_var("COORDINATOR_INFER_SERVICE", addr.coordinator_infer));
    env.push_back(env_var("COORDINATOR_OBS_SERVICE", addr.coordinator_obs));
  }
  if (cfg.kv_pool) env.push_back(env_var("KVP_MASTER_SERVICE", addr.kv_pool));
  if (cfg.kv_conductor) env.push_back(env_var("KV_CONDUCTOR_SERVICE", addr.kv_conductor));
  if (role == "coordinator" && !cfg.disaggregation_bootstrap_port.empty())
    env.push_back(env_var("DISAGGREGATION_BOOTSTRAP_PORT", cfg.disaggregation_bootstrap_port));
  // sglang engines reach the mf-store and announce their own address (sglang's Ascend PD guide); set only when
  // the mf-store is rendered, so no engine is handed the address of a store that does not exist.
  if (engine && cfg.mf_store) {
    env.push_back(env_var("ASCEND_MF_STORE_URL", "tcp://" + addr.mf_store + ":" + std::to_string(kMfStorePort)));
    env.push_back(env_var("ASCEND_MF_TRANSFER_PROTOCOL", cfg.hardware->mf_transfer_protocol));
    env.push_back(field_env("SGLANG_HOST_IP", "status.podIP"));
    if (!cfg.disaggregation_bootstrap_port.empty())
      env.push_back(env_var("DISAGGREGATION_BOOTSTRAP_PORT", cfg.disaggregation_bootstrap_port));
  }
}

// What kv_pool.sh (and the single-container script) hands mooncake_master, in PyMotor 7d15c04's order (U9):
// KVP_MASTER_SERVICE, KV_POOL_PORT, the two eviction ratios, DEFAULT_KV_LEASE_TTL. The kv-pool role has the
// master's address from add_service_env; the single-container pod runs the master itself, at its own IP.
void add_kv_pool_env(const UserConfig& cfg, bool single, json::array& env) {
  if (single) env.push_back(field_env("KVP_MASTER_SERVICE", "status.podIP"));
  env.push_back(env_var("KV_POOL_PORT", std::to_string(cfg.kv_pool_port)));
  env.push_back(env_var("KV_POOL_EVICTION_HIGH_WATERMARK_RATIO", cfg.kv_pool_high_watermark_ratio));
  env.push_back(env_var("KV_POOL_EVICTION_RATIO", cfg.kv_pool_eviction_ratio));
  env.push_back(env_var("DEFAULT_KV_LEASE_TTL", std::to_string(cfg.kv_lease_ttl_ms)));
}

/// The role's Service entries (the addresses the env points at). NodePort entries always get a fixed nodePort:
/// infer-operator refuses a NodePort role Service without one and then creates nothing for the role
/// (Ascend/mind-cluster infer-operator, instanceset_controller.go validateServices). deploy checks that they are free
/// before writing.
json::array role_services(const UserConfig& cfg, const std::string& role, const std::string& app) {
  json::array services;
  const auto node_port_entry = [&](const char* name, const char* port_name, int port, int node_port) {
    services.push_back(service_entry(name, "NodePort", port_name, port, app));
    services.back().at("spec").at("ports").at(0).as_object()["nodePort"] = node_port;
  };
  if (role == "controller") {
    services.push_back(service_entry(kControllerService, "ClusterIP", "manage", kControllerPort, app));
    node_port_entry(kControllerObsService, "obs", kObsPort,
                    cfg.controller_obs_node_port ? cfg.controller_obs_node_port
                                                 : config::kDefaultControllerObsNodePort);
  } else if (role == "coordinator") {
    services.push_back(service_entry(kCoordinatorService, "ClusterIP", "manage", kCoordinatorPort, app));
    node_port_entry(kCoordinatorInferService, "infer", kInferPort,
                    cfg.infer_node_port ? cfg.infer_node_port : config::kDefaultInferNodePort);
    node_port_entry(kCoordinatorObsService, "obs", kObsPort,
                    cfg.obs_node_port ? cfg.obs_node_port : config::kDefaultObsNodePort);
  } else if (role == "kv-pool" && cfg.kv_pool) {
    services.push_back(service_entry(kKvPoolService, "ClusterIP", "business", cfg.kv_pool_port, app));
    services.back().at("spec").as_object()["ports"] = kv_pool_ports(cfg);
  } else if (role == "kv-conductor" && cfg.kv_conductor) {
    services.push_back(service_entry(kKvConductorService, "ClusterIP", "http", cfg.kv_conductor_port, app));
  } else if (role == "mf-store" && cfg.mf_store) {
    services.push_back(service_entry(kMfStoreService, "ClusterIP", "store", kMfStorePort, app));
  }
  return services;
}

/// Host paths the template leaves open: the role's log directory and the weights.
void set_host_paths(const UserConfig& cfg, const std::string& role, json::object& pod, json::object& c) {
  const std::string& log_dir = role == "controller"    ? cfg.controller_log_dir
                               : role == "coordinator" ? cfg.coordinator_log_dir
                                                       : cfg.engine_log_dir;
  for (auto& vol : list(pod, "volumes")) {
    if (named(vol, "log-path")) sub(vol.get_object(), "hostPath")["path"] = log_dir;
    if (named(vol, "weight-mount")) sub(vol.get_object(), "hostPath")["path"] = cfg.weight_mount_path;
  }
  for (auto& m : list(c, "volumeMounts"))
    if (named(m, "weight-mount")) m.get_object()["mountPath"] = cfg.weight_mount_path;
}

/// The hardware profile's pieces of engine `role` (pod template `pod_md`/`pod`, container `c`, role `r`): NPUs,
/// node selection, labels and annotations, gang scheduling, sglang's privileges. Returns the config path of its
/// NPUs per pod.
std::string set_engine(const UserConfig& cfg, const std::string& role, int pods, json::object& r, json::object& pod_md,
                       json::object& pod, json::object& c) {
  const hardware::HardwareProfile& hw = *cfg.hardware;
  const int npus = npus_per_pod(cfg, role);
  std::string npu_path = role == "prefill"  ? "motor_deploy_config.p_pod_npu_num"
                         : role == "decode" ? "motor_deploy_config.d_pod_npu_num"
                         : role == "union"  ? "motor_deploy_config.hybrid_pod_npu_num"
                         : role == "encode" ? "motor_deploy_config.e_pod_npu_num"
                                            : "motor_deploy_config.p_pod_npu_num / d_pod_npu_num (the larger)";
  // Extended resources must have requests equal to limits (Kubernetes); the device plugin allocates whole NPUs.
  json::object& res = sub(c, "resources");
  sub(res, "requests")[hw.npu_resource] = std::to_string(npus);
  sub(res, "limits")[hw.npu_resource] = std::to_string(npus);
  json::object& selector = sub(pod, "nodeSelector");
  for (const auto& [k, v] : hw.node_selector) selector[k] = v;
  // PD heterogeneous scheduling (PyMotor 7d15c04 U2): prefill and decode on their own kind of node.
  if (cfg.pd_heterogeneous && (role == "prefill" || role == "decode"))
    selector[cfg.pd_hetero_label_key] = role == "prefill" ? cfg.pd_hetero_prefill_value : cfg.pd_hetero_decode_value;
  json::object& labels = sub(pod_md, "labels");
  for (const auto& [k, v] : hw.pod_labels) labels[k] = v;
  if (!hw.schedule_policy.empty())
    sub(pod_md, "annotations")[mindcluster::kSchedulePolicyAnnotation] = hw.schedule_policy;
  // sp-block: the NPUs of one logical SuperPoD, per the profile's rule (see manifests/hardware_profiles.yaml); on
  // the pod template in infer_service_set mode, on the Deployment in the others (annotate_sp_block).
  if (cfg.deploy_mode == config::DeployMode::InferServiceSet)
    if (std::string v = sp_block_value(cfg, role, hw.sp_block.pod_template); !v.empty())
      sub(pod_md, "annotations")[mindcluster::kSpBlockAnnotation] = v;
  // Gang scheduling (a Volcano PodGroup per instance) only when an instance spans several pods: a one-pod gang
  // never starts (PyMotor's infer_service.py, _set_engine_gang_schedule).
  sub(sub(r, "metadata"), "labels")[kGangScheduleLabel] = pods > 1 ? "true" : "false";
  // sglang's engine needs device and memory privileges (PyMotor's engine.py gives it a privileged container);
  // privileged excludes allowPrivilegeEscalation: false, so the restricted context is replaced whole.
  if (cfg.engine_type == "sglang") c["securityContext"] = json::object{{"privileged", true}};
  return npu_path;
}

/// opts.overrides of `role`, if any, applied to its rendered `r` and workload `spec`.
void apply_role_overrides(const UserConfig& cfg, const RenderOptions& opts, const std::string& role, int pods,
                          const std::string& npu_path, json::object& spec, json::object& r,
                          std::vector<Problem>& problems) {
  if (!opts.overrides) return;
  const auto it = opts.overrides->roles.find(role);
  if (it == opts.overrides->roles.end()) return;
  const std::string pods_path = role == "prefill"  ? "motor_deploy_config.single_p_instance_pod_num"
                                : role == "decode" ? "motor_deploy_config.single_d_instance_pod_num"
                                : role == "union"  ? "motor_deploy_config.single_hybrid_instance_pod_num"
                                : role == "encode" ? "motor_deploy_config.single_e_instance_pod_num"
                                                   : "pods per instance";
  overrides::apply_overrides(it->second, {role, pods, pods_path, cfg.hardware->npu_resource, npu_path}, r, spec,
                             problems);
}

}  // namespace

// kvp-master's ports (PyMotor 7d15c04, U9): the pool on kv_cache_pool_config.port and its metrics on 9003 (upstream
// adds the metrics port in multi_deployment only; infer_service_set gets it too, so the coordinator's
// pool_metrics_endpoint works in both).
json::array kv_pool_ports(const UserConfig& cfg) {
  auto port = [](const char* name, int number) {
    return json::object{{"name", name}, {"port", number}, {"protocol", "TCP"}, {"targetPort", number}};
  };
  return json::array{port("business", cfg.kv_pool_port), port("metrics", config::kKvPoolMetricsPort)};
}

// Puts the sp-block annotation of engine `role` on a Deployment's metadata (multi_deployment and
// single_container: PyMotor's deployer annotates the Deployment, by the profile's rule for the mode).
void annotate_sp_block(json::object& deployment, const UserConfig& cfg, std::string_view role,
                       hardware::SpBlockRule rule) {
  if (std::string v = sp_block_value(cfg, role, rule); !v.empty())
    sub(sub(deployment, "metadata"), "annotations")[mindcluster::kSpBlockAnnotation] = v;
}

json::object render_role(const UserConfig& cfg, const RoleInfo& info, int replicas, const RenderOptions& opts,
                         std::vector<Problem>& problems, const std::string& app, const Addresses& addr,
                         const json::object& extra_labels) {
  const std::string role = info.name;
  const bool engine = is_engine_role(role);

  json::object r;
  r["name"] = role;
  r["replicas"] = replicas;
  json::object tpl = manifest(info.manifest);
  r["workload"] = tpl["workload"];
  json::object& rlabels = sub(sub(r, "metadata"), "labels");
  rlabels[kManagedBy] = "kubectl-mindie";
  rlabels[kComponent] = role;
  if (json::array services = role_services(cfg, role, app); !services.empty()) r["services"] = std::move(services);

  // The workload spec (Deployment or StatefulSet spec).
  json::object spec = tpl["spec"].is_object() ? tpl["spec"].get_object() : json::object();
  spec["replicas"] = pods_per_instance(cfg, role);
  sub(spec, "selector")["matchLabels"] = json::object{{"app", app}};
  json::object& pod_tpl = sub(spec, "template");
  json::object& pod_md = sub(pod_tpl, "metadata");
  sub(pod_md, "labels")["app"] = app;
  for (const auto& kv : extra_labels) sub(pod_md, "labels")[kv.key()] = kv.value();
  json::object& pod = sub(pod_tpl, "spec");

  json::array& containers = list(pod, "containers");
  if (containers.empty() || !containers[0].is_object())
    throw std::logic_error(std::string("built-in manifest ") + info.manifest + " has no container");
  json::object& c = containers[0].get_object();
  c["name"] = role;
  c["image"] = cfg.image_name;

  json::array& env = list(c, "env");
  env.push_back(env_var("ROLE", info.boot_role));
  // Stable across renders: deploy.py's timestamped JOB_NAME changed the pod template on every apply.
  env.push_back(env_var("JOB_NAME", cfg.job_id));
  const bool single = role == "single-container";
  if (!single) add_service_env(cfg, role, engine, addr, env);
  if ((role == "kv-pool" || single) && cfg.kv_pool) add_kv_pool_env(cfg, single, env);
  set_host_paths(cfg, role, pod, c);

  const int pods = pods_per_instance(cfg, role);
  const std::string npu_path = engine ? set_engine(cfg, role, pods, r, pod_md, pod, c) : "";
  if (single) {
    // The controller runs in this pod and lists nodes, pods and ConfigMaps: it needs the controller's API token.
    pod["serviceAccountName"] = kServiceAccount;
    pod["automountServiceAccountToken"] = true;
  }
  order_first(c, {"name", "image"});
  apply_role_overrides(cfg, opts, role, pods, npu_path, spec, r, problems);

  order_first(spec["template"].get_object(), {"metadata", "spec"});
  order_first(spec, {"replicas", "selector"});
  r["spec"] = std::move(spec);
  order_first(r, {"name", "replicas", "workload", "metadata", "services", "spec"});
  return r;
}

}  // namespace mindie::render::detail
