// Renders the Kubernetes objects of a MindIE deployment from the config model and the built-in templates under
// manifests/ (embedded at build time). Pure: objects in, objects out; knows nothing of HTTP.
#pragma once

#include <array>
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mindie/baseline.h"
#include "mindie/config.h"
#include "mindie/env_config.h"
#include "mindie/overrides.h"

namespace mindie::render {

/// Role label that makes infer-operator create a Volcano PodGroup per instance (infer-operator's MindIE guide).
inline constexpr const char* kGangScheduleLabel = "infer.huawei.com/gang-schedule";
/// Field manager for every write.
inline constexpr const char* kFieldManager = "kubectl-mindie";
/// Annotation on every pod template kubectl-mindie renders: template_hash() of that template. infer-operator copies
/// the role's template into each instance's workload and never updates a workload afterwards
/// (Ascend/mind-cluster infer-operator, workload/statefulset_handler.go and deployment_handler.go), so a workload whose
/// annotation differs from its role's runs an older template.
inline constexpr const char* kTemplateHashAnnotation = "kubectl-mindie/template-hash";
/// InstanceSet label every current infer-operator adds at creation (inferservice_controller.go newInstanceSet); an
/// InstanceSet without it gets no new workloads (schedule/priority_scheduling.go ShouldSchedule).
inline constexpr const char* kPrioritySchedulingLabel = "infer.huawei.com/priority-scheduling-strategy";
/// Names of the role service entries (the first part of the operator's Service names; the runtime only sees the
/// resulting addresses, so they are kept short to leave room for the InferServiceSet name). The nodePorts of the
/// NodePort entries are motor_deploy_config's, else config::kDefault*NodePort (infer-operator refuses nodePort 0).
inline constexpr const char* kControllerService = "controller";  ///< controller role, port 1026
/// controller role, observability port 1027, NodePort (PyMotor 7d15c04 §U6: deploy.py's mindie-motor-observability)
inline constexpr const char* kControllerObsService = "obs";
inline constexpr const char* kCoordinatorService = "coordinator";  ///< coordinator role, management port 1026
inline constexpr const char* kCoordinatorInferService = "infer";   ///< coordinator role, inference port 1025
/// coordinator role, observability port 1027, NodePort (PyMotor 7d15c04 §U6: deploy.py's
/// mindie-motor-coordinator-obs)
inline constexpr const char* kCoordinatorObsService = "obs";
inline constexpr const char* kKvPoolService = "kvp-master";         ///< kv-pool role, kv_cache_pool_config.port
inline constexpr const char* kKvConductorService = "kv-conductor";  ///< kv-conductor role, http_server_port
inline constexpr const char* kMfStoreService = "mf-store";          ///< mf-store role (sglang), port 50089

/// Choices that are not part of user_config.json.
struct RenderOptions {
  std::string service_set_name;  ///< InferServiceSet name; empty = default_service_set_name(cfg)
  /// Extra ConfigMap files (startup/probe scripts from --scripts-dir): key -> content.
  std::map<std::string, std::string> scripts;
  /// Operator changes to the pod templates (deploy --overrides); stored in the ConfigMap under baseline::kOverridesKey.
  std::optional<overrides::Overrides> overrides;
  /// SERVICE_ID of the env functions ("<job_id>_<unix seconds>" of the first deploy, kept on motor-config under
  /// baseline::kServiceIdAnnotation so re-renders are identical); empty = the job_id.
  std::string service_id;
};

/// Problems with an InferServiceSet name (path "metadata.name"): it must be a DNS-1123 label, and every name the
/// operator derives from it (role Services "<service>-<iss>-0-<role>", StatefulSet pods and their
/// controller-revision-hash labels) must stay within the 63-character DNS label limit. Empty when usable.
std::vector<validation::Problem> check_service_set_name(const std::string& name);

/// The InferServiceSet name used when none is given: "mindie-motor-<engine base>" (e.g. mindie-motor-vllm).
std::string default_service_set_name(const config::UserConfig& cfg);

/// The motor-config ConfigMap: keys user_config.json (cfg.raw), env.json (env->raw when given), overrides.yaml
/// (opts.overrides->raw when given) and `opts.scripts`, the scripts' copies carrying env.json's set_*_env
/// functions and every function also under env_script::kEnvFunctionsKey (mindie/env_script.h; the user's files are
/// never modified); annotations recording the deploy mode and the
/// InferServiceSet name. Throws validation::ValidationError (source "scripts") when a script key is not a valid
/// ConfigMap key or collides with the config keys, a script is not UTF-8 text, or the data exceeds the 1 MiB object
/// limit.
boost::json::object render_config_map(const config::UserConfig& cfg, const config::EnvConfig* env,
                                      const RenderOptions& opts);

/// All objects of an infer_service_set deployment in write order: ConfigMap, ServiceAccount, ClusterRole (nodes),
/// ClusterRoleBinding, Role and RoleBinding (ConfigMaps and pods of the namespace), InferServiceSet. Cluster-scoped
/// RBAC names embed the namespace so two deployments never collide (fixing deploy.py's shared names).
///
/// Pod templates come from manifests/infer_service_set/roles/*.yaml; on top of them:
/// - engines (prefill, decode): from cfg.hardware (manifests/hardware_profiles.yaml) the NPU resource
///   (requests = limits = NPUs per pod), nodeSelector, extra pod labels (ring-controller.atlas), the
///   huawei.com/schedule_policy annotation and the sp-block annotation by the profile's rule; the role label
///   infer.huawei.com/gang-schedule "true" when an instance has more than one pod (a one-pod gang never starts:
///   PyMotor's infer_service.py _set_engine_gang_schedule); a privileged container for sglang (PyMotor's engine.py);
/// - role Service entries (the operator names each Service "<entry>-<iss>-0-<role>"): controller `controller`
///   (ClusterIP 1026) and `obs` (NodePort 1027), coordinator `coordinator` (ClusterIP 1026, the management port),
///   `infer` (NodePort 1025) and `obs` (NodePort 1027), nodePorts as node_port_claims lists them (PyMotor 7d15c04
///   §U6); kv-pool, kv-conductor and mf-store one ClusterIP entry each when on;
/// - every role: the weight and log hostPaths, image, env (ROLE, JOB_NAME, service addresses: CONTROLLER_SERVICE,
///   COORDINATOR_SERVICE = the management Service, then on the controller, coordinator and engines only
///   COORDINATOR_INFER_SERVICE and COORDINATOR_OBS_SERVICE, and the KV pool / KV conductor / mf-store ones when
///   those are on);
/// - then opts.overrides, role by role.
///
/// Throws validation::ValidationError when the InferServiceSet name or the ConfigMap content is unusable, or (source:
/// the overrides file) listing every override that collides with a field the tool owns (labels, annotations,
/// nodeSelector keys, tolerations, volume names and mount paths of the templates, the NPU resource), mounts an
/// unknown volume, sets a request above its limit, or uses Volcano features (faultScheduling, faultRetryTimes,
/// gangSchedule) on a role Volcano does not schedule. std::invalid_argument when cfg.deploy_mode is not
/// InferServiceSet.
std::vector<boost::json::object> render_infer_service_set(const config::UserConfig& cfg, const config::EnvConfig* env,
                                                          const RenderOptions& opts);

/// A nodePort one of the deployment's Services will hold: the Service as it will exist on the cluster (in
/// infer_service_set mode the one infer-operator derives from the role's entry) and the port.
struct NodePortClaim {
  std::string ns;       ///< the Service's namespace (the job_id)
  std::string service;  ///< the Service's name
  int port = 0;         ///< 30000..32767
  std::string key;      ///< the config key that sets the port, e.g. "motor_deploy_config.infer_node_port"
};

/// The nodePorts the rendering of `cfg` fixes, in this order: infer_service_set always three (PyMotor 7d15c04 §U6;
/// the operator's Services "infer-<iss>-0-coordinator", "obs-<iss>-0-coordinator" and "obs-<iss>-0-controller", with
/// motor_deploy_config.infer_node_port / obs_node_port / controller_obs_node_port or config::kDefaultInferNodePort /
/// kDefaultObsNodePort / kDefaultControllerObsNodePort, plus the InferService index the operator adds, always 0
/// here); multi_deployment those of the three keys that are set (kMultiCoordinatorInfer, kMultiCoordinatorObs,
/// kMultiControllerObs; Kubernetes allocates the others); single_container infer_node_port when set
/// (single_container_service_name). Each claim names its key.
std::vector<NodePortClaim> node_port_claims(const config::UserConfig& cfg, const RenderOptions& opts);

/// A hash of a pod template (16 hex digits, FNV-1a 64 of its serialized JSON, kTemplateHashAnnotation left out) and,
/// when `pods` >= 0, of the pods per instance: equal inputs, equal hashes. Rendered templates carry it as
/// kTemplateHashAnnotation; infer_service_set roles hash their pods per instance too (the operator never updates a
/// workload's replicas), Deployments of the other modes do not (their controller follows replicas).
std::string template_hash(const boost::json::object& pod_template, std::int64_t pods = -1);

/// Every role name the InferServiceSet may hold, in order: controller, coordinator, prefill, decode, union,
/// kv-pool, kv-conductor, mf-store. union (PD-hybrid) and mf-store (sglang) are rendered only when on; kv-pool and
/// kv-conductor always (replicas 0 when off, as deploy.py renders them).
const std::vector<std::string>& role_names();

/// Desired role.replicas (instances) per role for `cfg`: controller/coordinator 1, prefill p_instances, decode
/// d_instances, union hybrid_instances, kv-pool/kv-conductor/mf-store 1 when enabled else 0.
std::map<std::string, int> desired_role_replicas(const config::UserConfig& cfg);

// ---- multi_deployment mode (deploy.py's "multi_deployment rendering": plain Deployments and Services) ----

/// Labels on every object kubectl-mindie writes (delete and status select with them).
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kInstanceLabel = "app.kubernetes.io/instance";    ///< = workload_name()
inline constexpr const char* kComponentLabel = "app.kubernetes.io/component";  ///< the role name
/// multi_deployment: the engine instance index on an engine Deployment and its pods (status groups by it; the
/// Deployment name carries it too, but names are never parsed when a label can say it).
inline constexpr const char* kInstanceIndexLabel = "kubectl-mindie/instance-index";

/// multi_deployment object names (deploy.py's, so operators find what they know).
inline constexpr const char* kMultiController = "mindie-motor-controller";
inline constexpr const char* kMultiControllerService = "mindie-motor-controller-service";  ///< port 1026
inline constexpr const char* kMultiCoordinator = "mindie-motor-coordinator";
/// NodePort, 1027 (PyMotor 7d15c04 §U6)
inline constexpr const char* kMultiControllerObs = "mindie-motor-controller-observability-service";
/// port 1026; PyMotor 7d15c04 renamed it from "mindie-motor-coordinator-service" (§U6, kOldMultiCoordinatorService)
inline constexpr const char* kMultiCoordinatorMgmt = "mindie-motor-coordinator-mgmt";
inline constexpr const char* kMultiCoordinatorInfer = "mindie-motor-coordinator-infer";  ///< NodePort, 1025
inline constexpr const char* kMultiCoordinatorObs = "mindie-motor-coordinator-obs";      ///< NodePort, 1027
/// The coordinator's management Service before PyMotor 7d15c04 (and kubectl-mindie before §U6).
inline constexpr const char* kOldMultiCoordinatorService = "mindie-motor-coordinator-service";
inline constexpr const char* kMultiKvPool = "mindie-motor-kv-pool";            ///< Service kvp-master
inline constexpr const char* kMultiKvConductor = "mindie-motor-kv-conductor";  ///< Service kv-conductor
inline constexpr const char* kMultiMfStore = "mindie-motor-mf-store";          ///< Service mf-store

/// The name recorded as baseline::kWorkloadNameAnnotation and carried in kInstanceLabel: opts.service_set_name, else
/// default_service_set_name(cfg). In infer_service_set mode it is the InferServiceSet's name.
std::string workload_name(const config::UserConfig& cfg, const RenderOptions& opts);

/// The engine roles that run instances of their own, each its own workload (a StatefulSet per instance in
/// infer_service_set, engine_deployment_name's Deployment in multi_deployment), carrying kInstanceIndexLabel in
/// multi_deployment: prefill, decode, and PyMotor 7d15c04's encode (U5) and PD-hybrid union (U4).
inline constexpr std::array<std::string_view, 4> kInstanceEngineRoles = {"prefill", "decode", "encode", "union"};
/// True for a role of kInstanceEngineRoles.
bool is_instance_engine_role(std::string_view role);

/// Name of engine instance `index` of `role` (one of kInstanceEngineRoles) in multi_deployment mode:
/// "<engine base>-p<index>" / "-d<index>" / "-e<index>" / "-u<index>" (deploy.py; -e and -u from 7d15c04, U4/U5).
/// std::invalid_argument for another role.
std::string engine_deployment_name(const config::UserConfig& cfg, std::string_view role, int index);

/// A Service's cluster DNS name: "<service>.<ns>.svc.cluster.local".
std::string cluster_service_address(const std::string& service, const std::string& ns);

/// Every object of a multi_deployment deployment but the ConfigMap, in write order: ServiceAccount, ClusterRole,
/// ClusterRoleBinding, Role, RoleBinding (as render_infer_service_set names them), controller Deployment, Service
/// (1026) and NodePort Service kMultiControllerObs (1027), coordinator Deployment, Service kMultiCoordinatorMgmt (1026)
/// and NodePort Services kMultiCoordinatorInfer (1025) and kMultiCoordinatorObs (1027) (PyMotor 7d15c04 §U6; nodePorts
/// = motor_deploy_config.infer_node_port / obs_node_port / controller_obs_node_port, else allocated by Kubernetes), one
/// Deployment per engine instance (prefill and decode, or PD-hybrid's union instances; engine_deployment_name; replicas
/// = pods per instance), then kv-pool and kv-conductor (Deployment + Service) when enabled. Pod templates are the
/// infer_service_set roles' (same Ascend pieces, overrides and env), with env addresses cluster_service_address(...)
/// and pod labels app=<Deployment name>, job-name=<job_id>, and the managed-by, instance, component (and for engines
/// instance-index) labels every object carries. Throws validation::ValidationError as render_infer_service_set does
/// (overrides; also gangSchedule: true, which needs infer-operator's PodGroups), or for a workload name that is no
/// DNS-1123 label; std::invalid_argument when cfg.deploy_mode is not MultiDeployment.
std::vector<boost::json::object> render_multi_workloads(const config::UserConfig& cfg, const RenderOptions& opts);

/// render_config_map(cfg, env, opts) followed by render_multi_workloads(cfg, opts): what deploy writes, in order.
std::vector<boost::json::object> render_multi_deployment(const config::UserConfig& cfg, const config::EnvConfig* env,
                                                         const RenderOptions& opts);

// ---- single_container mode (deploy.py's: every component in one pod) ----

/// "<job_id>-single-container": the name of the single_container Deployment (and its pods' app label).
std::string single_container_name(const config::UserConfig& cfg);

/// "<job_id>-coordinator-service": the name of the single_container NodePort Service (PyMotor's deployer name; it
/// was single_container_name(cfg) before §U6). At most 63 characters for a job_id of up to
/// config::kMaxSingleContainerJobId.
std::string single_container_service_name(const config::UserConfig& cfg);

/// A Service PyMotor 7d15c04 renamed (§U6): the name earlier kubectl-mindie releases (and deploy.py) used, the
/// name rendered now.
struct RenamedService {
  std::string old_name;
  std::string new_name;
};

/// The renamed Services of `cfg`'s mode: multi_deployment kOldMultiCoordinatorService -> kMultiCoordinatorMgmt,
/// single_container single_container_name(cfg) -> single_container_service_name(cfg); none in infer_service_set (its
/// entry names are unchanged). deploy removes those it owns (its labels) through the stale object prune and warns
/// about the others.
std::vector<RenamedService> renamed_services(const config::UserConfig& cfg);

/// Every object of a single_container deployment but the ConfigMap, in write order: ServiceAccount, ClusterRole,
/// ClusterRoleBinding, Role, RoleBinding (as in the other modes: the controller runs in the pod), the Deployment
/// single_container_name(cfg) (1 pod; the engine template with the hardware profile's node selection, NPUs per pod
/// = the larger of p_pod_npu_num and d_pod_npu_num, ROLE=SINGLE_CONTAINER, the controller's ServiceAccount) and its
/// NodePort Service single_container_service_name(cfg) (port 1025; nodePort = motor_deploy_config.infer_node_port,
/// else allocated). Objects carry the
/// managed-by, instance and component=single-container labels. Throws validation::ValidationError for overrides of any
/// role but single-container (or gangSchedule), a workload name that is no DNS-1123 label, or a job_id too long for
/// the suffix; std::invalid_argument when cfg.deploy_mode is not SingleContainer.
std::vector<boost::json::object> render_single_container_workloads(const config::UserConfig& cfg,
                                                                   const RenderOptions& opts);

/// render_config_map(cfg, env, opts) followed by render_single_container_workloads(cfg, opts).
std::vector<boost::json::object> render_single_container(const config::UserConfig& cfg, const config::EnvConfig* env,
                                                         const RenderOptions& opts);

/// Address of the Service the operator creates for a role's service entry:
/// "<service>-<iss>-0-<role>.<ns>.svc.cluster.local" (infer-operator naming, InferService index 0).
std::string operator_service_address(const std::string& service, const std::string& iss, const std::string& role,
                                     const std::string& ns);

}  // namespace mindie::render
