// Rendering shared by every deploy mode: the built-in templates, the motor-config ConfigMap, role names and counts,
// template hashes and nodePorts. The modes are render_infer_service_set.cpp, render_multi_deployment.cpp and
// render_single_container.cpp; one role's pod template is render_role.cpp. The YAML templates under manifests/ hold
// the structure and the fixed Ascend details; everything that depends on the config is set on parsed JSON, so no
// value is ever spliced into template text.
#include "mindie/render.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>

#include "kube/limits.h"
#include "mindie/env_script.h"
#include "mindie/manifests.h"
#include "mindie/render_parts.h"
#include "util/json_path.h"
#include "util/yaml_json.h"
#include "validation/problem.h"

namespace mindie::render {
namespace json = boost::json;
using config::UserConfig;
using validation::Problem;

namespace detail {

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

// Sets kTemplateHashAnnotation on the pod template of a workload spec (last, once the template is final). With
// `with_replicas` (infer_service_set roles) the pods per instance count too: the operator never updates a workload's
// replicas either.
void stamp_template_hash(json::object& workload_spec, bool with_replicas) {
  const json::value* replicas = workload_spec.if_contains("replicas");
  const std::int64_t pods = with_replicas && replicas && replicas->is_int64() ? replicas->as_int64() : -1;
  json::object& tpl = sub(workload_spec, "template");
  const std::string hash = template_hash(tpl, pods);
  sub(sub(tpl, "metadata"), "annotations")[kTemplateHashAnnotation] = hash;
}

// The kRoles entry of `role` (a name the code itself passes: an unknown one is a defect, std::logic_error).
const RoleInfo& role_info(std::string_view role) {
  for (const auto& i : kRoles)
    if (role == i.name) return i;
  throw std::logic_error("unknown role " + std::string(role));
}

// Roles rendered only when their component is on: their absence keeps the role indices of every other
// deployment as they were (scale patches by index).
bool role_rendered(const UserConfig& cfg, std::string_view role) {
  if (role == "union") return cfg.hybrid();
  if (role == "encode") return cfg.encode;
  if (role == "mf-store") return cfg.mf_store;
  return role != "single-container";
}

// Why role_rendered is false for `role`, for messages.
std::string why_not_rendered(std::string_view role) {
  if (role == "union") return "it exists with PD-hybrid, motor_deploy_config.hybrid_instances_num";
  if (role == "encode") return "it exists in multi_deployment with motor_deploy_config.e_instances_num";
  if (role == "mf-store") return "it exists with sglang engines, motor_engine_prefill_config.engine_type";
  return "it exists with deploy_mode single_container";
}

// The pod label that ties a role's pods to its workload selector and its Services.
std::string app_label(const std::string& iss, const std::string& role) { return iss + "-" + role; }

std::string service_set_name(const UserConfig& cfg, const RenderOptions& opts) {
  return opts.service_set_name.empty() ? default_service_set_name(cfg) : opts.service_set_name;
}

void set_common_metadata(json::object& obj, const std::string& name, const std::string* ns, const std::string& iss) {
  // name and namespace first, as kubectl shows them; then whatever the template carries.
  json::object md{{"name", name}};
  if (ns) md["namespace"] = *ns;
  for (const auto& kv : sub(obj, "metadata")) md[kv.key()] = kv.value();
  obj["metadata"] = std::move(md);
  json::object& labels = sub(obj["metadata"].get_object(), "labels");
  labels[kManagedBy] = "kubectl-mindie";
  labels[kInstance] = iss;
}

// The controller's ServiceAccount and its RBAC, appended to `out`: every mode runs the controller (or, in
// single_container, the pod holding it), which reads nodes (a ClusterRole), and pods and ConfigMaps of its own
// namespace (a Role): deploy.py granted the last two in every namespace. Cluster-scoped names embed the namespace:
// deploy.py's fixed names made a second deployment rebind the first's; keeping them, a redeploy's apply narrows an
// earlier deploy's ClusterRole in place. `component` labels the ServiceAccount (empty: none).
void append_controller_rbac(std::vector<json::object>& out, const std::string& ns, const std::string& workload,
                            const std::string& component) {
  const std::string rbac_name = std::string(kServiceAccount) + "-" + ns;
  json::object sa = manifest("infer_service_set/serviceaccount.yaml");
  set_common_metadata(sa, kServiceAccount, &ns, workload);
  if (!component.empty()) sub(sub(sa, "metadata"), "labels")[kComponent] = component;
  out.push_back(std::move(sa));
  json::object role = manifest("infer_service_set/clusterrole.yaml");
  set_common_metadata(role, rbac_name, nullptr, workload);
  out.push_back(std::move(role));
  json::object binding = manifest("infer_service_set/clusterrolebinding.yaml");
  set_common_metadata(binding, rbac_name, nullptr, workload);
  sub(binding, "roleRef")["name"] = rbac_name;
  for (auto& s : list(binding, "subjects"))
    if (s.is_object()) s.get_object()["namespace"] = ns;
  out.push_back(std::move(binding));
  json::object ns_role = manifest("infer_service_set/role.yaml");
  set_common_metadata(ns_role, kServiceAccount, &ns, workload);
  out.push_back(std::move(ns_role));
  json::object ns_binding = manifest("infer_service_set/rolebinding.yaml");
  set_common_metadata(ns_binding, kServiceAccount, &ns, workload);
  for (auto& s : list(ns_binding, "subjects"))
    if (s.is_object()) s.get_object()["namespace"] = ns;
  out.push_back(std::move(ns_binding));
}

}  // namespace detail

using namespace detail;

namespace {

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
  if (cfg.deploy_mode == config::DeployMode::SingleContainer) {
    std::map<std::string, int> out;
    for (const auto& r : kRoles) out[r.name] = 0;
    out["single-container"] = 1;
    return out;
  }
  return {{"controller", 1},
          {"coordinator", 1},
          {"prefill", cfg.p_instances},
          {"decode", cfg.d_instances},
          {"encode", cfg.e_instances},
          {"union", cfg.hybrid_instances},
          {"kv-pool", cfg.kv_pool ? 1 : 0},
          {"kv-conductor", cfg.kv_conductor ? 1 : 0},
          {"mf-store", cfg.mf_store ? 1 : 0},
          {"single-container", 0}};
}

std::string template_hash(const json::object& pod_template, std::int64_t pods) {
  json::object copy = pod_template;
  if (auto* md = copy.if_contains("metadata"); md && md->is_object())
    if (auto* ann = md->as_object().if_contains("annotations"); ann && ann->is_object()) {
      ann->as_object().erase(kTemplateHashAnnotation);
      if (ann->as_object().empty()) md->as_object().erase("annotations");
    }
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  std::string text = json::serialize(copy);
  if (pods >= 0) text += "\nreplicas=" + std::to_string(pods);
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

std::vector<NodePortClaim> node_port_claims(const UserConfig& cfg, const RenderOptions& opts) {
  const std::string infer_key = "motor_deploy_config.infer_node_port";
  const std::string obs_key = "motor_deploy_config.obs_node_port";
  const std::string controller_obs_key = "motor_deploy_config.controller_obs_node_port";
  std::vector<NodePortClaim> out;
  switch (cfg.deploy_mode) {
    case config::DeployMode::InferServiceSet: {
      // The operator names the Service "<entry>-<InstanceSet>" and adds the InferService index (0) to the port.
      const std::string iss = service_set_name(cfg, opts);
      const auto operator_name = [&](const char* entry, const char* role) {
        return std::string(entry) + "-" + iss + "-0-" + role;
      };
      out.push_back({cfg.job_id, operator_name(kCoordinatorInferService, "coordinator"),
                     cfg.infer_node_port ? cfg.infer_node_port : config::kDefaultInferNodePort, infer_key});
      out.push_back({cfg.job_id, operator_name(kCoordinatorObsService, "coordinator"),
                     cfg.obs_node_port ? cfg.obs_node_port : config::kDefaultObsNodePort, obs_key});
      out.push_back(
          {cfg.job_id, operator_name(kControllerObsService, "controller"),
           cfg.controller_obs_node_port ? cfg.controller_obs_node_port : config::kDefaultControllerObsNodePort,
           controller_obs_key});
      break;
    }
    case config::DeployMode::MultiDeployment:
      if (cfg.infer_node_port) out.push_back({cfg.job_id, kMultiCoordinatorInfer, cfg.infer_node_port, infer_key});
      if (cfg.obs_node_port) out.push_back({cfg.job_id, kMultiCoordinatorObs, cfg.obs_node_port, obs_key});
      if (cfg.controller_obs_node_port)
        out.push_back({cfg.job_id, kMultiControllerObs, cfg.controller_obs_node_port, controller_obs_key});
      break;
    case config::DeployMode::SingleContainer:
      if (cfg.infer_node_port)
        out.push_back({cfg.job_id, single_container_service_name(cfg), cfg.infer_node_port, infer_key});
      break;
  }
  return out;
}

json::object render_config_map(const UserConfig& cfg, const config::EnvConfig* env, const RenderOptions& opts) {
  const std::string iss = service_set_name(cfg, opts);
  json::object cm = manifest("infer_service_set/configmap.yaml");
  set_common_metadata(cm, baseline::kConfigMapName, &cfg.job_id, iss);
  json::object& ann = sub(sub(cm, "metadata"), "annotations");
  ann[baseline::kDeployModeAnnotation] = config::to_string(cfg.deploy_mode);
  ann[baseline::kWorkloadNameAnnotation] = iss;

  ann[baseline::kServiceIdAnnotation] = opts.service_id.empty() ? cfg.job_id : opts.service_id;

  json::object& data = sub(cm, "data");
  data[baseline::kBaselineKey] = cfg.raw;
  if (env) data[baseline::kEnvKey] = env->raw;
  if (opts.overrides) data[baseline::kOverridesKey] = opts.overrides->raw;

  std::vector<Problem> problems;
  std::map<std::string, std::string> scripts;
  for (const auto& [key, content] : opts.scripts) {
    if (!valid_config_map_key(key))
      problems.push_back({key, "is not a valid ConfigMap key (letters, digits, '-', '_', '.'; at most 253)"});
    else if (key == baseline::kBaselineKey || key == baseline::kEnvKey || key == baseline::kOverridesKey)
      problems.push_back({key, "collides with the ConfigMap's own " + key + " key"});
    else if (!valid_utf8(content)) problems.push_back({key, "is not UTF-8 text"});
    else if (key != env_script::kEnvFunctionsKey)  // generated below: a stored copy is replaced, never kept
      scripts[key] = content;
  }
  // env.json reaches the processes through the functions the startup scripts call (deploy.py behaviour doc).
  env_script::inject(scripts, env,
                     env_script::derived_common_env(cfg, ann[baseline::kServiceIdAnnotation].as_string().c_str()));
  std::size_t total = cfg.raw.size() + (env ? env->raw.size() : 0) + (opts.overrides ? opts.overrides->raw.size() : 0);
  for (const auto& [key, content] : scripts) {
    data[key] = content;
    total += key.size() + content.size();
  }
  if (total > kube::kMaxConfigMapBytes)
    problems.push_back({"", "the ConfigMap data would be " + std::to_string(total) +
                                " bytes; Kubernetes objects are limited to 1 MiB"});
  if (!problems.empty()) throw validation::ValidationError("configmap/motor-config", std::move(problems));
  return cm;
}

std::string workload_name(const UserConfig& cfg, const RenderOptions& opts) { return service_set_name(cfg, opts); }

bool is_instance_engine_role(std::string_view role) {
  return std::find(kInstanceEngineRoles.begin(), kInstanceEngineRoles.end(), role) != kInstanceEngineRoles.end();
}

std::string cluster_service_address(const std::string& service, const std::string& ns) {
  return service + "." + ns + ".svc.cluster.local";
}

}  // namespace mindie::render
