#include "mindie/baseline_policy.h"

#include <algorithm>
#include <set>

#include "util/json_diff.h"

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

const json::value* at_path(const json::value& root, const std::string& path) {
  const json::value* cur = &root;
  std::size_t start = 0;
  while (start <= path.size() && cur) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const auto* obj = cur->if_object();
    cur = obj ? obj->if_contains(key) : nullptr;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

/// Every leaf path below `v` (objects descended; arrays and scalars are leaves).
void leaf_paths(const json::value& v, const std::string& prefix, std::vector<std::string>& out) {
  if (const auto* obj = v.if_object(); obj && !obj->empty()) {
    for (const auto& kv : *obj) leaf_paths(kv.value(), prefix + "." + std::string(kv.key()), out);
    return;
  }
  out.push_back(prefix);
}

}  // namespace

std::vector<std::string> disallowed_changes(const json::value& baseline, const json::value& proposed,
                                            const std::vector<std::string>& allowed) {
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
    const bool parent_of_allowed =
        std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return covers(path, a); });
    if (parent_of_allowed && !leaves.empty() && std::all_of(leaves.begin(), leaves.end(), is_allowed)) continue;
    bad.insert(path);
  }
  return {bad.begin(), bad.end()};
}

}  // namespace mindie::policy
