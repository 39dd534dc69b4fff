// Renders the Kubernetes objects of a MindIE deployment from the config model and the built-in templates under
// manifests/ (embedded at build time). Pure: objects in, objects out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <string>
#include <vector>

#include <optional>

#include "mindie/config.h"
#include "mindie/overrides.h"

namespace mindie::render {

/// Name of the ConfigMap that holds the baseline (deploy.py's name).
inline constexpr const char* kConfigMapName = "motor-config";
/// ConfigMap key holding the baseline user_config.json, byte for byte.
inline constexpr const char* kBaselineKey = "user_config.json";
inline constexpr const char* kEnvKey = "env.json";
/// ConfigMap key holding the deploy --overrides file byte for byte, so later deploys reuse it without local files.
inline constexpr const char* kOverridesKey = "overrides.yaml";
/// Role label that makes infer-operator create a Volcano PodGroup per instance (infer-operator's MindIE guide).
inline constexpr const char* kGangScheduleLabel = "infer.huawei.com/gang-schedule";
/// Annotations on the ConfigMap recording what later commands need without local files.
inline constexpr const char* kDeployModeAnnotation = "kubectl-mindie/deploy-mode";
inline constexpr const char* kWorkloadNameAnnotation = "kubectl-mindie/infer-service-set";
/// Field manager for every write.
inline constexpr const char* kFieldManager = "kubectl-mindie";

/// Names of the role service entries (the first part of the operator's Service names; the runtime only sees the
/// resulting addresses, so they are kept short to leave room for the InferServiceSet name).
inline constexpr const char* kControllerService = "controller";    ///< controller role, port 1026
inline constexpr const char* kCoordinatorService = "coordinator";  ///< coordinator role, management port 1026
inline constexpr const char* kCoordinatorInferService = "infer";   ///< coordinator role, inference port 1025
inline constexpr const char* kKvPoolService = "kvp-master";        ///< kv-pool role, kv_cache_pool_config.port
inline constexpr const char* kKvConductorService = "kv-conductor"; ///< kv-conductor role, http_server_port

/// Choices that are not part of user_config.json.
struct RenderOptions {
  std::string service_set_name;  ///< InferServiceSet name; empty = default_service_set_name(cfg)
  /// Extra ConfigMap files (startup/probe scripts from --scripts-dir): key -> content.
  std::map<std::string, std::string> scripts;
  /// Operator changes to the pod templates (deploy --overrides); stored in the ConfigMap under kOverridesKey.
  std::optional<overrides::Overrides> overrides;
};

/// Problems with an InferServiceSet name (path "metadata.name"): it must be a DNS-1123 label, and every name the
/// operator derives from it (role Services "<service>-<iss>-0-<role>", StatefulSet pods and their
/// controller-revision-hash labels) must stay within the 63-character DNS label limit. Empty when usable.
std::vector<config::Problem> check_service_set_name(const std::string& name);

/// The InferServiceSet name used when none is given: "mindie-motor-<engine base>" (e.g. mindie-motor-vllm).
std::string default_service_set_name(const config::UserConfig& cfg);

/// The motor-config ConfigMap: keys user_config.json (cfg.raw), env.json (env->raw when given), overrides.yaml
/// (opts.overrides->raw when given) and `opts.scripts`; annotations recording the deploy mode and the
/// InferServiceSet name. Throws config::ValidationError (source "scripts") when a script key is not a valid
/// ConfigMap key or collides with the config keys, a script is not UTF-8 text, or the data exceeds the 1 MiB object
/// limit.
boost::json::object render_config_map(const config::UserConfig& cfg, const config::EnvConfig* env,
                                      const RenderOptions& opts);

/// All objects of an infer_service_set deployment in write order: ConfigMap, ServiceAccount, ClusterRole,
/// ClusterRoleBinding, InferServiceSet. Cluster-scoped RBAC names embed the namespace so two deployments never
/// collide (fixing deploy.py's shared names).
///
/// Pod templates come from manifests/infer_service_set/roles/*.yaml; on top of them:
/// - engines (prefill, decode): from cfg.hardware (manifests/hardware_profiles.yaml) the NPU resource
///   (requests = limits = NPUs per pod), nodeSelector, extra pod labels (ring-controller.atlas), the
///   huawei.com/schedule_policy annotation and the sp-block annotation by the profile's rule; the role label
///   infer.huawei.com/gang-schedule "true" when an instance has more than one pod (a one-pod gang never starts:
///   PyMotor's infer_service.py _set_engine_gang_schedule); a privileged container for sglang (PyMotor's engine.py);
/// - every role: the weight and log hostPaths, image, env (ROLE, JOB_NAME, service addresses);
/// - then opts.overrides, role by role.
///
/// Throws config::ValidationError when the InferServiceSet name or the ConfigMap content is unusable, or (source:
/// the overrides file) listing every override that collides with a field the tool owns (labels, annotations,
/// nodeSelector keys, tolerations, volume names and mount paths of the templates, the NPU resource), mounts an
/// unknown volume, sets a request above its limit, or uses Volcano features (faultScheduling, faultRetryTimes,
/// gangSchedule) on a role Volcano does not schedule. std::invalid_argument when cfg.deploy_mode is not
/// InferServiceSet.
std::vector<boost::json::object> render_infer_service_set(const config::UserConfig& cfg,
                                                          const config::EnvConfig* env, const RenderOptions& opts);

/// The role names of the InferServiceSet, in order: controller, coordinator, prefill, decode, kv-pool,
/// kv-conductor.
const std::vector<std::string>& role_names();

/// Desired role.replicas (instances) per role for `cfg`: controller/coordinator 1, prefill p_instances, decode
/// d_instances, kv-pool/kv-conductor 1 when enabled else 0.
std::map<std::string, int> desired_role_replicas(const config::UserConfig& cfg);

/// Address of the Service the operator creates for a role's service entry:
/// "<service>-<iss>-0-<role>.<ns>.svc.cluster.local" (infer-operator naming, InferService index 0).
std::string operator_service_address(const std::string& service, const std::string& iss, const std::string& role,
                                     const std::string& ns);

}  // namespace mindie::render
