// Rendering of the StormService objects (aibrix/storm_render.h). Objects are built in code (no template text), so
// no value from the config is ever spliced into YAML.
#include "aibrix/storm_render.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

#include "util/json_path.h"
#include "util/time.h"

namespace mindie::aibrix {
namespace json = boost::json;

namespace {

constexpr const char* kRolesPointer = "/spec/template/spec/roles";
// start_server.sh and start_proxy.sh live in scripts_dir, mounted here (the published template's workingDir).
constexpr const char* kScriptsMount = "/scripts";

json::object env_value(std::string_view name, std::string_view value) {
  return json::object{{"name", name}, {"value", value}};
}
json::object env_field(std::string_view name, std::string_view field_path) {
  return json::object{{"name", name},
                      {"valueFrom", json::object{{"fieldRef", json::object{{"fieldPath", field_path}}}}}};
}
std::string str(int n) { return std::to_string(n); }
std::string bool_text(bool b) { return b ? "true" : "false"; }

void append(json::object& dst, const StringMap& src) {
  for (const auto& [k, v] : src) dst[k] = v;
}

json::object host_path_volume(std::string_view name, std::string_view path, std::string_view type) {
  json::object hp{{"path", path}};
  if (!type.empty()) hp["type"] = type;
  return json::object{{"name", name}, {"hostPath", std::move(hp)}};
}

// <ROLE>_NUM etc.: the env names the published scripts read, by engine role.
std::string env_prefix(Role r) { return r == Role::Prefill ? "PREFILL" : "DECODE"; }

// The pod labels of engine role `role`: the model's, MindCluster's fault handling, then the user's.
json::object engine_labels(const StormConfig& cfg, const EngineRole& role) {
  json::object labels{{kModelNameLabel, cfg.model_name},
                      {kModelPortLabel, str(kEnginePort)},
                      {kModelEngineLabel, "vllm"},
                      {mindcluster::kFaultSchedulingLabel, to_string(cfg.fault_scheduling)},
                      {mindcluster::kFaultRetryTimesLabel, str(cfg.fault_retry_times)}};
  // MindCluster: pod-level rescheduling for single-pod instances; a group is rescheduled as a whole instead.
  if (role.pod_group_size == 1) labels[mindcluster::kPodReschedulingLabel] = "on";
  append(labels, role.labels);
  return labels;
}

// The pod annotations of engine role `which`: MindCluster's and Volcano's, then the user's.
json::object engine_annotations(const StormConfig& cfg, Role which) {
  const EngineRole& role = cfg.engine(which);
  const hardware::HardwareProfile& hw = *role.hardware;
  json::object annotations{{mindcluster::kMinAvailableAnnotation, str(min_available(cfg, which))}};
  // Each pod of a single-pod role is a whole instance: a failed pod-level reschedule must not escalate to the job
  // (which would take the other instances down with it).
  if (role.pod_group_size == 1) annotations[mindcluster::kRecoverPolicyPathAnnotation] = "pod";
  // Volcano's Ascend scheduling policy of the server model (MindCluster's StormService guide sets it on both roles).
  if (!hw.schedule_policy.empty()) annotations[mindcluster::kSchedulePolicyAnnotation] = hw.schedule_policy;
  // Logical SuperPoD size, as the profile rules it for every engine pod of this project.
  if (hw.sp_block.pod_template == hardware::SpBlockRule::PerPod)
    annotations[mindcluster::kSpBlockAnnotation] = str(role.npu_num);
  else if (hw.sp_block.pod_template == hardware::SpBlockRule::PerInstance)
    annotations[mindcluster::kSpBlockAnnotation] = str(role.npu_num * role.pod_group_size);
  append(annotations, role.annotations);
  return annotations;
}

// The engine container of role `role` (named `name`).
json::object engine_container(const StormConfig& cfg, const EngineRole& role, const std::string& name) {
  const hardware::HardwareProfile& hw = *role.hardware;
  // The env of the published stormservice.yaml.j2 (start_server.sh reads it), in its order, plus
  // ASCEND_VISIBLE_DEVICES: Ascend Docker Runtime mounts the chips Volcano allocated, which Volcano records in the
  // pod annotation named like the resource (MindCluster guide, YAML parameters).
  json::array env{
      env_field("POD_IP", "status.podIP"),
      env_field("ASCEND_VISIBLE_DEVICES", "metadata.annotations['" + hw.npu_resource + "']"),
      env_value("DISTRIBUTED_DP", bool_text(cfg.distributed_dp)),
      env_value("PREFILL_DP_SIZE", str(cfg.prefill.dp_size)),
      env_value("PREFILL_TP_SIZE", str(cfg.prefill.tp_size)),
      env_value("DECODE_DP_SIZE", str(cfg.decode.dp_size)),
      env_value("DECODE_TP_SIZE", str(cfg.decode.tp_size)),
      env_value("PREFILL_NUM", str(cfg.prefill.replicas)),
      env_value("DECODE_NUM", str(cfg.decode.replicas)),
      env_value("MODEL_NAME", cfg.model_name),
      env_value("MODEL_PATH", cfg.model_path),
  };
  const json::object npus{{hw.npu_resource, role.npu_num}};
  return json::object{
      {"name", name},
      {"image", role.image},
      {"workingDir", kScriptsMount},
      {"command", json::array{"/bin/bash", "-c"}},
      {"args", json::array{"bash start_server.sh"}},
      {"env", std::move(env)},
      {"resources", json::object{{"limits", npus}, {"requests", npus}}},
      {"volumeMounts",
       json::array{
           json::object{{"name", "model"}, {"mountPath", cfg.model_dir}},
           json::object{{"name", "shared-mem"}, {"mountPath", "/dev/shm"}},
           json::object{{"name", "scripts"}, {"mountPath", kScriptsMount}},
           json::object{{"name", "hccn"}, {"mountPath", "/etc/hccn.conf"}, {"readOnly", true}},
       }},
  };
}

json::object engine_role(const StormConfig& cfg, Role which) {
  const EngineRole& role = cfg.engine(which);
  const std::string name(to_string(which));
  json::object labels = engine_labels(cfg, role);
  json::object annotations = engine_annotations(cfg, which);
  // The profile's node labels (accelerator, accelerator-type), then the user's.
  json::object node_selector;
  append(node_selector, role.hardware->node_selector);
  append(node_selector, role.node_selector);
  json::array volumes{
      host_path_volume("model", cfg.model_dir, "Directory"),
      json::object{{"name", "shared-mem"}, {"emptyDir", json::object{{"medium", "Memory"}}}},
      host_path_volume("scripts", cfg.scripts_dir, "Directory"),
      // HCCL's NIC configuration of the server, needed for cross-pod KV transfer and DP.
      host_path_volume("hccn", "/etc/hccn.conf", "File"),
  };
  json::object pod_spec{
      {"schedulerName", "volcano"},
      // MindCluster: with fault-retry-times, restartPolicy must be Never — the fault handler, not the kubelet,
      // decides whether a failed engine comes back.
      {"restartPolicy", "Never"},
      {"nodeSelector", std::move(node_selector)},
      {"containers", json::array{engine_container(cfg, role, name)}},
      {"volumes", std::move(volumes)},
  };
  return json::object{
      {"name", name},
      {"replicas", role.replicas},
      {"podGroupSize", role.pod_group_size},
      {"stateful", true},  // MindCluster guide: only stateful roles are supported
      {"template",
       json::object{{"metadata", json::object{{"labels", std::move(labels)}, {"annotations", std::move(annotations)}}},
                    {"spec", std::move(pod_spec)}}},
  };
}

json::object routing_role(const StormConfig& cfg) {
  const RoutingRole& role = *cfg.routing;
  json::object metadata;
  if (!role.labels.empty()) {
    json::object labels;
    append(labels, role.labels);
    metadata["labels"] = std::move(labels);
  }
  if (!role.annotations.empty()) {
    json::object annotations;
    append(annotations, role.annotations);
    metadata["annotations"] = std::move(annotations);
  }
  // The env start_proxy.sh reads. The published template sets neither PROXY_PORT nor SERVER_PORT although the
  // script uses both (its listening port and the engines' base port).
  json::array env{
      env_field("POD_IP", "status.podIP"),
      env_value("DISTRIBUTED_DP", bool_text(cfg.distributed_dp)),
      env_value("PREFILL_NUM", str(cfg.prefill.replicas)),
      env_value("PREFILL_POD", str(cfg.prefill.pod_group_size)),
      env_value("PREFILL_DP_SIZE", str(cfg.prefill.dp_size)),
      env_value("DECODE_NUM", str(cfg.decode.replicas)),
      env_value("DECODE_POD", str(cfg.decode.pod_group_size)),
      env_value("DECODE_DP_SIZE", str(cfg.decode.dp_size)),
      env_value("PROXY_PORT", str(role.server_port)),
      env_value("SERVER_PORT", str(kEnginePort)),
  };
  json::object pod_spec;
  if (!role.node_selector.empty()) {
    json::object selector;
    append(selector, role.node_selector);
    pod_spec["nodeSelector"] = std::move(selector);
  }
  // No Volcano and no fault labels: the proxy uses no NPUs, and joining the Volcano PodGroup of the single-pod
  // engine instances would break their schedule_minAvailable count (as in the published template).
  pod_spec["containers"] = json::array{json::object{
      {"name", "router"},
      {"image", role.image},
      {"workingDir", kScriptsMount},
      {"command", json::array{"/bin/bash", "-c"}},
      {"args", json::array{"bash start_proxy.sh"}},
      {"env", std::move(env)},
      {"ports", json::array{json::object{{"name", "http"}, {"containerPort", role.server_port}, {"protocol", "TCP"}}}},
      {"volumeMounts", json::array{json::object{{"name", "scripts"}, {"mountPath", kScriptsMount}}}},
  }};
  pod_spec["volumes"] = json::array{host_path_volume("scripts", cfg.scripts_dir, "Directory")};
  json::object out{{"name", "routing"}, {"replicas", role.replicas}, {"stateful", true}};
  json::object tmpl;
  if (!metadata.empty()) tmpl["metadata"] = std::move(metadata);
  tmpl["spec"] = std::move(pod_spec);
  out["template"] = std::move(tmpl);
  return out;
}

json::object storm_service(const StormConfig& cfg) {
  json::array roles{engine_role(cfg, Role::Prefill), engine_role(cfg, Role::Decode)};
  if (cfg.routing) roles.push_back(routing_role(cfg));
  const json::object app{{"app", cfg.app_name}};
  return json::object{
      {"apiVersion", kApiVersion},
      {"kind", kKind},
      {"metadata",
       json::object{{"name", cfg.app_name},
                    {"namespace", cfg.app_namespace},
                    {"labels", json::object{{kManagedByLabel, kManagedByValue}, {kInstanceLabel, cfg.app_name}}}}},
      {"spec",
       json::object{
           // Pooled mode: one RoleSet whose roles scale independently (MindCluster: spec.replicas stays 1).
           {"replicas", 1},
           {"updateStrategy", json::object{{"type", "InPlaceUpdate"}}},
           {"stateful", true},
           {"selector", json::object{{"matchLabels", app}}},
           {"template", json::object{{"metadata", json::object{{"labels", app}}},
                                     {"spec", json::object{{"roles", std::move(roles)}}}}},
       }},
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading a rendered (or live) StormService back
// ---------------------------------------------------------------------------------------------------------------

[[noreturn]] void malformed(const std::string& field, const std::string& what) {
  throw std::invalid_argument("StormService field " + field + " " + what +
                              " (not a StormService rendered by kubectl-mindie?)");
}

const json::array& roles_of(const json::object& ss) {
  const json::value* v = ss.if_contains("spec");
  if (v && v->is_object()) v = v->get_object().if_contains("template");
  if (v && v->is_object()) v = v->get_object().if_contains("spec");
  if (v && v->is_object()) v = v->get_object().if_contains("roles");
  if (!v || !v->is_array()) malformed("spec.template.spec.roles", "is missing or not a list");
  return v->get_array();
}

// Index of the role named `name`, or nullopt.
std::optional<std::size_t> role_index(const json::object& ss, std::string_view name) {
  const json::array& roles = roles_of(ss);
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const json::value* n = roles[i].is_object() ? roles[i].get_object().if_contains("name") : nullptr;
    if (n && n->is_string() && n->get_string() == name) return i;
  }
  return std::nullopt;
}

std::string role_field(std::size_t i, std::string_view rest) {
  return "spec.template.spec.roles[" + std::to_string(i) + "]" + (rest.empty() ? "" : "." + std::string(rest));
}

// A positive int32 field of role i (replicas, podGroupSize); `fallback` when absent and allowed.
int role_int(const json::object& role, std::size_t i, std::string_view key, std::optional<int> fallback) {
  const json::value* v = role.if_contains(key);
  if (!v) {
    if (fallback) return *fallback;
    malformed(role_field(i, key), "is missing");
  }
  if (!v->is_int64() || v->get_int64() < 0 || v->get_int64() > 0x7fffffff)
    malformed(role_field(i, key), "is not a non-negative integer");
  return static_cast<int>(v->get_int64());
}

const json::object* first_container(const json::object& role) {
  const json::value* v = role.if_contains("template");
  if (v && v->is_object()) v = v->get_object().if_contains("spec");
  if (v && v->is_object()) v = v->get_object().if_contains("containers");
  if (!v || !v->is_array() || v->get_array().empty() || !v->get_array()[0].is_object()) return nullptr;
  return &v->get_array()[0].get_object();
}

// The value of env `name` in the first container of role i.
std::string role_env(const json::object& role, std::size_t i, std::string_view name) {
  const json::object* c = first_container(role);
  const json::value* env = c ? c->if_contains("env") : nullptr;
  if (env && env->is_array())
    for (const auto& e : env->get_array()) {
      if (!e.is_object()) continue;
      const json::value* n = e.get_object().if_contains("name");
      const json::value* val = e.get_object().if_contains("value");
      if (n && n->is_string() && n->get_string() == name && val && val->is_string())
        return std::string(val->get_string());
    }
  malformed(role_field(i, "template.spec.containers[0].env"), "has no " + std::string(name) + " value");
}

int parse_positive(const std::string& text, const std::string& field) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n <= 0) malformed(field, "is not a positive integer");
  return n;
}

std::string metadata_string(const json::object& ss, std::string_view key) {
  const json::value* md = ss.if_contains("metadata");
  const json::value* v = md && md->is_object() ? md->get_object().if_contains(key) : nullptr;
  if (!v || !v->is_string() || v->get_string().empty()) malformed("metadata." + std::string(key), "is missing");
  return std::string(v->get_string());
}

json::object service(const std::string& name, const std::string& ns, const json::object& selector, json::array ports) {
  json::object labels = selector;
  labels[kManagedByLabel] = kManagedByValue;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", json::object{{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", json::object{{"type", "ClusterIP"}, {"selector", selector}, {"ports", std::move(ports)}}},
  };
}

json::object port(std::string_view name, int number) {
  return json::object{{"name", name}, {"port", number}, {"targetPort", number}, {"protocol", "TCP"}};
}

}  // namespace

std::vector<json::object> render_services(const json::object& ss) {
  std::vector<json::object> out;
  if (!role_index(ss, to_string(Role::Routing))) return out;  // only the routing proxy addresses them
  const std::string app = metadata_string(ss, "name");
  const std::string ns = metadata_string(ss, "namespace");
  const json::array& roles = roles_of(ss);
  for (Role which : {Role::Prefill, Role::Decode}) {
    const std::string name(to_string(which));
    const auto i = role_index(ss, name);
    if (!i) malformed("spec.template.spec.roles", "has no role " + name);
    const json::object& role = roles[*i].get_object();
    const int replicas = role_int(role, *i, "replicas", std::nullopt);
    const int group = std::max(1, role_int(role, *i, "podGroupSize", 1));
    const std::string dp_text = role_env(role, *i, "DISTRIBUTED_DP");
    if (dp_text != "true" && dp_text != "false")
      malformed(role_field(*i, "template.spec.containers[0].env"), "has DISTRIBUTED_DP neither true nor false");
    const bool distributed = dp_text == "true";
    const std::string dp_env = env_prefix(which) + "_DP_SIZE";
    const int dp_size = parse_positive(role_env(role, *i, dp_env), role_field(*i, "env " + dp_env));
    const int dp_local = std::max(1, dp_size / group);

    for (int r = 0; r < replicas; ++r) {
      const std::string base = app + "-" + name + "-" + std::to_string(r);
      json::object selector{{kStormServiceNameLabel, app},
                            {kRoleNameLabel, name},
                            {kRoleReplicaIndexLabel, std::to_string(r)}};
      if (!distributed) {
        // One HTTP server per instance: the group's pod 0 (start_server.sh), where the proxy looks for it.
        if (group > 1) selector[kPodGroupIndexLabel] = "0";
        out.push_back(service(group > 1 ? base + "-0" : base, ns, selector, json::array{port("http", kEnginePort)}));
        continue;
      }
      for (int g = 0; g < group; ++g) {
        json::object sel = selector;
        if (group > 1) sel[kPodGroupIndexLabel] = std::to_string(g);
        json::array ports;
        for (int k = 0; k < dp_local; ++k) ports.push_back(port("http-" + std::to_string(k), kEnginePort + k));
        out.push_back(service(group > 1 ? base + "-" + std::to_string(g) : base, ns, sel, std::move(ports)));
      }
    }
  }
  return out;
}

std::vector<json::object> render_storm_service(const StormConfig& cfg) {
  std::vector<json::object> out;
  out.push_back(storm_service(cfg));
  for (auto& s : render_services(out.front())) out.push_back(std::move(s));
  return out;
}

std::string services_selector(std::string_view app) {
  return std::string(kStormServiceNameLabel) + "=" + std::string(app) + "," + kManagedByLabel + "=" + kManagedByValue;
}

std::string pods_selector(std::string_view app) { return std::string(kStormServiceNameLabel) + "=" + std::string(app); }

std::string role_pointer(const json::object& ss, std::string_view role) {
  const auto i = role_index(ss, role);
  if (!i) throw std::invalid_argument("the StormService has no role \"" + std::string(role) + "\"");
  return std::string(kRolesPointer) + "/" + std::to_string(*i);
}

std::string role_replicas_pointer(const json::object& ss, std::string_view role) {
  return role_pointer(ss, role) + "/replicas";
}

std::string role_replicas_pointer(const StormConfig& cfg, Role role) {
  if (role == Role::Routing && !cfg.routing) throw std::invalid_argument("the config has no routing role");
  const int index = role == Role::Prefill ? 0 : role == Role::Decode ? 1 : 2;
  return std::string(kRolesPointer) + "/" + std::to_string(index) + "/replicas";
}

namespace {

/// The JSON Patch of a scale being built, with the object it makes (`after`): each change guarded by a test of the
/// old value and of its role's name (once per role).
struct PatchBuilder {
  const json::array& roles;  ///< the live roles
  json::array& after_roles;  ///< the roles after the scale
  json::array& ops;
  std::vector<std::size_t> guarded;  ///< roles whose name is tested already
  std::vector<std::string> changed;  ///< roles whose pod template changes (restarted)

  void mark_changed(const std::string& name) {
    if (std::find(changed.begin(), changed.end(), name) == changed.end()) changed.push_back(name);
  }
  void guard_name(std::size_t i) {
    if (std::find(guarded.begin(), guarded.end(), i) != guarded.end()) return;
    guarded.push_back(i);
    ops.push_back(json::object{{"op", "test"},
                               {"path", std::string(kRolesPointer) + "/" + std::to_string(i) + "/name"},
                               {"value", roles[i].get_object().at("name")}});
  }
  void replace(std::size_t i, const std::string& pointer, const json::value& old_value, json::value new_value) {
    guard_name(i);
    ops.push_back(json::object{{"op", "test"}, {"path", pointer}, {"value", old_value}});
    ops.push_back(json::object{{"op", "replace"}, {"path", pointer}, {"value", std::move(new_value)}});
  }
};

/// The prefill and decode roles' indices and group shapes after `which` goes to `replicas`, their counts guarded
/// (the new minAvailable values are computed from them: a StormService changed in between must fail the patch
/// rather than receive values computed from stale counts).
std::array<std::size_t, 2> engine_shapes(const json::object& live, PatchBuilder& b, Role which, int replicas,
                                         GroupShape (&shape)[2]) {
  std::array<std::size_t, 2> index{};
  for (Role r : {Role::Prefill, Role::Decode}) {
    const int k = r == Role::Prefill ? 0 : 1;
    const auto i = role_index(live, to_string(r));
    if (!i) malformed("spec.template.spec.roles", "has no role " + std::string(to_string(r)));
    index[k] = *i;
    const json::object& role = b.roles[*i].get_object();
    shape[k] = {role_int(role, *i, "replicas", std::nullopt), std::max(1, role_int(role, *i, "podGroupSize", 1))};
    const std::string base = std::string(kRolesPointer) + "/" + std::to_string(*i);
    b.guard_name(*i);
    if (r != which)
      b.ops.push_back(json::object{{"op", "test"}, {"path", base + "/replicas"}, {"value", role.at("replicas")}});
    if (const json::value* g = role.if_contains("podGroupSize"))
      b.ops.push_back(json::object{{"op", "test"}, {"path", base + "/podGroupSize"}, {"value", *g}});
    if (r == which) shape[k].replicas = replicas;
  }
  return index;
}

/// schedule_minAvailable of the engine roles, recomputed with `which` at `replicas`.
void patch_min_available(const json::object& live, PatchBuilder& b, Role which, int replicas) {
  GroupShape shape[2];
  const std::array<std::size_t, 2> index = engine_shapes(live, b, which, replicas, shape);
  for (Role r : {Role::Prefill, Role::Decode}) {
    const std::size_t i = index[r == Role::Prefill ? 0 : 1];
    const json::value* annotations = nullptr;
    if (const json::value* t = b.roles[i].get_object().if_contains("template"); t && t->is_object())
      if (const json::value* md = t->get_object().if_contains("metadata"); md && md->is_object())
        annotations = md->get_object().if_contains("annotations");
    const json::value* current = annotations && annotations->is_object()
                                     ? annotations->get_object().if_contains(mindcluster::kMinAvailableAnnotation)
                                     : nullptr;
    if (!current || !current->is_string())
      malformed(role_field(i, std::string("template.metadata.annotations[\"") + mindcluster::kMinAvailableAnnotation +
                                  "\"]"),
                "is missing");
    const std::string wanted = std::to_string(min_available(r, shape[0], shape[1]));
    if (current->get_string() == wanted) continue;
    // '/' in the annotation key is escaped as "~1" in a JSON Pointer (RFC 6901).
    const std::string pointer = std::string(kRolesPointer) + "/" + std::to_string(i) +
                                "/template/metadata/annotations/huawei.com~1schedule_minAvailable";
    b.replace(i, pointer, *current, json::string(wanted));
    b.after_roles[i]
        .get_object()["template"]
        .get_object()["metadata"]
        .get_object()["annotations"]
        .get_object()[mindcluster::kMinAvailableAnnotation] = wanted;
    b.mark_changed(std::string(b.roles[i].get_object().at("name").get_string()));
  }
}

/// `env_name` (<ROLE>_NUM) in the containers of role `i`, set to `replicas` (engine ids and the proxy's host lists
/// derive from it).
void patch_role_num_env(PatchBuilder& b, std::size_t i, const std::string& env_name, int replicas) {
  const json::object* role = b.roles[i].is_object() ? &b.roles[i].get_object() : nullptr;
  const json::value* t = role ? role->if_contains("template") : nullptr;
  const json::value* spec = t && t->is_object() ? t->get_object().if_contains("spec") : nullptr;
  const json::value* cs = spec && spec->is_object() ? spec->get_object().if_contains("containers") : nullptr;
  if (!cs || !cs->is_array()) return;
  for (std::size_t c = 0; c < cs->get_array().size(); ++c) {
    const json::value& container = cs->get_array()[c];
    const json::value* env = container.is_object() ? container.get_object().if_contains("env") : nullptr;
    if (!env || !env->is_array()) continue;
    for (std::size_t e = 0; e < env->get_array().size(); ++e) {
      const json::value& entry = env->get_array()[e];
      if (!entry.is_object()) continue;
      const json::value* n = entry.get_object().if_contains("name");
      const json::value* v = entry.get_object().if_contains("value");
      if (!n || !n->is_string() || n->get_string() != env_name || !v) continue;
      const std::string wanted = std::to_string(replicas);
      if (v->is_string() && v->get_string() == wanted) continue;
      const std::string base = std::string(kRolesPointer) + "/" + std::to_string(i) + "/template/spec/containers/" +
                               std::to_string(c) + "/env/" + std::to_string(e);
      // The entry's name is tested too: an env list reordered since it was read must not be patched blindly.
      b.guard_name(i);
      b.ops.push_back(json::object{{"op", "test"}, {"path", base + "/name"}, {"value", env_name}});
      b.replace(i, base + "/value", *v, json::string(wanted));
      b.after_roles[i]
          .get_object()["template"]
          .get_object()["spec"]
          .get_object()["containers"]
          .get_array()[c]
          .get_object()["env"]
          .get_array()[e]
          .get_object()["value"] = wanted;
      if (const json::value* rn = role->if_contains("name"); rn && rn->is_string())
        b.mark_changed(std::string(rn->get_string()));
    }
  }
}

}  // namespace

ScalePlan plan_scale(const json::object& live, std::string_view role_name, int replicas) {
  const auto which = role_from_string(role_name);
  if (!which)
    throw std::invalid_argument("unknown role \"" + std::string(role_name) +
                                "\"; expected prefill, decode "
                                "or routing");
  if (replicas < 1 || replicas > kMaxRoleReplicas)
    throw std::invalid_argument("replicas must be 1.." + std::to_string(kMaxRoleReplicas) + ", got " +
                                std::to_string(replicas));
  const auto target = role_index(live, role_name);
  if (!target) throw std::invalid_argument("the StormService has no role \"" + std::string(role_name) + "\"");
  const json::array& roles = roles_of(live);

  ScalePlan plan;
  plan.from = role_int(roles[*target].get_object(), *target, "replicas", std::nullopt);
  plan.to = replicas;
  if (plan.from == plan.to) {
    plan.services = render_services(live);
    return plan;
  }

  // The object after the scale; the patch is the list of its changes, each guarded by a test of the old value.
  json::object after = live;
  json::array& after_roles =
      after["spec"].get_object()["template"].get_object()["spec"].get_object()["roles"].get_array();
  PatchBuilder b{roles, after_roles, plan.patch, {}, {}};
  const std::string target_pointer = std::string(kRolesPointer) + "/" + std::to_string(*target);
  b.replace(*target, target_pointer + "/replicas", plan.from, replicas);
  after_roles[*target].get_object()["replicas"] = replicas;
  if (*which != Role::Routing) {
    patch_min_available(live, b, *which, replicas);
    // <ROLE>_NUM in every container of every role.
    for (std::size_t i = 0; i < roles.size(); ++i) patch_role_num_env(b, i, env_prefix(*which) + "_NUM", replicas);
  }

  // Report in role order.
  for (const auto& r : roles)
    if (const json::value* n = r.is_object() ? r.get_object().if_contains("name") : nullptr; n && n->is_string())
      if (std::find(b.changed.begin(), b.changed.end(), n->get_string()) != b.changed.end())
        plan.restarted_roles.emplace_back(n->get_string());
  plan.services = render_services(after);
  return plan;
}

json::array template_change_ops(const json::object& live, const std::vector<std::string>& roles, std::int64_t at) {
  json::array names;
  for (const auto& r : roles) names.emplace_back(r);
  const std::string value =
      json::serialize(json::object{{"at", util::utc_text(at, "%Y-%m-%dT%H:%M:%SZ")}, {"roles", std::move(names)}});
  const json::value* md = live.if_contains("metadata");
  const json::value* annotations = md && md->is_object() ? md->get_object().if_contains("annotations") : nullptr;
  if (annotations && annotations->is_object())  // RFC 6901: "/" in a key is "~1"
    return {json::object{
        {"op", "add"}, {"path", "/metadata/annotations/kubectl-mindie~1template-change"}, {"value", value}}};
  return {json::object{
      {"op", "add"}, {"path", "/metadata/annotations"}, {"value", json::object{{kTemplateChangeAnnotation, value}}}}};
}

std::optional<TemplateChange> read_template_change(const json::object& storm_service) {
  const json::value ss = storm_service;
  const json::value* text = util::find(&ss, {"metadata", "annotations", kTemplateChangeAnnotation});
  if (!text || !text->is_string()) return std::nullopt;
  json::error_code ec;
  const json::value v = json::parse(text->get_string(), ec);
  const json::value* at = ec ? nullptr : util::find(&v, {"at"});
  const json::value* roles = ec ? nullptr : util::find(&v, {"roles"});
  if (!at || !at->is_string() || !roles || !roles->is_array()) return std::nullopt;
  const auto seconds = util::parse_rfc3339(std::string(at->get_string()));
  if (!seconds) return std::nullopt;
  TemplateChange change{*seconds, {}};
  for (const auto& r : roles->get_array())
    if (r.is_string()) change.roles.emplace_back(r.get_string());
  return change;
}

}  // namespace mindie::aibrix
