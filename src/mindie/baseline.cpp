#include "mindie/baseline.h"

#include <algorithm>
#include <vector>

#include "kube/names.h"
#include "mindie/render.h"
#include "util/digest.h"
#include "util/json_path.h"
#include "validation/problem.h"

namespace mindie::baseline {

namespace json = boost::json;

std::string data_digest(const json::object& data) {
  std::vector<std::pair<std::string_view, std::string>> entries;
  for (const auto& [k, v] : data)
    entries.emplace_back(k, v.is_string() ? std::string(v.get_string()) : json::serialize(v));
  std::sort(entries.begin(), entries.end());
  std::string all;
  for (const auto& [k, v] : entries) {
    all.append(k).push_back('\0');
    all.append(v).push_back('\0');
  }
  return util::sha256_hex(all);
}

std::string data_digest(const json::object& data, const std::vector<std::string>& keys) {
  json::object picked;
  std::string absent;
  for (const auto& k : keys) {
    if (const auto* v = data.if_contains(k)) picked[k] = *v;
    else absent.append(k).push_back('\0');
  }
  // A key missing from `data` must not digest like a key holding "" (or like no key at all).
  return absent.empty() ? data_digest(picked) : util::sha256_hex(data_digest(picked) + '\x01' + absent);
}

Baseline read_baseline(const json::object& cm, const std::string& ns) {
  Baseline b;
  b.where = std::string("configmap/") + kConfigMapName + " in namespace " + ns;
  // Read in place: status calls this on every redraw, and motor-config carries every script.
  const json::value* metadata = cm.if_contains("metadata");
  const auto annotation = [&](const char* key) { return util::str(util::find(metadata, {"annotations", key})); };
  b.recorded_mode = annotation(kDeployModeAnnotation);
  b.recorded_workload = annotation(kWorkloadNameAnnotation);
  b.service_id = annotation(kServiceIdAnnotation);
  const json::value* data = cm.if_contains("data");
  const json::value* raw = data && data->is_object() ? data->as_object().if_contains(kBaselineKey) : nullptr;
  if (!raw || !raw->is_string()) {
    b.problem = b.where + " has no data key " + kBaselineKey +
                ": it is not a kubectl-mindie baseline; redeploy with kubectl mindie deploy";
  } else {
    b.raw = std::string(raw->as_string());
    try {
      b.config = config::parse_user_config(std::string(raw->as_string()), b.where + " key " + kBaselineKey);
    } catch (const validation::ValidationError& e) {
      b.problem = std::string("the baseline is not usable: ") + e.what();
    }
  }
  if (data && data->is_object()) {
    for (const auto& [key, value] : data->as_object()) {
      if (!value.is_string() || key == kBaselineKey) continue;
      if (key == kEnvKey) b.env_raw = std::string(value.as_string());
      else if (key == kOverridesKey) b.overrides_raw = std::string(value.as_string());
      else b.scripts.emplace(std::string(key), std::string(value.as_string()));
    }
  }
  return b;
}

const config::UserConfig& Baseline::user() const {
  if (!config) throw BaselineError(problem);
  return *config;
}

std::string Baseline::deploy_mode() const {
  if (!recorded_mode.empty()) return recorded_mode;
  return std::string(config::to_string(user().deploy_mode));
}

std::string Baseline::deploy_mode_if_known() const {
  return recorded_mode.empty() && !config ? std::string() : deploy_mode();
}

std::string Baseline::workload_name() const {
  if (recorded_workload.empty()) {
    if (!config) {
      throw BaselineError(std::string("configmap/") + kConfigMapName + " holds no usable baseline and no valid " +
                          kWorkloadNameAnnotation +
                          " annotation: nothing says which workload it deployed; "
                          "redeploy with kubectl mindie deploy (" +
                          problem + ")");
    }
    return render::default_service_set_name(*config);
  }
  if (!kube::is_dns1123_label(recorded_workload)) {
    throw BaselineError(std::string("configmap/") + kConfigMapName + " annotation " + kWorkloadNameAnnotation +
                        " is not a valid InferServiceSet name: \"" + recorded_workload + "\"");
  }
  return recorded_workload;
}

bool Baseline::runs_deployments() const { return baseline::runs_deployments(deploy_mode()); }

std::optional<config::EnvConfig> Baseline::env() const {
  if (!env_raw) return std::nullopt;
  return config::parse_env_config(*env_raw, std::string("configmap/") + kConfigMapName + " " + kEnvKey);
}

bool runs_deployments(std::string_view mode) {
  return mode == config::to_string(config::DeployMode::MultiDeployment) ||
         mode == config::to_string(config::DeployMode::SingleContainer);
}

}  // namespace mindie::baseline
