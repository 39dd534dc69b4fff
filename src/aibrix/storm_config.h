// The AIBrix StormService configuration model: a `stormservice` file (YAML or JSON) parsed once into a validated
// model, for PD-disaggregated vLLM on Ascend NPUs orchestrated by AIBrix and rescheduled by MindCluster.
// Knows nothing of HTTP.
//
// The file follows the shape of the published MindCluster tooling's config/stormservice-config.yaml
// (gitcode.com/Ascend/mindcluster-deploy, k8s-deploy-tool), so operators can bring their files, with the
// additions and stricter checks documented on parse_storm_config. Example: examples/aibrix/stormservice.yaml.
//
//   app_name: llm-service              # required; the StormService name (DNS-1035 label: it prefixes Service names)
//   app_namespace: vllm-test           # optional, default "default"
//   storm_service:
//     model_name: qwen3-moe            # required; the model.aibrix.ai/name label value
//     model_path: /mnt/models/Qwen3    # required; absolute, inside model_dir
//     model_dir: /mnt/models           # optional, default /mnt/models: host directory mounted at the same path
//     scripts_dir: /scripts            # optional, default /scripts: host directory with start_server.sh/start_proxy.sh
//     hardware_type: 800I_A3           # required; a hardware::find_hardware_profile name (800I_A2, 800I_A3, ...)
//     distributed_dp: true             # optional, default true; true/false (or the strings "true"/"false")
//     fault_scheduling: force          # optional, default force; force or grace
//     fault_retry_times: 10000         # optional, default 10000; 0..100000
//     prefill:                         # required
//       replicas: 2                    # optional, default 1; 1..64
//       podGroupSize: 1                # optional, default 1; 1..100 pods per instance
//       dp_size: 2                     # optional, default 1; data-parallel size of one instance
//       tp_size: 8                     # optional, default 1; tensor-parallel size of one DP rank
//       npu_num: 16                    # required; NPUs per pod, 1..NPUs of one server
//       image: vllm-ascend:v1          # required
//       hardware_type: 800I_A3         # optional; overrides storm_service.hardware_type for this role
//       labels: {}                     # optional; extra pod labels (string values)
//       annotations: {}                # optional; extra pod annotations (string values)
//       nodeSelector: {}               # optional; extra node selector terms (string values)
//     decode: {...}                    # required; as prefill
//     routing:                         # optional; required when distributed_dp is true
//       replicas: 1                    # optional, default 1; 1..64
//       image: vllm-ascend:v1          # required
//       server_port: 8080              # optional, default 8080: the proxy's listening port (PROXY_PORT)
//       labels: {} / annotations: {} / nodeSelector: {}
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hardware/profile.h"
#include "mindcluster/labels.h"
#include "validation/reader.h"

namespace mindie::aibrix {

/// The roles of a rendered StormService, in rendering order (prefill is roles[0], decode roles[1], routing
/// roles[2] when configured).
enum class Role { Prefill, Decode, Routing };
/// "prefill", "decode", "routing": the role names in the StormService and in the pods' role-name label.
std::string_view to_string(Role r);
/// Inverse of to_string; std::nullopt for anything else.
std::optional<Role> role_from_string(std::string_view s);

/// MindCluster fault-rescheduling mode (pod label fault-scheduling). MindCluster's StormService guide: force deletes
/// the faulty pod at once; grace deletes gracefully and forces after 15 minutes. (off disables the feature, which
/// the StormService path does not offer: its point is instance-level rescheduling.)
using mindcluster::FaultScheduling;
using mindcluster::to_string;

/// Bounds and defaults, shared with the commands (scale validates --replicas against kMaxRoleReplicas).
/// Replicas per role: AIBrix has no limit; 64 (infer-operator's InferServiceSet bound) catches typos and bounds
/// the derived Service names (see parse_storm_config).
inline constexpr int kMaxRoleReplicas = 64;
/// podGroupSize bounds of the StormService CRD (roles[].podGroupSize minimum 1, maximum 100).
inline constexpr int kMaxPodGroupSize = 100;
/// dp_size bound: a DP rank needs at least one NPU, so an instance of at most 100 pods × 16 NPUs holds at most
/// 1600 ranks.
inline constexpr int kMaxDpSize = 1600;
/// The engine's HTTP port: start_server.sh of the published tooling fixes SERVER_PORT=8080, and distributed DP
/// rank k of a pod listens on 8080 + k. It is the model.aibrix.ai/port label value and the Services' base port.
inline constexpr int kEnginePort = 8080;
/// The routing proxy's default listening port (MindCluster's guide queries http://<routing-pod>:8080).
inline constexpr int kDefaultRoutingPort = 8080;
/// fault-retry-times default: effectively unlimited business-plane retries, as this project's MindIE engine pods.
inline constexpr int kDefaultFaultRetryTimes = 10000;
inline constexpr int kMaxFaultRetryTimes = 100000;

/// A user map (labels, annotations, nodeSelector) in file order; keys and values already validated.
using StringMap = validation::StringMap;

/// A prefill or decode role: one instance = podGroupSize pods (one server each) running one vLLM engine with
/// dp_size × tp_size NPUs in all.
struct EngineRole {
  int replicas = 1;        ///< instances, 1..kMaxRoleReplicas
  int pod_group_size = 1;  ///< pods per instance, 1..kMaxPodGroupSize
  int dp_size = 1;         ///< data-parallel ranks per instance, a multiple of pod_group_size
  int tp_size = 1;         ///< NPUs per DP rank
  int npu_num = 0;         ///< NPUs requested per pod, 1..hardware->max_npus_per_pod
  std::string image;
  const hardware::HardwareProfile* hardware = nullptr;  ///< never null after parsing
  StringMap labels;
  StringMap annotations;
  StringMap node_selector;

  /// DP ranks (and so HTTP ports in distributed DP) per pod: dp_size / pod_group_size.
  int dp_size_local() const { return dp_size / pod_group_size; }
};

/// The optional routing role: the PD proxy (start_proxy.sh), no NPUs, default scheduler.
struct RoutingRole {
  int replicas = 1;
  std::string image;
  int server_port = kDefaultRoutingPort;
  StringMap labels;
  StringMap annotations;
  StringMap node_selector;
};

/// A parsed and validated stormservice file. `raw` is the exact input, `doc` its JSON form.
struct StormConfig {
  std::string raw;
  boost::json::object doc;

  std::string app_name;  ///< StormService name; DNS-1035 label
  std::string app_namespace = "default";
  std::string model_name;  ///< valid label value
  std::string model_path;  ///< absolute, inside model_dir
  std::string model_dir = "/mnt/models";
  std::string scripts_dir = "/scripts";
  const hardware::HardwareProfile* hardware = nullptr;  ///< storm_service.hardware_type
  bool distributed_dp = true;
  FaultScheduling fault_scheduling = FaultScheduling::Force;
  int fault_retry_times = kDefaultFaultRetryTimes;
  EngineRole prefill;
  EngineRole decode;
  std::optional<RoutingRole> routing;

  /// prefill or decode; std::invalid_argument for Role::Routing.
  const EngineRole& engine(Role r) const;
  EngineRole& engine(Role r);
};

/// Parses and validates a stormservice file (YAML or JSON: JSON is read as YAML 1.2 by util::yaml_to_json, so both
/// give the same model). `source` names the file in messages. Throws validation::ValidationError listing every problem
/// with its path ("storm_service.prefill.npu_num", map keys quoted: `storm_service.decode.labels["a/b"]`); syntax
/// errors are one problem at path "" with line and column. Rules, each with its source:
/// - Unknown keys at any level are errors (a misspelt key would otherwise silently fall back to a default).
/// - Types: integers must be JSON/YAML integers (2.0 or "2" are rejected); label, annotation and nodeSelector values
///   must be strings (Kubernetes stores strings; quote numbers). distributed_dp is a boolean, or the string
///   "true"/"false" that the published tooling's validator requires.
/// - app_name: DNS-1035 label (it begins Service names), short enough that the longest per-replica Service name
///   "<app_name>-<role>-<replica>[-<pod>]" fits 63 characters at kMaxRoleReplicas; app_namespace: DNS-1123 label.
/// - model_name: a non-empty label value (it is the model.aibrix.ai/name label, AIBrix's model key);
///   model_path, model_dir, scripts_dir: absolute paths without ':'; model_path inside model_dir (the only
///   directory mounted into the engine pods).
/// - hardware_type: a hardware::find_hardware_profile name (a profile of manifests/hardware_profiles.yaml: A2, A3,
///   A5); npu_num 1..max_npus_per_pod of the role's profile; tp_size 1..max_npus_per_pod.
/// - dp_size a multiple of podGroupSize (MindCluster guide, "dp_size需要为podGroupSize的整数倍"); and
///   (dp_size / podGroupSize) × tp_size ≤ npu_num: start_server.sh runs dp_size/podGroupSize DP ranks of tp_size
///   NPUs each in every pod (ASCEND_RT_VISIBLE_DEVICES ranges), so fewer NPUs cannot run the instance.
/// - distributed_dp true needs a routing role (the published validator) and dp_size > 1 in both engine roles
///   (MindCluster guide: with dp_size 1 distributed_dp can only be false).
/// - Labels, annotations and nodeSelector: keys are Kubernetes qualified names, label and selector values label
///   values, annotations at most 256 KiB per role (apimachinery). A key that kubectl-mindie sets on engine pods
///   (model.aibrix.ai/{name,port,engine}, fault-scheduling, fault-retry-times, pod-rescheduling,
///   huawei.com/schedule_minAvailable, huawei.com/recover_policy_path, and from the role's profile
///   huawei.com/schedule_policy, sp-block and the nodeSelector keys) or that the AIBrix controller sets on every pod
///   (storm-service-name, storm-service-revision, roleset-name, role-name, role-template-hash,
///   stormservice.orchestration.aibrix.ai/*) is an error naming both the user's key and what sets it. On a profile
///   without logical SuperPoDs (800I_A2) an sp-block annotation is refused (MindCluster: A3 only).
StormConfig parse_storm_config(std::string raw, std::string_view source);

/// Replicas and pod group size of one engine role, the inputs of min_available.
struct GroupShape {
  int replicas = 1;
  int pod_group_size = 1;
};

/// The huawei.com/schedule_minAvailable value for engine role `role` (prefill or decode), exactly as the published
/// tooling's stormservice.yaml.j2 computes it, following MindCluster's StormService guide (Volcano puts every
/// instance with podGroupSize 1 of the StormService into one PodGroup, and each instance with podGroupSize > 1
/// into its own PodGroup):
///   (a) the role's own podGroupSize when it is > 1 (its PodGroup is one instance);
///   (b) otherwise the role's replicas when the other role uses groups (the shared PodGroup holds only this role);
///   (c) otherwise prefill.replicas + decode.replicas (both roles share the one PodGroup).
/// So the value depends on replicas in cases (b) and (c): scaling a role with podGroupSize 1 changes its own
/// annotation, and in case (c) the other role's too. std::invalid_argument for Role::Routing (not Volcano-scheduled).
int min_available(Role role, GroupShape prefill, GroupShape decode);
/// min_available with the shapes of `cfg`.
int min_available(const StormConfig& cfg, Role role);

}  // namespace mindie::aibrix
