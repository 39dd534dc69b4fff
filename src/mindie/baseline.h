// The baseline: what deploy records on the motor-config ConfigMap (deploy.py's name) for every later command to
// read without local files — user_config.json byte for byte, env.json, the overrides, the deploy mode, the workload
// name and the SERVICE_ID — read in one place. Pure: a ConfigMap object in, a Baseline out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mindie/config.h"
#include "mindie/env_config.h"

namespace mindie::baseline {

/// Name of the ConfigMap that holds the baseline (deploy.py's name).
inline constexpr const char* kConfigMapName = "motor-config";
/// ConfigMap key holding the baseline user_config.json, byte for byte.
inline constexpr const char* kBaselineKey = "user_config.json";
/// ConfigMap key holding env.json byte for byte (deploy.py stores it too).
inline constexpr const char* kEnvKey = "env.json";
/// ConfigMap key holding the deploy --overrides file byte for byte, so later deploys reuse it without local files.
inline constexpr const char* kOverridesKey = "overrides.yaml";
/// Annotations on the ConfigMap recording what later commands need without local files.
inline constexpr const char* kDeployModeAnnotation = "kubectl-mindie/deploy-mode";
inline constexpr const char* kWorkloadNameAnnotation = "kubectl-mindie/infer-service-set";
/// Annotation keeping the SERVICE_ID generated at the first deploy (issue 3: stable across re-renders).
inline constexpr const char* kServiceIdAnnotation = "kubectl-mindie/service-id";

/// The baseline cannot give what was asked: no user_config.json key, a file that fails validation, or a recorded
/// workload name that is not a DNS-1123 label. The message names the ConfigMap and says how to recover.
class BaselineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What motor-config records. Reading never fails: what is unusable is kept as a problem, and the accessors that
/// need it throw BaselineError, so that status can still show what runs under a hand-broken baseline.
struct Baseline {
  std::string where;                         ///< "configmap/motor-config in namespace NS", for messages
  std::optional<std::string> raw;            ///< data[kBaselineKey] as stored, when it is a string
  std::optional<config::UserConfig> config;  ///< the parsed user_config.json; nullopt when unusable
  std::string problem;                       ///< why `config` is nullopt ("" when it parsed)
  std::string recorded_mode;                 ///< kDeployModeAnnotation as written ("" when absent)
  std::string recorded_workload;             ///< kWorkloadNameAnnotation as written ("" when absent)
  std::string service_id;                    ///< kServiceIdAnnotation ("" when absent)
  std::optional<std::string> env_raw;        ///< data[kEnvKey] when present
  std::optional<std::string> overrides_raw;  ///< data[kOverridesKey] when present
  /// Every other string data key (the scripts deploy stored, env_functions.sh included), byte for byte.
  std::map<std::string, std::string> scripts;

  /// The baseline user config. Throws BaselineError with `problem`.
  const config::UserConfig& user() const;
  /// The deploy mode: the annotation, else the baseline's deploy_mode. Throws BaselineError when neither exists.
  std::string deploy_mode() const;
  /// deploy_mode(), or "" when neither the annotation nor a usable baseline says it (status shows what runs anyway).
  std::string deploy_mode_if_known() const;
  /// The workload name (the InferServiceSet in infer_service_set mode): the annotation, else the default for the
  /// baseline (render::default_service_set_name). Throws BaselineError when the annotation is not a DNS-1123 label
  /// (a hand edit must never reach a request path) or when there is neither an annotation nor a usable baseline.
  std::string workload_name() const;
  /// True when deploy_mode() runs plain Deployments (runs_deployments). Throws as deploy_mode().
  bool runs_deployments() const;
  /// env.json as stored, parsed (nullopt when not stored). Throws validation::ValidationError naming the key.
  std::optional<config::EnvConfig> env() const;
};

/// The digest of a ConfigMap's `data` (an object of strings; other values count by their JSON text): SHA-256 over
/// the keys in order, each "key NUL value NUL", so key order and JSON formatting do not matter. deploy records the
/// digest of the motor-config it is about to write in its intent, and the next command compares it with the live
/// one to tell whether that write happened.
std::string data_digest(const boost::json::object& data);
/// data_digest over `keys` of `data` only (a key absent counts as absent, not as empty): what one writer's keys hold,
/// whatever keys other field managers added to the ConfigMap.
std::string data_digest(const boost::json::object& data, const std::vector<std::string>& keys);

/// Reads motor-config `config_map` of namespace `ns`. Never throws.
Baseline read_baseline(const boost::json::object& config_map, const std::string& ns);

/// True for the deploy modes whose workload is plain Deployments found by label (multi_deployment,
/// single_container) rather than an InferServiceSet.
bool runs_deployments(std::string_view deploy_mode);

}  // namespace mindie::baseline
