// Parsing and validation of a stormservice file. As with user_config.json, every rule is checked and every problem
// collected before anything is thrown, so an operator fixes the file in one round.
#include "aibrix/storm_config.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "kube/names.h"
#include "util/json_path.h"
#include "util/strings.h"
#include "util/yaml_json.h"
#include "validation/json_document.h"
#include "validation/reader.h"

namespace mindie::aibrix {
namespace json = boost::json;
using hardware::HardwareProfile;
using util::child_path;
using validation::Reader;
using validation::ValidationError;

std::string_view to_string(Role r) {
  switch (r) {
    case Role::Prefill: return "prefill";
    case Role::Decode: return "decode";
    case Role::Routing: return "routing";
  }
  return "prefill";
}

std::optional<Role> role_from_string(std::string_view s) {
  for (auto r : {Role::Prefill, Role::Decode, Role::Routing})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

const EngineRole& StormConfig::engine(Role r) const {
  if (r == Role::Prefill) return prefill;
  if (r == Role::Decode) return decode;
  throw std::invalid_argument("the routing role is not an engine role");
}
EngineRole& StormConfig::engine(Role r) {
  return const_cast<EngineRole&>(static_cast<const StormConfig&>(*this).engine(r));
}

int min_available(Role role, GroupShape prefill, GroupShape decode) {
  if (role == Role::Routing) throw std::invalid_argument("the routing role has no schedule_minAvailable");
  const GroupShape& own = role == Role::Prefill ? prefill : decode;
  const GroupShape& other = role == Role::Prefill ? decode : prefill;
  if (own.pod_group_size > 1) return own.pod_group_size;  // (a) one PodGroup per instance
  if (other.pod_group_size > 1) return own.replicas;      // (b) the shared PodGroup holds this role only
  return prefill.replicas + decode.replicas;              // (c) both roles share one PodGroup
}

int min_available(const StormConfig& cfg, Role role) {
  return min_available(role, {cfg.prefill.replicas, cfg.prefill.pod_group_size},
                       {cfg.decode.replicas, cfg.decode.pod_group_size});
}

namespace {

std::string quoted(std::string_view s) { return json::serialize(json::string(s)); }

// "/mnt/models/" and "/mnt/models" name the same directory; keep one spelling for mounts and prefix checks.
std::optional<std::string> directory(std::optional<std::string> path) {
  if (path)
    while (path->size() > 1 && path->back() == '/') path->pop_back();
  return path;
}

// ---------------------------------------------------------------------------------------------------------------
// Keys set by kubectl-mindie or by the AIBrix controller
// ---------------------------------------------------------------------------------------------------------------

// Pod labels the AIBrix controller writes on every pod of a StormService (pkg/controller/constants of
// vllm-project/aibrix, and the pod-group-index / role-replica-index labels its gateway reads).
constexpr std::array<std::string_view, 5> kAibrixPodLabels = {"storm-service-name", "storm-service-revision",
                                                              "roleset-name", "role-name", "role-template-hash"};
constexpr std::string_view kAibrixPrefix = "stormservice.orchestration.aibrix.ai/";

// What sets `key` on the pods of an engine role on hardware `hw` (nullopt: nothing). `kind` is label or annotation.
std::optional<std::string> engine_owner(std::string_view key, Reader::MapKind kind, const HardwareProfile* hw) {
  if (kind == Reader::MapKind::Labels) {
    if (key == "model.aibrix.ai/name") return "the label kubectl-mindie sets from storm_service.model_name";
    if (key == "model.aibrix.ai/port")
      return "the label kubectl-mindie sets to the engine port " + std::to_string(kEnginePort);
    if (key == "model.aibrix.ai/engine") return "the label kubectl-mindie sets to \"vllm\"";
    if (key == "fault-scheduling") return "the label kubectl-mindie sets from storm_service.fault_scheduling";
    if (key == "fault-retry-times") return "the label kubectl-mindie sets from storm_service.fault_retry_times";
    if (key == "pod-rescheduling")
      return "the label kubectl-mindie manages (\"on\" exactly when podGroupSize is 1, as MindCluster requires)";
  } else if (kind == Reader::MapKind::Annotations) {
    if (key == "huawei.com/schedule_minAvailable")
      return "the annotation kubectl-mindie computes from replicas and podGroupSize of both roles";
    if (key == "huawei.com/recover_policy_path")
      return "the annotation kubectl-mindie sets to \"pod\" when podGroupSize is 1";
    if (key == "huawei.com/schedule_policy" && hw && !hw->schedule_policy.empty())
      return "the annotation kubectl-mindie sets from hardware_type " + hw->name + " (" + quoted(hw->schedule_policy) +
             ")";
    if (key == "sp-block" && hw) {
      if (hw->sp_block.pod_template == hardware::SpBlockRule::PerPod)
        return "the annotation kubectl-mindie sets from hardware_type " + hw->name + " (npu_num: NPUs per pod)";
      if (hw->sp_block.pod_template == hardware::SpBlockRule::PerInstance)
        return "the annotation kubectl-mindie sets from hardware_type " + hw->name +
               " (podGroupSize × npu_num: an instance stays in one SuperPoD)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> aibrix_owner(std::string_view key) {
  if (std::find(kAibrixPodLabels.begin(), kAibrixPodLabels.end(), key) != kAibrixPodLabels.end() ||
      key.starts_with(kAibrixPrefix))
    return "a key the AIBrix controller sets on every pod of the StormService";
  return std::nullopt;
}

// Reports every key of `map` that kubectl-mindie (engine roles on `hw`; hw is null for routing) or the AIBrix
// controller sets.
void check_reserved(Reader& r, const StringMap& map, const std::string& map_path, Reader::MapKind kind, bool engine,
                    const HardwareProfile* hw) {
  for (const auto& [key, value] : map) {
    std::optional<std::string> owner = engine ? engine_owner(key, kind, hw) : std::nullopt;
    if (engine && kind == Reader::MapKind::NodeSelector && hw)
      for (const auto& [k, v] : hw->node_selector)
        if (k == key)
          owner = "the node selector kubectl-mindie sets from hardware_type " + hw->name + " (" + quoted(v) + ")";
    if (!owner && kind != Reader::MapKind::NodeSelector) owner = aibrix_owner(key);
    if (owner) r.add(child_path(map_path, key), "collides with " + *owner + "; remove it here");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------------------------

const HardwareProfile* read_hardware(Reader& r, const json::object* obj, const std::string& path, bool required) {
  auto name = r.string(obj, path, "hardware_type", required);
  if (!name) return nullptr;
  const HardwareProfile* p = hardware::find_hardware_profile(*name);
  if (!p) {
    const std::string names = util::join(hardware::hardware_profiles(), ", ", &HardwareProfile::name);
    r.add(child_path(path, "hardware_type"), "must be one of " + names + "; got " + quoted(*name));
  }
  return p;
}

// sp-block (MindCluster: NPUs of a logical SuperPoD) is set from the profile where it applies (check_reserved);
// elsewhere it has no meaning and is refused rather than passed on to Volcano.
void check_sp_block(Reader& r, const EngineRole& role, const std::string& path) {
  if (!role.hardware || role.hardware->sp_block.pod_template != hardware::SpBlockRule::None) return;
  for (const auto& [key, value] : role.annotations)
    if (key == "sp-block")
      r.add(child_path(child_path(path, "annotations"), key),
            "applies to hardware with logical SuperPoDs (A3, A5) only; hardware_type " + role.hardware->name +
                " has no logical SuperPoDs");
}

EngineRole read_engine_role(Reader& r, const json::object* ss, const std::string& ss_path, Role which,
                            const HardwareProfile* default_hw) {
  EngineRole role;
  const std::string name(to_string(which));
  const json::object* obj = r.object(ss, ss_path, name, true);
  if (!obj) return role;
  const std::string path = child_path(ss_path, name);
  r.only(obj, path,
         {"replicas", "podGroupSize", "dp_size", "tp_size", "npu_num", "image", "hardware_type", "labels",
          "annotations", "nodeSelector"});

  role.hardware = default_hw;
  if (obj->contains("hardware_type")) role.hardware = read_hardware(r, obj, path, false);
  // Without a known profile the largest one bounds the NPU checks, so the types are still validated.
  int max_npus = 1;
  for (const auto& p : hardware::hardware_profiles()) max_npus = std::max(max_npus, p.max_npus_per_pod);
  if (role.hardware) max_npus = role.hardware->max_npus_per_pod;

  const std::size_t before = r.count();
  if (auto n = r.integer(obj, path, "replicas", 1, kMaxRoleReplicas, false)) role.replicas = *n;
  if (auto n = r.integer(obj, path, "podGroupSize", 1, kMaxPodGroupSize, false)) role.pod_group_size = *n;
  if (auto n = r.integer(obj, path, "dp_size", 1, kMaxDpSize, false)) role.dp_size = *n;
  if (auto n = r.integer(obj, path, "tp_size", 1, max_npus, false)) role.tp_size = *n;
  if (auto n = r.integer(obj, path, "npu_num", 1, max_npus, true)) role.npu_num = *n;
  const bool numbers_ok = r.count() == before;
  if (auto image = r.image(obj, path, "image", true)) role.image = *image;

  // Only when every number read cleanly: a consistency message about a defaulted value would mislead.
  if (numbers_ok) {
    if (role.dp_size % role.pod_group_size != 0) {
      r.add(child_path(path, "dp_size"), "must be a multiple of podGroupSize (" + std::to_string(role.pod_group_size) +
                                             ") so every pod runs the same number of DP ranks; got " +
                                             std::to_string(role.dp_size));
    } else if (role.dp_size_local() * role.tp_size > role.npu_num) {
      r.add(child_path(path, "npu_num"),
            "must be at least (dp_size / podGroupSize) × tp_size = " + std::to_string(role.dp_size_local()) + " × " +
                std::to_string(role.tp_size) + " = " + std::to_string(role.dp_size_local() * role.tp_size) +
                " (each pod runs dp_size/podGroupSize DP ranks of tp_size NPUs); got " + std::to_string(role.npu_num));
    }
  }

  role.labels = r.string_map(obj, path, "labels", Reader::MapKind::Labels);
  role.annotations = r.string_map(obj, path, "annotations", Reader::MapKind::Annotations);
  role.node_selector = r.string_map(obj, path, "nodeSelector", Reader::MapKind::NodeSelector);
  check_reserved(r, role.labels, child_path(path, "labels"), Reader::MapKind::Labels, true, role.hardware);
  check_reserved(r, role.annotations, child_path(path, "annotations"), Reader::MapKind::Annotations, true,
                 role.hardware);
  check_reserved(r, role.node_selector, child_path(path, "nodeSelector"), Reader::MapKind::NodeSelector, true,
                 role.hardware);
  check_sp_block(r, role, path);
  return role;
}

RoutingRole read_routing_role(Reader& r, const json::object* obj, const std::string& path) {
  RoutingRole role;
  r.only(obj, path, {"replicas", "image", "server_port", "labels", "annotations", "nodeSelector"});
  if (auto n = r.integer(obj, path, "replicas", 1, kMaxRoleReplicas, false)) role.replicas = *n;
  if (auto image = r.image(obj, path, "image", true)) role.image = *image;
  if (auto n = r.integer(obj, path, "server_port", 1, 65535, false)) role.server_port = *n;
  role.labels = r.string_map(obj, path, "labels", Reader::MapKind::Labels);
  role.annotations = r.string_map(obj, path, "annotations", Reader::MapKind::Annotations);
  role.node_selector = r.string_map(obj, path, "nodeSelector", Reader::MapKind::NodeSelector);
  check_reserved(r, role.labels, child_path(path, "labels"), Reader::MapKind::Labels, false, nullptr);
  check_reserved(r, role.annotations, child_path(path, "annotations"), Reader::MapKind::Annotations, false, nullptr);
  return role;
}

// The longest per-replica Service name suffix "-<role>-<replica>[-<pod>]" of an engine role, at kMaxRoleReplicas
// (a later scale may go that far; podGroupSize does not change on scale).
std::size_t longest_service_suffix(const EngineRole& role, Role which, bool distributed) {
  std::size_t n = 1 + to_string(which).size() + 1 + std::to_string(kMaxRoleReplicas - 1).size();
  if (role.pod_group_size > 1) n += 1 + (distributed ? std::to_string(role.pod_group_size - 1).size() : 1);
  return n;
}

// app_name (the StormService's name, beginning its Service names) and app_namespace.
void read_app_names(Reader& r, const json::object* doc, StormConfig& cfg) {
  if (auto name = r.string(doc, "", "app_name", true)) {
    if (kube::is_dns1035_label(*name)) cfg.app_name = *name;
    else
      r.add("app_name",
            "must be a DNS-1035 label (it names the StormService and begins its Service names): lower-case letters, "
            "digits and '-', starting with a letter, ending with a letter or digit, at most 63 characters; got " +
                quoted(*name));
  }
  if (auto ns = r.string(doc, "", "app_namespace", false)) {
    if (kube::is_dns1123_label(*ns)) cfg.app_namespace = *ns;
    else
      r.add("app_namespace",
            "must be a DNS-1123 label (a namespace name): lower-case letters, digits and '-', starting and ending "
            "with a letter or digit, at most 63 characters; got " +
                quoted(*ns));
  }
}

// The model: its name (a label value), model_path inside model_dir, scripts_dir.
void read_model(Reader& r, const json::object* ss, const std::string& sp, StormConfig& cfg) {
  if (auto m = r.string(ss, sp, "model_name", true)) {
    if (!m->empty() && kube::is_label_value(*m)) cfg.model_name = *m;
    else
      r.add(sp + ".model_name", "is the model.aibrix.ai/name label, so it must be " +
                                    std::string(kube::kLabelValueRule) + " (and not empty); got " + quoted(*m));
  }
  auto model_path = directory(r.abs_path(ss, sp, "model_path", true));
  if (auto d = directory(r.abs_path(ss, sp, "model_dir", false))) cfg.model_dir = *d;
  if (auto d = directory(r.abs_path(ss, sp, "scripts_dir", false))) cfg.scripts_dir = *d;
  if (model_path) {
    const std::string dir = cfg.model_dir == "/" ? "/" : cfg.model_dir + "/";
    if (*model_path == cfg.model_dir || !model_path->starts_with(dir))
      r.add(sp + ".model_path", "must be inside model_dir " + quoted(cfg.model_dir) +
                                    " (the only host directory mounted into the engine pods); got " +
                                    quoted(*model_path));
    else cfg.model_path = *model_path;
  }
}

// distributed_dp, fault_scheduling, fault_retry_times. Returns false when distributed_dp is malformed.
bool read_scheduling(Reader& r, const json::object* ss, const std::string& sp, StormConfig& cfg) {
  bool distributed_dp_ok = true;
  if (const json::value* v = ss ? ss->if_contains("distributed_dp") : nullptr) {
    if (v->is_bool()) {
      cfg.distributed_dp = v->get_bool();
    } else if (v->is_string() && (v->get_string() == "true" || v->get_string() == "false")) {
      cfg.distributed_dp = v->get_string() == "true";
    } else {
      r.add(sp + ".distributed_dp", "must be true or false, got " + r.describe(*v));
      distributed_dp_ok = false;
    }
  }
  if (auto f = r.string(ss, sp, "fault_scheduling", false)) {
    if (*f == "force") cfg.fault_scheduling = FaultScheduling::Force;
    else if (*f == "grace") cfg.fault_scheduling = FaultScheduling::Grace;
    else r.add(sp + ".fault_scheduling", "must be force or grace; got " + quoted(*f));
  }
  if (auto n = r.integer(ss, sp, "fault_retry_times", 0, kMaxFaultRetryTimes, false)) cfg.fault_retry_times = *n;
  return distributed_dp_ok;
}

// With distributed_dp on: a routing role, and dp_size above 1 in prefill and decode.
void check_distributed_dp(Reader& r, const json::object& ss, const std::string& sp, const StormConfig& cfg) {
  const bool explicit_dp = ss.contains("distributed_dp");
  const std::string why = explicit_dp ? "distributed_dp is true" : "distributed_dp defaults to true";
  if (!ss.contains("routing"))
    r.add(sp + ".routing", "is required when " + why +
                               " (the routing proxy spreads requests over the DP ranks); add it or set "
                               "distributed_dp: false");
  for (Role which : {Role::Prefill, Role::Decode}) {
    const std::string role_path = child_path(sp, to_string(which));
    const json::value* role = ss.if_contains(to_string(which));
    const json::value* dp = role && role->is_object() ? role->get_object().if_contains("dp_size") : nullptr;
    // Report only when dp_size is absent or a clean 1; a malformed dp_size is already reported.
    if (cfg.engine(which).dp_size == 1 && (!dp || (dp->is_int64() && dp->get_int64() == 1)) && role &&
        role->is_object())
      r.add(role_path + ".dp_size",
            "must be greater than 1 when " + why + " (MindCluster: with dp_size 1, distributed_dp can only be false)");
  }
}

// Service names "<app_name>-<role>-<replica>[-<pod>]" exist when a routing role consumes them: they must fit.
void check_service_names(Reader& r, const StormConfig& cfg) {
  if (!cfg.routing || cfg.app_name.empty()) return;
  const std::size_t suffix = std::max(longest_service_suffix(cfg.prefill, Role::Prefill, cfg.distributed_dp),
                                      longest_service_suffix(cfg.decode, Role::Decode, cfg.distributed_dp));
  if (cfg.app_name.size() + suffix > 63)
    r.add("app_name", "must be at most " + std::to_string(63 - suffix) +
                          " characters: the per-replica Service names \"<app_name>-<role>-<replica>[-<pod>]\" must "
                          "fit 63 characters up to " +
                          std::to_string(kMaxRoleReplicas) + " replicas; got " + std::to_string(cfg.app_name.size()));
}

}  // namespace

StormConfig parse_storm_config(std::string raw, std::string_view source) {
  const std::string src(source);
  json::value parsed;
  try {
    parsed = util::yaml_to_json(raw, src);
  } catch (const util::YamlError& e) {
    throw ValidationError(src, {{"", validation::yaml_syntax_message(e.what(), source)}});
  }
  Reader r(validation::Notation::Yaml);
  if (!parsed.is_object())
    throw ValidationError(src, {{"", "must be a mapping (YAML) or object (JSON), got " + r.describe(parsed)}});

  StormConfig cfg;
  cfg.raw = std::move(raw);
  cfg.doc = std::move(parsed.get_object());
  const json::object* doc = &cfg.doc;
  r.only(doc, "", {"app_name", "app_namespace", "storm_service"});

  read_app_names(r, doc, cfg);

  const std::string sp = "storm_service";
  const json::object* ss = r.object(doc, "", sp, true);
  r.only(ss, sp,
         {"model_name", "model_path", "model_dir", "scripts_dir", "hardware_type", "distributed_dp", "fault_scheduling",
          "fault_retry_times", "prefill", "decode", "routing"});

  read_model(r, ss, sp, cfg);

  cfg.hardware = read_hardware(r, ss, sp, true);

  const bool distributed_dp_ok = read_scheduling(r, ss, sp, cfg);

  cfg.prefill = read_engine_role(r, ss, sp, Role::Prefill, cfg.hardware);
  cfg.decode = read_engine_role(r, ss, sp, Role::Decode, cfg.hardware);
  if (const json::object* routing = r.object(ss, sp, "routing", false))
    cfg.routing = read_routing_role(r, routing, sp + ".routing");

  if (ss && cfg.distributed_dp && distributed_dp_ok) check_distributed_dp(r, *ss, sp, cfg);

  check_service_names(r, cfg);

  r.throw_if_any(src);
  return cfg;
}

}  // namespace mindie::aibrix
