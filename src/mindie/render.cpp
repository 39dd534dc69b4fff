// Rendering of the infer_service_set objects. The YAML templates under manifests/infer_service_set/ hold the
// structure and the fixed Ascend details; everything that depends on the config is set here, on parsed JSON,
// so no value is ever spliced into template text.
#include "mindie/render.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>

#include "kube/limits.h"
#include "kube/names.h"
#include "mindcluster/labels.h"
#include "mindie/env_script.h"
#include "mindie/manifests.h"
#include "util/json_path.h"
#include "util/yaml_json.h"
#include "validation/problem.h"

namespace mindie::render {
namespace json = boost::json;
using validation::Problem;
using config::UserConfig;

namespace {

constexpr const char* kManagedBy = "app.kubernetes.io/managed-by";
constexpr const char* kComponent = "app.kubernetes.io/component";
constexpr const char* kInstance = "app.kubernetes.io/instance";
constexpr const char* kServiceAccount = "mindie-motor-controller";
// Engine pod annotations MindCluster's Volcano reads (PodGroup/pod annotation table, dlug_api_024).
constexpr int kControllerPort = 1026;   // controller management port (deploy.py)
constexpr int kCoordinatorPort = 1026;  // coordinator management port
constexpr int kInferPort = 1025;        // coordinator inference entry
constexpr int kObsPort = 1027;          // coordinator and controller observability/metrics (PyMotor 7d15c04 §U6)
constexpr int kMfStorePort = 50089;     // mf-store (deploy.py's Service "mf-store")

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
    // EPD: encode instances (multi_deployment only; PyMotor 7d15c04 U5).
    {"encode", "encode", "infer_service_set/roles/engine.yaml"},
    // PD-hybrid: prefill and decode in one engine instance (PyMotor's union role).
    {"union", "union", "infer_service_set/roles/engine.yaml"},
    {"kv-pool", "kv_pool", "infer_service_set/roles/kv-pool.yaml"},
    {"kv-conductor", "kv_conductor", "infer_service_set/roles/kv-conductor.yaml"},
    {"mf-store", "mf_store", "infer_service_set/roles/mf-store.yaml"},
    // single_container: every component in one engine pod (deploy.py's ROLE value).
    {"single-container", "SINGLE_CONTAINER", "infer_service_set/roles/engine.yaml"},
};

// The kRoles entry of `role` (a name the code itself passes: an unknown one is a defect, std::logic_error).
const RoleInfo& role_info(std::string_view role) {
  for (const auto& i : kRoles)
    if (role == i.name) return i;
  throw std::logic_error("unknown role " + std::string(role));
}

// Engine roles: NPUs, Volcano, the hardware profile's node selection.
bool is_engine_role(std::string_view role) { return is_instance_engine_role(role) || role == "single-container"; }

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

// The controller's ServiceAccount and its cluster RBAC, appended to `out`: every mode runs the controller (or, in
// single_container, the pod holding it), which lists nodes, pods and ConfigMaps. Cluster-scoped names embed the
// namespace: deploy.py's fixed names made a second deployment rebind the first's. `component` labels the
// ServiceAccount (empty: none).
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

// Puts the sp-block annotation of engine `role` on a Deployment's metadata (multi_deployment and
// single_container: PyMotor's deployer annotates the Deployment, by the profile's rule for the mode).
void annotate_sp_block(json::object& deployment, const UserConfig& cfg, std::string_view role,
                       hardware::SpBlockRule rule) {
  if (std::string v = sp_block_value(cfg, role, rule); !v.empty())
    sub(sub(deployment, "metadata"), "annotations")[mindcluster::kSpBlockAnnotation] = v;
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

// The pod template fields the tool owns, as a source of collision messages: key -> what sets it.
using Owned = std::map<std::string, std::string>;

// Labels that Kubernetes controllers and infer-operator put on pods: an override of them would be overwritten
// or would break selection (infer-operator behaviour doc; apps/v1 controllers).
bool reserved_label(const std::string& key, std::string& who) {
  if (key.starts_with("infer.huawei.com/")) {
    who = "MindCluster infer-operator sets infer.huawei.com/ labels on every pod";
    return true;
  }
  for (const char* k : {"pod-template-hash", "controller-revision-hash", "statefulset.kubernetes.io/pod-name",
                        "apps.kubernetes.io/pod-index"}) {
    if (key == k) {
      who = "the Deployment/StatefulSet controller sets it";
      return true;
    }
  }
  return false;
}

// Applies one role's overrides to its rendered InferServiceSet role `r`, adding a problem for every collision
// with what the templates and the profile set. `pods` is pods per instance, `pods_path` the config path of it.
void apply_overrides(const overrides::RoleOverrides& o, const std::string& role, json::object& spec,
                     json::object& r, int pods, const std::string& pods_path, const std::string& npu_resource,
                     const std::string& npu_path, std::vector<Problem>& problems) {
  const std::string base = util::child_path("roles", role);
  const auto add = [&](std::string path, std::string message) {
    problems.push_back({std::move(path), std::move(message)});
  };
  // Every member written below is created first: inserting a key into a Boost.JSON object may move its other
  // members, so references are taken only once the objects have all their keys. A member is created only when
  // the overrides add to it, and anything they add to an existing template member is either added or (when it
  // collides) a problem, so nothing ends up empty.
  json::object& pod_tpl = spec["template"].get_object();
  sub(pod_tpl, "metadata");
  sub(pod_tpl, "spec");
  json::object& pod_md = pod_tpl["metadata"].get_object();
  json::object& pod = pod_tpl["spec"].get_object();
  sub(pod_md, "labels");
  if (!o.annotations.empty()) sub(pod_md, "annotations");
  if (!o.node_selector.empty()) sub(pod, "nodeSelector");
  if (!o.tolerations.empty()) list(pod, "tolerations");
  list(pod, "volumes");
  json::object& c = pod["containers"].get_array()[0].get_object();
  list(c, "volumeMounts");
  sub(c, "resources");
  const bool volcano = pod.contains("schedulerName") && pod.at("schedulerName") == "volcano";

  // Labels: the template's (selector, fault handling, profile) are owned.
  json::object& labels = pod_md["labels"].get_object();
  for (const auto& kv : o.labels) {
    const std::string key(kv.key());
    std::string who;
    if (const json::value* mine = labels.if_contains(key)) {
      std::string hint = key == "app" ? "it selects the role's pods for the workload and its Services"
                         : key == mindcluster::kFaultSchedulingLabel ? "set faultScheduling instead"
                         : key == mindcluster::kFaultRetryTimesLabel ? "set faultRetryTimes instead"
                                                        : "it comes from the hardware profile";
      add(util::child_path(base + ".labels", key), "collides with the pod label " + key + "=" +
                                            std::string(mine->as_string()) + " that kubectl-mindie sets (" + hint +
                                            ")");
    } else if (reserved_label(key, who)) {
      add(util::child_path(base + ".labels", key), "collides with a label that is not ours to set: " + who);
    } else {
      labels[key] = kv.value();
    }
  }

  for (const auto& kv : o.annotations) {
    json::object& annotations = pod_md["annotations"].get_object();
    const std::string key(kv.key());
    if (const json::value* mine = annotations.if_contains(key))
      add(util::child_path(base + ".annotations", key),
          "collides with the pod annotation " + key + "=" + std::string(mine->as_string()) +
              " that kubectl-mindie sets from the hardware profile (motor_deploy_config.hardware_type)");
    else
      annotations[key] = kv.value();
  }

  if (!o.node_selector.empty()) {
    json::object& selector = pod["nodeSelector"].get_object();
    for (const auto& kv : o.node_selector) {
      if (const json::value* mine = selector.if_contains(kv.key()))
        add(util::child_path(base + ".nodeSelector", kv.key()),
            "collides with the nodeSelector " + std::string(kv.key()) + "=" + std::string(mine->as_string()) +
                " that kubectl-mindie sets from the hardware profile (motor_deploy_config.hardware_type)");
      else
        selector[kv.key()] = kv.value();
    }
  }

  if (!o.tolerations.empty()) {
    json::array& tolerations = pod["tolerations"].get_array();
    const std::size_t builtin = tolerations.size();
    for (std::size_t i = 0; i < o.tolerations.size(); ++i) {
      const json::object& t = o.tolerations[i].get_object();
      bool clash = false;
      for (std::size_t k = 0; k < builtin; ++k) {
        const json::object& mine = tolerations[k].get_object();
        if (t.contains("key") && mine.contains("key") && t.at("key") == mine.at("key")) {
          add(util::item_path(base + ".tolerations", i) + ".key",
              "collides with the toleration of " + std::string(mine.at("key").as_string()) +
                  " that kubectl-mindie sets (" + json::serialize(mine) +
                  "); the shortest matching tolerationSeconds wins, so a second one would not change it");
          clash = true;
        }
      }
      if (!clash) tolerations.push_back(t);
    }
  }

  // Volumes and mounts: names and paths of the templates are owned.
  json::array& volumes = pod["volumes"].get_array();
  std::set<std::string> builtin_volumes;
  for (const auto& v : volumes) builtin_volumes.insert(std::string(v.at("name").as_string()));
  for (std::size_t i = 0; i < o.volumes.size(); ++i) {
    const std::string name(o.volumes[i].at("name").as_string());
    if (builtin_volumes.count(name))
      add(util::item_path(base + ".volumes", i) + ".name",
          "collides with the built-in volume \"" + name + "\" of the " + role + " template");
    else
      volumes.push_back(o.volumes[i]);
  }
  std::set<std::string> volume_names;
  for (const auto& v : volumes) volume_names.insert(std::string(v.at("name").as_string()));
  json::array& mounts = c["volumeMounts"].get_array();
  std::map<std::string, std::string> builtin_paths;
  for (const auto& m : mounts)
    builtin_paths[std::string(m.at("mountPath").as_string())] = std::string(m.at("name").as_string());
  for (std::size_t i = 0; i < o.volume_mounts.size(); ++i) {
    const json::object& m = o.volume_mounts[i].get_object();
    const std::string p = util::item_path(base + ".volumeMounts", i);
    const std::string name(m.at("name").as_string());
    const std::string path(m.at("mountPath").as_string());
    bool ok = true;
    if (!volume_names.count(name)) {
      std::string known;
      for (const auto& n : volume_names) known += (known.empty() ? "" : ", ") + n;
      add(p + ".name", "no volume \"" + name + "\" in the " + role + " pod (volumes: " + known + ")");
      ok = false;
    }
    if (auto it = builtin_paths.find(path); it != builtin_paths.end()) {
      add(p + ".mountPath", "collides with the built-in mount of volume \"" + it->second + "\" at " + path);
      ok = false;
    }
    if (ok) mounts.push_back(m);
  }

  // Resources: NPUs come from the config (requests = limits), everything else may change.
  json::object& res = c["resources"].get_object();
  for (auto [key, mine] : {std::pair{"requests", &o.requests}, std::pair{"limits", &o.limits}}) {
    for (const auto& kv : *mine) {
      if (kv.key() == npu_resource) {
        add(util::child_path(base + ".resources." + key, kv.key()),
            "the NPU resource is set from " + (npu_path.empty() ? std::string("the config (0 NPUs for this role)")
                                                                : npu_path) +
                " (requests = limits); change it there");
        continue;
      }
      sub(res, key)[kv.key()] = kv.value();
    }
  }
  // Kubernetes rejects a request above its limit; check the merged result (an override of one side only).
  if (res.contains("requests") && res.contains("limits"))
    for (const auto& kv : res.at("requests").as_object()) {
      const json::value* limit = res.at("limits").as_object().if_contains(kv.key());
      if (!limit || !kv.value().is_string() || !limit->is_string()) continue;
      const auto req = kube::parse_quantity(kv.value().get_string());
      const auto lim = kube::parse_quantity(limit->get_string());
      if (req && lim && *req > *lim && (o.requests.contains(kv.key()) || o.limits.contains(kv.key())))
        add(util::child_path(base + ".resources." + std::string(o.requests.contains(kv.key()) ? "requests" : "limits"),
                  kv.key()),
            "the " + std::string(kv.key()) + " request " + std::string(kv.value().get_string()) +
                " would exceed its limit " + std::string(limit->get_string()) +
                " (the other side comes from the built-in template)");
    }

  // MindCluster fault rescheduling and gang scheduling are Volcano's: only for pods Volcano schedules.
  const auto volcano_only = [&](const char* field) {
    if (volcano) return true;
    add(base + "." + field, "only roles scheduled by Volcano (schedulerName: volcano; the engine roles prefill, "
                            "decode, union and single-container) use MindCluster fault rescheduling and gang "
                            "scheduling");
    return false;
  };
  if (o.fault_scheduling && volcano_only("faultScheduling"))
    labels[mindcluster::kFaultSchedulingLabel] = overrides::to_string(*o.fault_scheduling);
  if (o.fault_retry_times && volcano_only("faultRetryTimes"))
    labels[mindcluster::kFaultRetryTimesLabel] = std::to_string(*o.fault_retry_times);
  if (o.gang_schedule && volcano_only("gangSchedule")) {
    if (*o.gang_schedule && pods < 2) {
      add(base + ".gangSchedule",
          "gang scheduling needs more than one pod per instance (" + pods_path + " is " + std::to_string(pods) +
              "): with one pod, Volcano holds the instance's PodGroup and no pod starts");
    } else {
      sub(sub(r, "metadata"), "labels")[kGangScheduleLabel] = *o.gang_schedule ? "true" : "false";
    }
  }

  // infer-operator: a StatefulSet with gang scheduling must start its pods in parallel. Last: inserting into
  // `spec` may move pod_tpl, which the references above point into.
  if (o.gang_schedule && *o.gang_schedule && volcano && pods > 1 && r.at("workload").at("kind") == "StatefulSet")
    spec["podManagementPolicy"] = "Parallel";
}

// The Service addresses a mode hands the processes in env (CONTROLLER_SERVICE, ...): the operator's derived names
// in infer_service_set mode, the plain Services' names in multi_deployment mode.
// coordinator is the management Service (1026), coordinator_infer 1025, coordinator_obs 1027 (PyMotor 7d15c04 §U6).
struct Addresses {
  std::string controller, coordinator, coordinator_infer, coordinator_obs, kv_pool, kv_conductor, mf_store;
};

Addresses operator_addresses(const std::string& iss, const std::string& ns) {
  return {operator_service_address(kControllerService, iss, "controller", ns),
          operator_service_address(kCoordinatorService, iss, "coordinator", ns),
          operator_service_address(kCoordinatorInferService, iss, "coordinator", ns),
          operator_service_address(kCoordinatorObsService, iss, "coordinator", ns),
          operator_service_address(kKvPoolService, iss, "kv-pool", ns),
          operator_service_address(kKvConductorService, iss, "kv-conductor", ns),
          operator_service_address(kMfStoreService, iss, "mf-store", ns)};
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

// kvp-master's ports (PyMotor 7d15c04, U9): the pool on kv_cache_pool_config.port and its metrics on 9003 (upstream
// adds the metrics port in multi_deployment only; infer_service_set gets it too, so the coordinator's
// pool_metrics_endpoint works in both).
json::array kv_pool_ports(const UserConfig& cfg) {
  auto port = [](const char* name, int number) {
    return json::object{{"name", name}, {"port", number}, {"protocol", "TCP"}, {"targetPort", number}};
  };
  return json::array{port("business", cfg.kv_pool_port), port("metrics", config::kKvPoolMetricsPort)};
}

// One role of the InferServiceSet (in multi_deployment mode, the source of a role's Deployment spec: the same pod
// template). `app` is the pod label the workload selects; `addr` the env addresses; `extra_labels` pod template
// labels added before the overrides (so overrides colliding with them are reported). Override problems are added
// to `problems`.
json::object render_role(const UserConfig& cfg, const RoleInfo& info, int replicas,
                         const RenderOptions& opts, std::vector<Problem>& problems, const std::string& app,
                         const Addresses& addr, const json::object& extra_labels = {}) {
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

  // Services (the addresses the env below points at).
  json::array services;
  // NodePort entries always get a fixed nodePort: infer-operator refuses a NodePort role Service without one and then
  // creates nothing for the role (infer-operator-rules.md A1). deploy checks that they are free before writing.
  const auto node_port_entry = [&](const char* name, const char* port_name, int port, int node_port) {
    services.push_back(service_entry(name, "NodePort", port_name, port, app));
    services.back().at("spec").at("ports").at(0).as_object()["nodePort"] = node_port;
  };
  if (role == "controller") {
    services.push_back(service_entry(kControllerService, "ClusterIP", "manage", kControllerPort, app));
    node_port_entry(kControllerObsService, "obs", kObsPort,
                    cfg.controller_obs_node_port ? cfg.controller_obs_node_port : config::kDefaultControllerObsNodePort);
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
  if (!services.empty()) r["services"] = std::move(services);

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

  const int pods = pods_per_instance(cfg, role);
  std::string npu_path;
  if (engine) {
    const hardware::HardwareProfile& hw = *cfg.hardware;
    const int npus = npus_per_pod(cfg, role);
    npu_path = role == "prefill"  ? "motor_deploy_config.p_pod_npu_num"
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
      selector[cfg.pd_hetero_label_key] =
          role == "prefill" ? cfg.pd_hetero_prefill_value : cfg.pd_hetero_decode_value;
    json::object& labels = sub(pod_md, "labels");
    for (const auto& [k, v] : hw.pod_labels) labels[k] = v;
    if (!hw.schedule_policy.empty()) sub(pod_md, "annotations")[mindcluster::kSchedulePolicyAnnotation] = hw.schedule_policy;
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
  }
  if (single) {
    // The controller runs in this pod and lists nodes, pods and ConfigMaps: it needs the controller's API token.
    pod["serviceAccountName"] = kServiceAccount;
    pod["automountServiceAccountToken"] = true;
  }
  order_first(c, {"name", "image"});
  if (opts.overrides) {
    if (auto it = opts.overrides->roles.find(role); it != opts.overrides->roles.end()) {
      const std::string pods_path = role == "prefill"  ? "motor_deploy_config.single_p_instance_pod_num"
                                    : role == "decode" ? "motor_deploy_config.single_d_instance_pod_num"
                                    : role == "union"  ? "motor_deploy_config.single_hybrid_instance_pod_num"
                                    : role == "encode" ? "motor_deploy_config.single_e_instance_pod_num"
                                                       : "pods per instance";
      apply_overrides(it->second, role, spec, r, pods, pods_path, cfg.hardware->npu_resource, npu_path, problems);
    }
  }

  order_first(spec["template"].get_object(), {"metadata", "spec"});
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

std::string operator_service_address(const std::string& service, const std::string& iss, const std::string& role,
                                     const std::string& ns) {
  return service + "-" + iss + "-0-" + role + "." + ns + ".svc.cluster.local";
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
      out.push_back({cfg.job_id, operator_name(kControllerObsService, "controller"),
                     cfg.controller_obs_node_port ? cfg.controller_obs_node_port
                                                  : config::kDefaultControllerObsNodePort,
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

std::string default_service_set_name(const UserConfig& cfg) { return "mindie-motor-" + cfg.engine_base; }

std::vector<Problem> check_service_set_name(const std::string& name) {
  const std::string path = "metadata.name";
  if (!kube::is_dns1123_label(name))
    return {{path, "InferServiceSet name \"" + name +
                       "\" must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with "
                       "a letter or digit"}};
  // Names the operator derives from the InferServiceSet name that must be DNS labels (at most 63 characters).
  std::vector<std::string> derived;
  for (const auto& [service, role] :
       {std::pair{kControllerService, "controller"}, std::pair{kControllerObsService, "controller"},
        std::pair{kCoordinatorService, "coordinator"}, std::pair{kCoordinatorInferService, "coordinator"},
        std::pair{kCoordinatorObsService, "coordinator"}, std::pair{kKvPoolService, "kv-pool"},
        std::pair{kKvConductorService, "kv-conductor"}, std::pair{kMfStoreService, "mf-store"}})
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
    else if (!valid_utf8(content))
      problems.push_back({key, "is not UTF-8 text"});
    else if (key != env_script::kEnvFunctionsKey)  // generated below: a stored copy is replaced, never kept
      scripts[key] = content;
  }
  // env.json reaches the processes through the functions the startup scripts call (deploy.py behaviour doc).
  env_script::inject(scripts, env, env_script::derived_common_env(cfg, ann[baseline::kServiceIdAnnotation].as_string().c_str()));
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

std::vector<json::object> render_infer_service_set(const UserConfig& cfg, const config::EnvConfig* env,
                                                   const RenderOptions& opts) {
  if (cfg.deploy_mode != config::DeployMode::InferServiceSet)
    throw std::invalid_argument("render_infer_service_set: deploy_mode is " +
                                std::string(config::to_string(cfg.deploy_mode)));
  if (!cfg.hardware) throw std::invalid_argument("render_infer_service_set: no hardware profile");
  const std::string iss = service_set_name(cfg, opts);
  if (auto problems = check_service_set_name(iss); !problems.empty())
    throw validation::ValidationError("InferServiceSet name", std::move(problems));
  const std::string& ns = cfg.job_id;
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  append_controller_rbac(out, ns, iss, "");

  json::object set = manifest("infer_service_set/inferserviceset.yaml");
  set_common_metadata(set, iss, &ns, iss);
  json::object& spec = sub(set, "spec");
  spec["replicas"] = 1;  // MindIE runs exactly one InferService per set
  json::array& roles = list(sub(spec, "template"), "roles");
  const auto replicas = desired_role_replicas(cfg);
  std::vector<Problem> problems;
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles)
      if (!role_rendered(cfg, role))
        problems.push_back({util::child_path("roles", role), "this deployment has no " + role + " role (" + why_not_rendered(role) +
                                                 ")"});
  const Addresses addr = operator_addresses(iss, ns);
  for (const auto& info : kRoles)
    if (role_rendered(cfg, info.name)) {
      json::object r = render_role(cfg, info, replicas.at(info.name), opts, problems, app_label(iss, info.name), addr);
      stamp_template_hash(r.at("spec").as_object(), true);
      roles.push_back(std::move(r));
    }
  // Every role's collisions at once, as for the files themselves.
  if (!problems.empty()) throw validation::ValidationError(opts.overrides->source, std::move(problems));
  out.push_back(std::move(set));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// multi_deployment

std::string workload_name(const UserConfig& cfg, const RenderOptions& opts) { return service_set_name(cfg, opts); }

bool is_instance_engine_role(std::string_view role) {
  return std::find(kInstanceEngineRoles.begin(), kInstanceEngineRoles.end(), role) != kInstanceEngineRoles.end();
}

std::string engine_deployment_name(const UserConfig& cfg, std::string_view role, int index) {
  const char* suffix = role == "prefill" ? "-p" : role == "decode" ? "-d" : role == "encode" ? "-e"
                       : role == "union"  ? "-u" : nullptr;
  if (!suffix)
    throw std::invalid_argument("engine_deployment_name: role " + std::string(role) + " is not an engine role");
  return cfg.engine_base + suffix + std::to_string(index);
}

std::string cluster_service_address(const std::string& service, const std::string& ns) {
  return service + "." + ns + ".svc.cluster.local";
}

namespace {

// Labels every multi_deployment object carries: delete selects managed-by + instance, status also component and
// instance-index (index < 0: none).
json::object multi_labels(const std::string& name, const std::string& role, int index) {
  json::object labels{{kManagedBy, "kubectl-mindie"}, {kInstance, name}, {kComponent, role}};
  if (index >= 0) labels[kInstanceIndexLabel] = std::to_string(index);
  return labels;
}

json::object multi_service(const std::string& name, const std::string& ns, const std::string& workload,
                           const std::string& role, const std::string& app, const char* type, const char* port_name,
                           int port, int node_port) {
  json::object p{{"name", port_name}, {"port", port}, {"protocol", "TCP"}, {"targetPort", port}};
  if (node_port) p["nodePort"] = node_port;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", multi_labels(workload, role, -1)}}},
      {"spec", {{"type", type}, {"selector", {{"app", app}}}, {"ports", json::array{std::move(p)}}}}};
}

// A Deployment `name` from a rendered role's workload spec (render_role), its pods labelled app=<name> (the
// selector) and, for engines, with the instance index.
json::object multi_deployment_object(const std::string& name, const std::string& ns, const std::string& workload,
                                     const std::string& role, int index, json::object spec) {
  // StatefulSet-only fields of the engine template (Deployments reject them).
  spec.erase("podManagementPolicy");
  sub(spec, "selector")["matchLabels"] = json::object{{"app", name}};
  json::object& labels = sub(sub(sub(spec, "template"), "metadata"), "labels");
  labels["app"] = name;
  if (index >= 0) labels[kInstanceIndexLabel] = std::to_string(index);
  stamp_template_hash(spec, false);  // the deployment controller follows a changed replicas itself
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "Deployment"},
                      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", multi_labels(workload, role, index)}}},
                      {"spec", std::move(spec)}};
}

// The workload name of a Deployment-based mode, after checking that `cfg` is of `mode` (std::invalid_argument,
// naming `caller`) and the name a DNS-1123 label: only a label value there (no operator derives names from it),
// but kept a label like every name (validation::ValidationError).
std::string checked_deployments_workload(const UserConfig& cfg, const RenderOptions& opts, config::DeployMode mode,
                                         const char* caller) {
  if (cfg.deploy_mode != mode)
    throw std::invalid_argument(std::string(caller) + ": deploy_mode is " +
                                std::string(config::to_string(cfg.deploy_mode)));
  if (!cfg.hardware) throw std::invalid_argument(std::string(caller) + ": no hardware profile");
  std::string name = workload_name(cfg, opts);
  if (!kube::is_dns1123_label(name))
    throw validation::ValidationError(
        "workload name", {{"metadata.name", "\"" + name + "\" must be a DNS-1123 label: lower-case letters, digits "
                                                          "and '-', starting and ending with a letter or digit"}});
  return name;
}

}  // namespace

std::vector<json::object> render_multi_workloads(const UserConfig& cfg, const RenderOptions& opts) {
  const std::string name = checked_deployments_workload(cfg, opts, config::DeployMode::MultiDeployment,
                                                        "render_multi_workloads");
  const std::string& ns = cfg.job_id;
  const Addresses addr{cluster_service_address(kMultiControllerService, ns),
                       cluster_service_address(kMultiCoordinatorMgmt, ns),
                       cluster_service_address(kMultiCoordinatorInfer, ns),
                       cluster_service_address(kMultiCoordinatorObs, ns),
                       cluster_service_address(kKvPoolService, ns), cluster_service_address(kKvConductorService, ns),
                       cluster_service_address(kMfStoreService, ns)};

  std::vector<Problem> problems;
  // Volcano PodGroups per instance are infer-operator's work; plain Deployments get none, and a one-pod-per-group
  // gang would never start the instance's other pods together.
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles) {
      if (!role_rendered(cfg, role))
        problems.push_back({util::child_path("roles", role), "this deployment has no " + role + " role (" + why_not_rendered(role) +
                                                 ")"});
      else if (o.gang_schedule && *o.gang_schedule)
        problems.push_back({util::child_path(util::child_path("roles", role), "gangSchedule"),
                            "gang scheduling needs infer-operator (deploy_mode infer_service_set): multi_deployment "
                            "Deployments get no Volcano PodGroup"});
    }

  std::vector<json::object> out;
  append_controller_rbac(out, ns, name, "controller");

  // One pod template per role, rendered once (override problems reported once), then one Deployment per instance.
  const auto role_spec = [&](const RoleInfo& info, const std::string& app) {
    json::object extra = multi_labels(name, info.name, -1);
    extra["job-name"] = cfg.job_id;  // deploy.py's engine label; JOB_NAME is the job_id (stable, see render_role)
    json::object r = render_role(cfg, info, 1, opts, problems, app, addr, extra);
    return r["spec"].get_object();
  };
  out.push_back(multi_deployment_object(kMultiController, ns, name, "controller", -1,
                                        role_spec(role_info("controller"), kMultiController)));
  out.push_back(multi_service(kMultiControllerService, ns, name, "controller", kMultiController, "ClusterIP", "manage",
                              kControllerPort, 0));
  // NodePorts allocated by Kubernetes unless the config fixes them (deploy.py's fixed 31015/31017/31027 collide
  // between deployments). The Services are PyMotor 7d15c04's (§U6).
  out.push_back(multi_service(kMultiControllerObs, ns, name, "controller", kMultiController, "NodePort", "obs",
                              kObsPort, cfg.controller_obs_node_port));
  out.push_back(multi_deployment_object(kMultiCoordinator, ns, name, "coordinator", -1,
                                        role_spec(role_info("coordinator"), kMultiCoordinator)));
  out.push_back(multi_service(kMultiCoordinatorMgmt, ns, name, "coordinator", kMultiCoordinator, "ClusterIP",
                              "manage", kCoordinatorPort, 0));
  out.push_back(multi_service(kMultiCoordinatorInfer, ns, name, "coordinator", kMultiCoordinator, "NodePort", "infer",
                              kInferPort, cfg.infer_node_port));
  out.push_back(multi_service(kMultiCoordinatorObs, ns, name, "coordinator", kMultiCoordinator, "NodePort", "obs",
                              kObsPort, cfg.obs_node_port));
  // Engine Deployments: encode instances first (PyMotor 7d15c04 U5), then prefill and decode, or PD-hybrid's union
  // instances (U4).
  for (const auto& [engine, count] : {std::pair{"encode", cfg.e_instances}, std::pair{"prefill", cfg.p_instances},
                                      std::pair{"decode", cfg.d_instances}, std::pair{"union", cfg.hybrid_instances}}) {
    if (count == 0) continue;
    const json::object spec = role_spec(role_info(engine), engine_deployment_name(cfg, engine, 0));
    for (int i = 0; i < count; ++i) {
      out.push_back(multi_deployment_object(engine_deployment_name(cfg, engine, i), ns, name, engine, i, spec));
      annotate_sp_block(out.back(), cfg, engine, cfg.hardware->sp_block.multi_deployment);
    }
  }
  if (cfg.kv_pool) {
    out.push_back(multi_deployment_object(kMultiKvPool, ns, name, "kv-pool", -1,
                                          role_spec(role_info("kv-pool"), kMultiKvPool)));
    out.push_back(multi_service(kKvPoolService, ns, name, "kv-pool", kMultiKvPool, "ClusterIP", "business",
                                cfg.kv_pool_port, 0));
    out.back().at("spec").as_object()["ports"] = kv_pool_ports(cfg);
  }
  if (cfg.kv_conductor) {
    out.push_back(multi_deployment_object(kMultiKvConductor, ns, name, "kv-conductor", -1,
                                          role_spec(role_info("kv-conductor"), kMultiKvConductor)));
    out.push_back(multi_service(kKvConductorService, ns, name, "kv-conductor", kMultiKvConductor, "ClusterIP", "http",
                                cfg.kv_conductor_port, 0));
  }
  if (cfg.mf_store) {
    out.push_back(multi_deployment_object(kMultiMfStore, ns, name, "mf-store", -1,
                                          role_spec(role_info("mf-store"), kMultiMfStore)));
    out.push_back(multi_service(kMfStoreService, ns, name, "mf-store", kMultiMfStore, "ClusterIP", "store",
                                kMfStorePort, 0));
  }
  if (!problems.empty())
    throw validation::ValidationError(opts.overrides ? opts.overrides->source : "overrides", std::move(problems));
  return out;
}

std::string single_container_name(const UserConfig& cfg) { return cfg.job_id + "-single-container"; }

std::string single_container_service_name(const UserConfig& cfg) { return cfg.job_id + "-coordinator-service"; }

std::vector<RenamedService> renamed_services(const UserConfig& cfg) {
  switch (cfg.deploy_mode) {
    case config::DeployMode::MultiDeployment: return {{kOldMultiCoordinatorService, kMultiCoordinatorMgmt}};
    case config::DeployMode::SingleContainer:
      return {{single_container_name(cfg), single_container_service_name(cfg)}};
    case config::DeployMode::InferServiceSet: return {};
  }
  return {};
}

std::vector<json::object> render_single_container_workloads(const UserConfig& cfg, const RenderOptions& opts) {
  const std::string name = checked_deployments_workload(cfg, opts, config::DeployMode::SingleContainer,
                                                        "render_single_container_workloads");
  const std::string& ns = cfg.job_id;
  const std::string object_name = single_container_name(cfg);
  const std::string service_name = single_container_service_name(cfg);
  // A job_id of up to 63 characters plus the suffix can exceed the DNS label limit of Services (parse_user_config
  // refuses such a job_id already; this guards configs built otherwise).
  if (!kube::is_dns1123_label(object_name) || !kube::is_dns1123_label(service_name))
    throw validation::ValidationError(
        "workload name", {{"motor_deploy_config.job_id",
                           "too long for single_container: the Service \"" + service_name +
                               "\" must be at most 63 characters (job_id at most " +
                               std::to_string(config::kMaxSingleContainerJobId) + ")"}});

  std::vector<Problem> problems;
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles) {
      if (role != "single-container")
        problems.push_back({util::child_path("roles", role), "deploy_mode single_container runs one pod: only roles.single-container "
                                             "applies"});
      else if (o.gang_schedule && *o.gang_schedule)
        problems.push_back({util::child_path(util::child_path("roles", role), "gangSchedule"),
                            "gang scheduling needs infer-operator (deploy_mode infer_service_set)"});
    }

  std::vector<json::object> out;
  append_controller_rbac(out, ns, name, "single-container");

  const RoleInfo& info = role_info("single-container");
  json::object extra = multi_labels(name, info.name, -1);
  extra["job-name"] = cfg.job_id;
  json::object r = render_role(cfg, info, 1, opts, problems, object_name, Addresses{}, extra);
  out.push_back(multi_deployment_object(object_name, ns, name, info.name, -1, std::move(r["spec"].get_object())));
  annotate_sp_block(out.back(), cfg, info.name, cfg.hardware->sp_block.single_container);
  // The inference entry (the coordinator inside listens on 1025), reachable from outside like deploy.py's and under
  // its name (PyMotor's "<job_id>-coordinator-service"); it selects the Deployment's pods.
  out.push_back(multi_service(service_name, ns, name, info.name, object_name, "NodePort", "infer", kInferPort,
                              cfg.infer_node_port));
  if (!problems.empty())
    throw validation::ValidationError(opts.overrides ? opts.overrides->source : "overrides", std::move(problems));
  return out;
}

std::vector<json::object> render_single_container(const UserConfig& cfg, const config::EnvConfig* env,
                                                  const RenderOptions& opts) {
  auto workloads = render_single_container_workloads(cfg, opts);
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  for (auto& o : workloads) out.push_back(std::move(o));
  return out;
}

std::vector<json::object> render_multi_deployment(const UserConfig& cfg, const config::EnvConfig* env,
                                                  const RenderOptions& opts) {
  auto workloads = render_multi_workloads(cfg, opts);  // validates the mode and the name first
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  for (auto& o : workloads) out.push_back(std::move(o));
  return out;
}

}  // namespace mindie::render
