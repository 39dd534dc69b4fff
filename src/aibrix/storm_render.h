// Renders the Kubernetes objects of an AIBrix StormService deployment (the StormService and the per-replica
// Services its routing proxy addresses) and plans role scaling as a guarded JSON Patch. Pure: objects in, objects
// out; knows nothing of HTTP.
//
// Sources: MindCluster's "deploy vLLM inference with AIBrix" guide and the published tooling it describes
// (gitcode.com/Ascend/mindcluster-deploy, k8s-deploy-tool: templates/aibrix/stormservice.yaml.j2,
// server_service.yaml.j2, job_manager.py, example/scripts/start_{server,proxy}.sh); AIBrix's StormService design
// doc and label constants (github.com/vllm-project/aibrix); the CRD in
// ../shared/reference/crds/orchestration.aibrix.ai_stormservices.yaml.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aibrix/storm_config.h"
#include "mindcluster/labels.h"

namespace mindie::aibrix {

/// API coordinates of the StormService CRD (discovery: a missing CRD means AIBrix is not installed).
inline constexpr const char* kGroup = "orchestration.aibrix.ai";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kApiVersion = "orchestration.aibrix.ai/v1alpha1";
inline constexpr const char* kKind = "StormService";
inline constexpr const char* kPlural = "stormservices";

/// Labels kubectl-mindie sets on engine pod templates (and MindCluster's, mindcluster/labels.h).
inline constexpr const char* kModelNameLabel = "model.aibrix.ai/name";      ///< AIBrix: the model key
inline constexpr const char* kModelPortLabel = "model.aibrix.ai/port";      ///< AIBrix: the serving port
inline constexpr const char* kModelEngineLabel = "model.aibrix.ai/engine";  ///< AIBrix: "vllm"

/// Labels the AIBrix controller sets on every pod it creates (find and group pods with these; the StormService
/// itself carries none of them).
inline constexpr const char* kStormServiceNameLabel = "storm-service-name";
inline constexpr const char* kRoleNameLabel = "role-name";
inline constexpr const char* kRoleSetNameLabel = "roleset-name";
inline constexpr const char* kRoleReplicaIndexLabel = "stormservice.orchestration.aibrix.ai/role-replica-index";
inline constexpr const char* kPodGroupIndexLabel = "stormservice.orchestration.aibrix.ai/pod-group-index";

/// Labels kubectl-mindie sets on the StormService and the Services it writes.
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "kubectl-mindie";
inline constexpr const char* kInstanceLabel = "app.kubernetes.io/instance";

/// All objects of a StormService deployment in write order: the StormService, then the per-replica Services
/// (render_services of it). Every object is the full intended state for server-side apply (apiVersion, kind,
/// metadata name/namespace/labels, spec; no status). The StormService: spec.replicas 1 with InPlaceUpdate and
/// stateful true (pooled mode: roles scale independently, as MindCluster's guide requires); roles prefill, decode
/// (and routing) with stateful true. Engine roles: schedulerName volcano, restartPolicy Never (MindCluster: required
/// with fault-retry-times), labels model.aibrix.ai/{name,port,engine}, fault-scheduling, fault-retry-times and
/// pod-rescheduling "on" when podGroupSize is 1; annotations huawei.com/schedule_minAvailable (min_available) and
/// huawei.com/recover_policy_path "pod" when podGroupSize is 1 (each pod is a whole instance, so a fault must not
/// escalate to the job); from the role's hardware::HardwareProfile: the nodeSelector (accelerator,
/// accelerator-type), huawei.com/schedule_policy (MindCluster's newer StormService guide sets it on both roles),
/// sp-block (npu_num, or podGroupSize × npu_num on SuperPoDs, per the profile's pod-template sp_block rule) and the NPU
/// resource (npu_resource, requests = limits = npu_num); the profile's pod_labels (ring-controller.atlas, for MindIE's
/// rank tables) are not applied, as the guide's StormService carries none; the env start_server.sh reads (as the
/// published template, plus ASCEND_VISIBLE_DEVICES from the Volcano allocation annotation named like the resource,
/// as the guide's parameter table requires); user labels, annotations and node selectors after ours. Routing: default
/// scheduler, no NPUs, the env start_proxy.sh reads (including PROXY_PORT and SERVER_PORT, which the published template
/// omits). Does not throw for a config from parse_storm_config.
std::vector<boost::json::object> render_storm_service(const StormConfig& cfg);

/// The per-replica Services the routing proxy (start_proxy.sh) addresses, derived from a StormService rendered by
/// render_storm_service (or read back from the cluster): none without a routing role. Names and ports follow the
/// published tooling: with distributed DP one Service per pod, "<app>-<role>-<replica>" (podGroupSize 1) or
/// "<app>-<role>-<replica>-<pod>", ports 8080 + k (named http-k) for k < dp_size/podGroupSize, selecting
/// storm-service-name, role-name, role-replica-index (and pod-group-index); without it one Service per replica on
/// port 8080 (named http), named "<app>-<role>-<replica>" or, for groups, "<app>-<role>-<replica>-0" selecting
/// pod-group-index 0 (the group's HTTP server; the published proxy looks up that name, while the published
/// template names the Service without "-0" — a defect not repeated). Labels: the selector's plus managed-by.
/// Reads metadata.name/namespace, each engine role's replicas and podGroupSize, and the DISTRIBUTED_DP and
/// <ROLE>_DP_SIZE env of its container. Throws std::invalid_argument naming the missing or malformed field when
/// the object is not shaped as rendered.
std::vector<boost::json::object> render_services(const boost::json::object& storm_service);

/// Label selector of the Services of app `app` written by kubectl-mindie (list them to delete leftovers):
/// "storm-service-name=<app>,app.kubernetes.io/managed-by=kubectl-mindie".
std::string services_selector(std::string_view app);
/// Label selector of the pods of StormService `app` (set by the AIBrix controller): "storm-service-name=<app>".
std::string pods_selector(std::string_view app);

/// JSON Pointer of role `role` in a StormService object ("/spec/template/spec/roles/1"), found by name. Throws
/// std::invalid_argument when the object has no such role.
std::string role_pointer(const boost::json::object& storm_service, std::string_view role);
/// JSON Pointer of that role's replicas ("/spec/template/spec/roles/1/replicas").
std::string role_replicas_pointer(const boost::json::object& storm_service, std::string_view role);
/// The same for a StormService rendered from `cfg` (roles in Role order, routing last when configured). Throws
/// std::invalid_argument for Role::Routing without a routing role.
std::string role_replicas_pointer(const StormConfig& cfg, Role role);

/// A role scale computed from the live StormService.
struct ScalePlan {
  int from = 0;  ///< the role's live replicas
  int to = 0;    ///< the requested replicas
  /// RFC 6902 operations, empty when from == to. Each changed value is preceded by `test` ops on the role's name
  /// and the value's current content, so a StormService changed since it was read fails the whole patch (422)
  /// instead of being overwritten. Changes: the role's replicas; every engine role's
  /// huawei.com/schedule_minAvailable that min_available gives differently for the new counts (cases (b)/(c));
  /// and the <ROLE>_NUM env (PREFILL_NUM / DECODE_NUM) in every container that has it (the published scripts
  /// derive engine ids and the proxy's host lists from it).
  boost::json::array patch;
  /// Roles whose pod template the patch changes (replicas is not part of the template). AIBrix treats a pod
  /// template change as a new role revision and recreates that role's existing pods (role updateStrategy
  /// Recreate, the default), so say so before scaling. With the published env (every container carries
  /// PREFILL_NUM and DECODE_NUM) every role is in this list whenever from != to.
  std::vector<std::string> restarted_roles;
  /// The Services wanted after the scale (render_services of the patched object): apply them, then delete those
  /// matching services_selector that are not in this list.
  std::vector<boost::json::object> services;
};

/// Plans scaling `role` (prefill, decode or routing) of the live StormService `live` to `replicas`
/// (1..kMaxRoleReplicas). The result equals what render_storm_service gives for the config with the new count,
/// so a later deploy of the updated file changes nothing. Throws std::invalid_argument when replicas is out of
/// range, the role is unknown or absent, or `live` is not shaped as rendered (the message names the field).
ScalePlan plan_scale(const boost::json::object& live, std::string_view role, int replicas);

/// The StormService annotation a scale that changes role pod templates writes with its patch, as JSON
/// {"at": RFC 3339, "roles": [names]}: status tells the pods AIBrix recreated for the change (role updateStrategy
/// Recreate) from those a fault or a delete recreated.
inline constexpr const char* kTemplateChangeAnnotation = "kubectl-mindie/template-change";

/// A template change as recorded in kTemplateChangeAnnotation.
struct TemplateChange {
  std::int64_t at = 0;  ///< seconds since the epoch
  std::vector<std::string> roles;
};

/// RFC 6902 operations recording on `live` that the pod templates of `roles` change at `at` (seconds since the
/// epoch): kTemplateChangeAnnotation added to metadata.annotations (the map added when `live` has none).
boost::json::array template_change_ops(const boost::json::object& live, const std::vector<std::string>& roles,
                                       std::int64_t at);

/// The template change recorded on `storm_service`; nullopt when none is, or it cannot be read.
std::optional<TemplateChange> read_template_change(const boost::json::object& storm_service);

}  // namespace mindie::aibrix
