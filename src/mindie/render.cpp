// Rendering of the infer_service_set objects. The YAML templates under manifests/infer_service_set/ hold the
// structure and the fixed Ascend details; everything that depends on the config is set here, on parsed JSON,
// so no value is ever spliced into template text.
#include "mindie/render.h"

#include <mutex>
#include <stdexcept>

#include "mindie/manifests.h"
#include "util/yaml_json.h"

namespace mindie::render {
namespace json = boost::json;
using config::Problem;
using config::UserConfig;

namespace {

constexpr const char* kManagedBy = "app.kubernetes.io/managed-by";
constexpr const char* kComponent = "app.kubernetes.io/component";
constexpr const char* kInstance = "app.kubernetes.io/instance";
constexpr const char* kServiceAccount = "mindie-motor-controller";
constexpr const char* kNpuResource = "huawei.com/Ascend910";
constexpr int kControllerPort = 1026;   // controller management port (deploy.py)
constexpr int kCoordinatorPort = 1026;  // coordinator management port
constexpr int kInferPort = 1025;        // coordinator inference entry
// Kubernetes object size limit (etcd request limit), which bounds a ConfigMap's data.
constexpr std::size_t kMaxConfigMapBytes = 1024 * 1024;

// A parsed copy of the embedded manifest at `path` (relative to manifests/). Parsed once; a missing or broken
// template is a build defect, reported as std::logic_error.
json::object manifest(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, json::object> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) {
    const auto& files = manifests::embedded();
    auto f = files.find(path);
    if (f == files.end()) throw std::logic_error("built-in manifest " + path + " is missing");
    json::value v;
    try {
      v = util::yaml_to_json(std::string(f->second), "manifests/" + path);
    } catch (const util::YamlError& e) {
      throw std::logic_error(std::string("built-in manifest is broken: ") + e.what());
    }
    if (!v.is_object()) throw std::logic_error("built-in manifest " + path + " is not a mapping");
    it = cache.emplace(path, std::move(v.get_object())).first;
  }
  return it->second;
}

// obj[key] as an object / array, created (or replaced when of another kind) as needed.
json::object& sub(json::object& obj, std::string_view key) {
  json::value& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}
json::array& list(json::object& obj, std::string_view key) {
  json::value& v = obj[key];
  if (!v.is_array()) v = json::array();
  return v.get_array();
}

// True when `o` is an object whose "name" is `name` (volumes, mounts).
bool named(const json::value& o, std::string_view name) {
  const json::value* n = o.is_object() ? o.get_object().if_contains("name") : nullptr;
  return n && n->is_string() && n->get_string() == name;
}

// Moves `keys` (those present) to the front of `obj`, in that order, so output reads like hand-written
// manifests (name before details, replicas and selector before the template).
void order_first(json::object& obj, std::initializer_list<std::string_view> keys) {
  json::object out;
  for (auto k : keys)
    if (const json::value* v = obj.if_contains(k)) out[k] = *v;
  for (const auto& kv : obj)
    if (!out.contains(kv.key())) out[kv.key()] = kv.value();
  obj = std::move(out);
}

json::object env_var(std::string_view name, std::string_view value) {
  return json::object{{"name", name}, {"value", value}};
}

// Role names and the ROLE value boot.sh dispatches on (deploy.py's startup scripts).
struct RoleInfo {
  const char* name;
  const char* boot_role;
  const char* manifest;
};
constexpr RoleInfo kRoles[] = {
    {"controller", "controller", "infer_service_set/roles/controller.yaml"},
    {"coordinator", "coordinator", "infer_service_set/roles/coordinator.yaml"},
    {"prefill", "prefill", "infer_service_set/roles/engine.yaml"},
    {"decode", "decode", "infer_service_set/roles/engine.yaml"},
    {"kv-pool", "kv_pool", "infer_service_set/roles/kv-pool.yaml"},
    {"kv-conductor", "kv_conductor", "infer_service_set/roles/kv-conductor.yaml"},
};

// The pod label that ties a role's pods to its workload selector and its Services.
std::string app_label(const std::string& iss, const std::string& role) { return iss + "-" + role; }

// A role service entry; the operator names the Service "<name>-<iss>-<i>-<role>".
json::object service_entry(const std::string& name, const char* type, const char* port_name, int port,
                           const std::string& app) {
  return json::object{
      {"name", name},
      {"spec", json::object{{"type", type},
                            {"selector", json::object{{"app", app}}},
                            {"ports", json::array{json::object{{"name", port_name},
                                                               {"port", port},
                                                               {"protocol", "TCP"},
                                                               {"targetPort", port}}}}}}};
}

std::string service_set_name(const UserConfig& cfg, const RenderOptions& opts) {
  return opts.service_set_name.empty() ? default_service_set_name(cfg) : opts.service_set_name;
}

void set_common_metadata(json::object& obj, const std::string& name, const std::string* ns,
                         const std::string& iss) {
  // name and namespace first, as kubectl shows them; then whatever the template carries.
  json::object md{{"name", name}};
  if (ns) md["namespace"] = *ns;
  for (const auto& kv : sub(obj, "metadata")) md[kv.key()] = kv.value();
  obj["metadata"] = std::move(md);
  json::object& labels = sub(obj["metadata"].get_object(), "labels");
  labels[kManagedBy] = "kubectl-mindie";
  labels[kInstance] = iss;
}

// Pods per instance (role.spec.replicas) for `role`.
int pods_per_instance(const UserConfig& cfg, std::string_view role) {
  if (role == "controller") return cfg.controller_standby ? 2 : 1;
  if (role == "coordinator") return cfg.coordinator_standby ? 2 : 1;
  if (role == "prefill") return cfg.p_pods_per_instance;
  if (role == "decode") return cfg.d_pods_per_instance;
  return 1;
}

// True when a ConfigMap key is valid: [-._a-zA-Z0-9]+, at most 253 characters, not "." or "..".
bool valid_config_map_key(std::string_view k) {
  if (k.empty() || k.size() > 253 || k == "." || k == "..") return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
          c == '_'))
      return false;
  return true;
}

// ConfigMap data is a map of UTF-8 strings; binary files belong in binaryData, which scripts never need.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : 4;
    if (n == 4 || (n > 0 && i + n >= s.size())) return false;
    std::uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1f) : n == 2 ? (c & 0x0f) : (c & 0x07);
    for (std::size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Reject overlong forms, surrogates and code points beyond U+10FFFF.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

// One role of the InferServiceSet.
json::object render_role(const UserConfig& cfg, const RoleInfo& info, const std::string& iss, int replicas) {
  const std::string role = info.name;
  const std::string& ns = cfg.job_id;
  const std::string app = app_label(iss, role);
  const bool engine = role == "prefill" || role == "decode";

  json::object r;
  r["name"] = role;
  r["replicas"] = replicas;
  json::object tpl = manifest(info.manifest);
  r["workload"] = tpl["workload"];
  json::object& rlabels = sub(sub(r, "metadata"), "labels");
  rlabels[kManagedBy] = "kubectl-mindie";
  rlabels[kComponent] = role;

  // Services (the addresses the env below points at).
  json::array services;
  if (role == "controller") {
    services.push_back(service_entry(kControllerService, "ClusterIP", "manage", kControllerPort, app));
  } else if (role == "coordinator") {
    services.push_back(service_entry(kCoordinatorService, "ClusterIP", "manage", kCoordinatorPort, app));
    // NodePort without a fixed nodePort: deploy.py's fixed 31015 collides between deployments.
    services.push_back(service_entry(kCoordinatorInferService, "NodePort", "infer", kInferPort, app));
  } else if (role == "kv-pool" && cfg.kv_pool) {
    services.push_back(service_entry(kKvPoolService, "ClusterIP", "kvp", cfg.kv_pool_port, app));
  } else if (role == "kv-conductor" && cfg.kv_conductor) {
    services.push_back(service_entry(kKvConductorService, "ClusterIP", "http", cfg.kv_conductor_port, app));
  }
  if (!services.empty()) r["services"] = std::move(services);

  // The workload spec (Deployment or StatefulSet spec).
  json::object spec = tpl["spec"].is_object() ? tpl["spec"].get_object() : json::object();
  spec["replicas"] = pods_per_instance(cfg, role);
  sub(spec, "selector")["matchLabels"] = json::object{{"app", app}};
  json::object& pod_tpl = sub(spec, "template");
  json::object& pod_md = sub(pod_tpl, "metadata");
  sub(pod_md, "labels")["app"] = app;
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
  env.push_back(env_var("CONTROLLER_SERVICE", operator_service_address(kControllerService, iss, "controller", ns)));
  env.push_back(
      env_var("COORDINATOR_SERVICE", operator_service_address(kCoordinatorService, iss, "coordinator", ns)));
  if (cfg.kv_pool)
    env.push_back(env_var("KVP_MASTER_SERVICE", operator_service_address(kKvPoolService, iss, "kv-pool", ns)));
  if (cfg.kv_conductor)
    env.push_back(
        env_var("KV_CONDUCTOR_SERVICE", operator_service_address(kKvConductorService, iss, "kv-conductor", ns)));
  if (role == "coordinator" && !cfg.disaggregation_bootstrap_port.empty())
    env.push_back(env_var("DISAGGREGATION_BOOTSTRAP_PORT", cfg.disaggregation_bootstrap_port));

  // Host paths the template leaves open.
  const std::string& log_dir = role == "controller"    ? cfg.controller_log_dir
                               : role == "coordinator" ? cfg.coordinator_log_dir
                                                       : cfg.engine_log_dir;
  for (auto& vol : list(pod, "volumes")) {
    if (named(vol, "log-path")) sub(vol.get_object(), "hostPath")["path"] = log_dir;
    if (named(vol, "weight-mount")) sub(vol.get_object(), "hostPath")["path"] = cfg.weight_mount_path;
  }
  for (auto& m : list(c, "volumeMounts"))
    if (named(m, "weight-mount")) m.get_object()["mountPath"] = cfg.weight_mount_path;

  if (engine) {
    const int npus = role == "prefill" ? cfg.p_npus_per_pod : cfg.d_npus_per_pod;
    json::object& res = sub(c, "resources");
    sub(res, "requests")[kNpuResource] = std::to_string(npus);
    sub(res, "limits")[kNpuResource] = std::to_string(npus);
    sub(pod, "nodeSelector")["accelerator-type"] = cfg.hardware->accelerator_type;
    // A3 super-pod scheduling: the block size in NPUs, one pod's worth (deploy.py's infer_service_set mode).
    if (cfg.hardware->sp_block) sub(pod_md, "annotations")["sp-block"] = std::to_string(npus);
  }

  order_first(c, {"name", "image"});
  order_first(pod_tpl, {"metadata", "spec"});
  order_first(spec, {"replicas", "selector"});
  r["spec"] = std::move(spec);
  order_first(r, {"name", "replicas", "workload", "metadata", "services", "spec"});
  return r;
}

}  // namespace

const std::vector<std::string>& role_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& r : kRoles) v.emplace_back(r.name);
    return v;
  }();
  return names;
}

std::map<std::string, int> desired_role_replicas(const UserConfig& cfg) {
  return {{"controller", 1},
          {"coordinator", 1},
          {"prefill", cfg.p_instances},
          {"decode", cfg.d_instances},
          {"kv-pool", cfg.kv_pool ? 1 : 0},
          {"kv-conductor", cfg.kv_conductor ? 1 : 0}};
}

std::string operator_service_address(const std::string& service, const std::string& iss, const std::string& role,
                                     const std::string& ns) {
  return service + "-" + iss + "-0-" + role + "." + ns + ".svc.cluster.local";
}

std::string default_service_set_name(const UserConfig& cfg) { return "mindie-motor-" + cfg.engine_base; }

std::vector<Problem> check_service_set_name(const std::string& name) {
  const std::string path = "metadata.name";
  if (!config::is_dns1123_label(name))
    return {{path, "InferServiceSet name \"" + name +
                       "\" must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with "
                       "a letter or digit"}};
  // Names the operator derives from the InferServiceSet name that must be DNS labels (at most 63 characters).
  std::vector<std::string> derived;
  for (const auto& [service, role] :
       {std::pair{kControllerService, "controller"}, std::pair{kCoordinatorService, "coordinator"},
        std::pair{kCoordinatorInferService, "coordinator"}, std::pair{kKvPoolService, "kv-pool"},
        std::pair{kKvConductorService, "kv-conductor"}})
    derived.push_back(std::string(service) + "-" + name + "-0-" + role);
  // StatefulSet instance 15 (the largest): its pods' controller-revision-hash label is "<sts>-<10-char hash>",
  // and its headless Service "service-<sts>".
  derived.push_back(name + "-0-prefill-15-0123456789");
  derived.push_back("service-" + name + "-0-prefill-15");
  std::string longest;
  for (const auto& d : derived)
    if (d.size() > longest.size()) longest = d;
  if (longest.size() > 63)
    return {{path, "InferServiceSet name \"" + name + "\" is too long: the operator would derive \"" + longest +
                       "\" (" + std::to_string(longest.size()) + " characters, at most 63 allowed); use at most " +
                       std::to_string(name.size() - (longest.size() - 63)) + " characters"}};
  return {};
}

json::object render_config_map(const UserConfig& cfg, const config::EnvConfig* env, const RenderOptions& opts) {
  const std::string iss = service_set_name(cfg, opts);
  json::object cm = manifest("infer_service_set/configmap.yaml");
  set_common_metadata(cm, kConfigMapName, &cfg.job_id, iss);
  json::object& ann = sub(sub(cm, "metadata"), "annotations");
  ann[kDeployModeAnnotation] = config::to_string(cfg.deploy_mode);
  ann[kWorkloadNameAnnotation] = iss;

  json::object& data = sub(cm, "data");
  data[kBaselineKey] = cfg.raw;
  if (env) data[kEnvKey] = env->raw;

  std::vector<Problem> problems;
  std::size_t total = cfg.raw.size() + (env ? env->raw.size() : 0);
  for (const auto& [key, content] : opts.scripts) {
    if (!valid_config_map_key(key))
      problems.push_back({key, "is not a valid ConfigMap key (letters, digits, '-', '_', '.'; at most 253)"});
    else if (key == kBaselineKey || key == kEnvKey)
      problems.push_back({key, "collides with the ConfigMap's own " + key + " key"});
    else if (!valid_utf8(content))
      problems.push_back({key, "is not UTF-8 text"});
    else
      data[key] = content;
    total += key.size() + content.size();
  }
  if (total > kMaxConfigMapBytes)
    problems.push_back({"", "the ConfigMap data would be " + std::to_string(total) +
                                " bytes; Kubernetes objects are limited to 1 MiB"});
  if (!problems.empty()) throw config::ValidationError("configmap/motor-config", std::move(problems));
  return cm;
}

std::vector<json::object> render_infer_service_set(const UserConfig& cfg, const config::EnvConfig* env,
                                                   const RenderOptions& opts) {
  if (cfg.deploy_mode != config::DeployMode::InferServiceSet)
    throw std::invalid_argument("render_infer_service_set: deploy_mode is " +
                                std::string(config::to_string(cfg.deploy_mode)));
  if (!cfg.hardware) throw std::invalid_argument("render_infer_service_set: no hardware profile");
  const std::string iss = service_set_name(cfg, opts);
  if (auto problems = check_service_set_name(iss); !problems.empty())
    throw config::ValidationError("InferServiceSet name", std::move(problems));
  const std::string& ns = cfg.job_id;
  // Cluster-scoped names embed the namespace: deploy.py's fixed names made a second deployment rebind the first's.
  const std::string rbac_name = std::string(kServiceAccount) + "-" + ns;

  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));

  json::object sa = manifest("infer_service_set/serviceaccount.yaml");
  set_common_metadata(sa, kServiceAccount, &ns, iss);
  out.push_back(std::move(sa));

  json::object role = manifest("infer_service_set/clusterrole.yaml");
  set_common_metadata(role, rbac_name, nullptr, iss);
  out.push_back(std::move(role));

  json::object binding = manifest("infer_service_set/clusterrolebinding.yaml");
  set_common_metadata(binding, rbac_name, nullptr, iss);
  sub(binding, "roleRef")["name"] = rbac_name;
  for (auto& s : list(binding, "subjects"))
    if (s.is_object()) s.get_object()["namespace"] = ns;
  out.push_back(std::move(binding));

  json::object set = manifest("infer_service_set/inferserviceset.yaml");
  set_common_metadata(set, iss, &ns, iss);
  json::object& spec = sub(set, "spec");
  spec["replicas"] = 1;  // MindIE runs exactly one InferService per set
  json::array& roles = list(sub(spec, "template"), "roles");
  const auto replicas = desired_role_replicas(cfg);
  for (const auto& info : kRoles) roles.push_back(render_role(cfg, info, iss, replicas.at(info.name)));
  out.push_back(std::move(set));
  return out;
}

}  // namespace mindie::render
