#include "mindie/baseline_policy.h"

#include <algorithm>
#include <set>

#include "util/json_diff.h"
#include "util/json_path.h"

namespace mindie::policy {

namespace json = boost::json;

const std::vector<std::string>& update_config_whitelist() {
  static const std::vector<std::string> paths = {
      "motor_deploy_config.tls_config.north_tls_config.enable_tls",
      "motor_deploy_config.tls_config.north_tls_config.ca_file",
      "motor_deploy_config.tls_config.north_tls_config.cert_file",
      "motor_deploy_config.tls_config.north_tls_config.key_file",
      "motor_deploy_config.tls_config.north_tls_config.passwd_file",
      "motor_deploy_config.tls_config.north_tls_config.crl_file",
      "north_config.name",
      "north_config.ip",
      "north_config.port",
      "motor_controller_config.logging_config.log_level",
      "motor_controller_config.observability_config.observability_enable",
      "motor_controller_config.observability_config.metrics_ttl",
      "motor_coordinator_config.logging_config.log_level",
      "motor_coordinator_config.exception_config.max_retry",
      "motor_coordinator_config.exception_config.retry_delay",
      "motor_coordinator_config.exception_config.first_token_timeout",
      "motor_coordinator_config.exception_config.infer_timeout",
      "motor_coordinator_config.timeout_config.request_timeout",
      "motor_coordinator_config.timeout_config.connection_timeout",
      "motor_coordinator_config.timeout_config.read_timeout",
      "motor_coordinator_config.timeout_config.write_timeout",
      "motor_coordinator_config.timeout_config.keep_alive_timeout",
      "motor_nodemanger_config.logging_config.log_level",
  };
  return paths;
}

namespace {

/// True when `path` equals `base` or lies below it ("a.b" covers "a.b.c" and "a.b[0]").
bool covers(const std::string& base, const std::string& path) {
  if (path.size() < base.size() || path.compare(0, base.size(), base) != 0) return false;
  return path.size() == base.size() || path[base.size()] == '.' || path[base.size()] == '[';
}

/// The value at `path` (util::child_path syntax) below `root`, found by building each member's path the same way,
/// or nullptr (array elements are not descended: a changed list is refused as a whole).
const json::value* at_path(const json::value& root, const std::string& path, const std::string& here = "") {
  if (here == path) return &root;
  const auto* obj = root.if_object();
  if (!obj) return nullptr;
  for (const auto& kv : *obj) {
    const std::string p = util::child_path(here, kv.key());
    if (path == p || path.starts_with(p + ".") || path.starts_with(p + "["))
      if (const json::value* found = at_path(kv.value(), path, p)) return found;
  }
  return nullptr;
}

/// Every leaf path below `v` (objects descended; arrays and scalars are leaves), in util::child_path syntax, so
/// that a key holding a dot cannot read as a whitelisted path.
void leaf_paths(const json::value& v, const std::string& prefix, std::vector<std::string>& out) {
  if (const auto* obj = v.if_object(); obj && !obj->empty()) {
    for (const auto& kv : *obj) leaf_paths(kv.value(), util::child_path(prefix, kv.key()), out);
    return;
  }
  out.push_back(prefix);
}

/// The value at `path` below `root`, descending objects and arrays (util::child_path and util::item_path syntax), or
/// nullptr.
const json::value* value_at(const json::value& root, const std::string& path, const std::string& here = "") {
  if (here == path) return &root;
  const auto below = [&](const json::value& v, const std::string& p) -> const json::value* {
    if (path == p || path.starts_with(p + ".") || path.starts_with(p + "[")) return value_at(v, path, p);
    return nullptr;
  };
  if (const auto* obj = root.if_object())
    for (const auto& kv : *obj)
      if (const json::value* found = below(kv.value(), util::child_path(here, kv.key()))) return found;
  if (const auto* arr = root.if_array())
    for (std::size_t i = 0; i < arr->size(); ++i)
      if (const json::value* found = below((*arr)[i], util::item_path(here, i))) return found;
  return nullptr;
}

Applier applier_of(const std::string& path) {
  for (const char* count : {kPrefillInstancesPath, kDecodeInstancesPath, kHybridInstancesPath, kEncodeInstancesPath})
    if (path == count) return Applier::Scale;
  for (const auto& allowed : update_config_whitelist())
    if (covers(allowed, path)) return Applier::UpdateConfig;
  // deploy refuses a new deploy_mode, and job_id is the namespace: both make another deployment.
  if (covers("motor_deploy_config.deploy_mode", path) || covers("motor_deploy_config.job_id", path))
    return Applier::Redeploy;
  return Applier::DeployRollout;
}

}  // namespace

const char* applier_text(Applier a) {
  switch (a) {
    case Applier::Scale: return "scale";
    case Applier::UpdateConfig: return "update-config";
    case Applier::DeployRollout: return "deploy + rollout restart";
    case Applier::Redeploy: return "delete + deploy";
  }
  return "";
}

std::vector<BaselineChange> baseline_changes(const json::value& baseline_doc, const json::value& proposed_doc) {
  const json::value baseline = comparable(baseline_doc);
  const json::value proposed = comparable(proposed_doc);
  std::vector<BaselineChange> out;
  for (const auto& path : util::diff_paths(baseline, proposed)) {
    BaselineChange c{path, std::nullopt, std::nullopt, applier_of(path)};
    if (const json::value* v = value_at(baseline, path)) c.from = *v;
    if (const json::value* v = value_at(proposed, path)) c.to = *v;
    out.push_back(std::move(c));
  }
  return out;
}

json::value comparable(const json::value& doc) {
  json::value out = doc;
  json::object* root = out.if_object();
  if (!root) return out;
  if (json::value* deploy = root->if_contains("motor_deploy_config"); deploy && deploy->is_object()) {
    json::object& d = deploy->get_object();
    if (!d.contains("deploy_mode")) d["deploy_mode"] = config::to_string(config::DeployMode::InferServiceSet);
  }
  if (json::value* pool = root->if_contains("kv_cache_pool_config"); pool && pool->is_object()) {
    json::object& p = pool->get_object();
    for (auto [key, injected] : {std::pair{"port", 50088}, std::pair{"default_kv_lease_ttl", 11000}})
      if (const json::value* v = p.if_contains(key); v && v->is_int64() && v->get_int64() == injected) p.erase(key);
  }
  return out;
}

std::vector<std::string> disallowed_changes(const json::value& baseline_doc, const json::value& proposed_doc,
                                            const std::vector<std::string>& allowed) {
  const json::value baseline = comparable(baseline_doc);
  const json::value proposed = comparable(proposed_doc);
  std::set<std::string> bad;
  const auto is_allowed = [&](const std::string& p) {
    return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return covers(a, p); });
  };
  for (const auto& path : util::diff_paths(baseline, proposed)) {
    if (is_allowed(path)) continue;
    // A section present on one side only: allowed when everything it holds is allowed.
    std::vector<std::string> leaves;
    for (const json::value* side : {at_path(baseline, path), at_path(proposed, path)}) {
      if (side) leaf_paths(*side, path, leaves);
    }
    const bool parent_of_allowed = std::any_of(allowed.begin(), allowed.end(),
                                               [&](const std::string& a) { return covers(path, a); });
    if (parent_of_allowed && !leaves.empty() && std::all_of(leaves.begin(), leaves.end(), is_allowed)) continue;
    bad.insert(path);
  }
  return {bad.begin(), bad.end()};
}

std::vector<std::string> update_config_refusals(const config::UserConfig& base, const config::UserConfig& proposed,
                                                const std::string& mode) {
  std::vector<std::string> out;
  const std::string new_mode(config::to_string(proposed.deploy_mode));
  if (mode != new_mode)
    out.push_back("motor_deploy_config.deploy_mode cannot change after deploy: the baseline has " + mode +
                  ", the config has " + new_mode + "; delete the deployment and deploy again");
  // Where counts differ, the way out depends on what scale can do for this deployment.
  if (proposed.hybrid() != base.hybrid())
    out.push_back(std::string("update-config cannot switch between PD-hybrid (hybrid_instances_num) and prefill/"
                              "decode instances: the baseline ") +
                  (base.hybrid() ? "runs PD-hybrid" : "runs prefill/decode instances") +
                  "; redeploy with kubectl mindie deploy to change the workload");
  const bool single = mode == config::to_string(config::DeployMode::SingleContainer);
  if (proposed.p_instances != base.p_instances || proposed.d_instances != base.d_instances)
    out.push_back("instance counts cannot change with update-config: the baseline has " +
                  std::to_string(base.p_instances) + " prefill / " + std::to_string(base.d_instances) +
                  " decode, the config has " + std::to_string(proposed.p_instances) + " / " +
                  std::to_string(proposed.d_instances) +
                  (single ? "; single_container runs one pod and cannot be scaled: keep the baseline's counts"
                          : "; use kubectl mindie scale"));
  if (proposed.hybrid_instances != base.hybrid_instances)
    out.push_back("instance counts cannot change with update-config: the baseline has " +
                  std::to_string(base.hybrid_instances) +
                  " PD-hybrid instances (hybrid_instances_num), the config has " +
                  std::to_string(proposed.hybrid_instances) + "; use kubectl mindie scale --hybrid");
  if (proposed.e_instances != base.e_instances || proposed.encode != base.encode)
    out.push_back("encode instances cannot change with update-config: the baseline has " +
                  std::to_string(base.e_instances) + " (motor_deploy_config.e_instances_num), the config has " +
                  std::to_string(proposed.e_instances) +
                  (base.encode && proposed.encode ? "; use kubectl mindie scale --encode"
                                                  : "; adding or removing the key needs a redeploy"));
  // The counts and the mode are refused above, with their own way out.
  auto bad = policy::disallowed_changes(base.doc, proposed.doc, policy::update_config_whitelist());
  std::erase_if(bad, [](const std::string& p) {
    return p == kPrefillInstancesPath || p == kDecodeInstancesPath || p == kHybridInstancesPath ||
           p == kEncodeInstancesPath || p == "motor_deploy_config.deploy_mode";
  });
  if (!bad.empty()) {
    std::string msg = "update-config may not change these paths (they need a redeploy):";
    for (const auto& p : bad) msg += "\n* " + p;
    out.push_back(msg);
  }
  return out;
}

}  // namespace mindie::policy
