// The MindIE PyMotor configuration model: user_config.json parsed once into a normalized, validated model with one
// set of defaults (env.json is env_config.h). Knows nothing of HTTP.
#pragma once

#include <array>
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/profile.h"
#include "validation/problem.h"

namespace mindie::config {

/// How the workload is rendered (motor_deploy_config.deploy_mode). Missing = InferServiceSet everywhere (the
/// published deployer defaults differently in deploy and update-config, a defect we do not repeat).
enum class DeployMode { InferServiceSet, MultiDeployment, SingleContainer };
/// "infer_service_set", "multi_deployment", "single_container".
std::string_view to_string(DeployMode m);
/// Inverse of to_string; std::nullopt for anything else.
std::optional<DeployMode> deploy_mode_from_string(std::string_view s);

/// nodePorts infer_service_set mode renders when motor_deploy_config does not set them: PyMotor 7d15c04's fixed
/// ports (Ascend/MindIE-PyMotor examples/deployer/yaml_template/infer_service_template.yaml). infer-operator refuses a
/// NodePort role Service without a nodePort (Ascend/mind-cluster infer-operator, instanceset_controller.go
/// validateServices), so that mode always fixes one.
inline constexpr int kDefaultInferNodePort = 31015;          ///< coordinator inference, port 1025
inline constexpr int kDefaultObsNodePort = 31017;            ///< coordinator observability, port 1027
inline constexpr int kDefaultControllerObsNodePort = 31027;  ///< controller observability, port 1027

/// single_container's Service is "<job_id>-coordinator-service" (PyMotor's name), so a job_id may have at most
/// 63 - 20 characters there.
inline constexpr std::size_t kMaxSingleContainerJobId = 43;

/// A parsed and validated user_config.json. `raw` is the exact input (the baseline stored in the ConfigMap).
struct UserConfig {
  std::string raw;
  boost::json::object doc;

  std::string job_id;  ///< = namespace; DNS-1123 label
  DeployMode deploy_mode = DeployMode::InferServiceSet;
  std::string image_name;
  const hardware::HardwareProfile* hardware = nullptr;  ///< motor_deploy_config.hardware_type (required)
  int p_instances = 1;                                  ///< p_instances_num, 1..16; 0 with PD-hybrid
  int d_instances = 1;                                  ///< d_instances_num, 1..16; 0 with PD-hybrid
  /// PD-hybrid (the design's "union" role: prefill and decode in one engine instance):
  /// motor_deploy_config.hybrid_instances_num, 1..16; 0 = prefill/decode disaggregated. With it set,
  /// p/d_instances_num must be absent or 0, and only deploy_mode infer_service_set is accepted.
  int hybrid_instances = 0;
  int hybrid_pods_per_instance = 1;  ///< single_hybrid_instance_pod_num, 1..64
  int hybrid_npus_per_pod = 0;       ///< hybrid_pod_npu_num, 1..hardware->max_npus_per_pod
  /// True when the deployment runs one union role instead of prefill and decode instances.
  bool hybrid() const { return hybrid_instances > 0; }
  int p_pods_per_instance = 1;  ///< single_p_instance_pod_num
  int d_pods_per_instance = 1;  ///< single_d_instance_pod_num
  int p_npus_per_pod = 0;       ///< p_pod_npu_num, 1..hardware->max_npus_per_pod
  int d_npus_per_pod = 0;       ///< d_pod_npu_num
  /// Encode instances (PyMotor 7d15c04 U5, EPD: multi_deployment only): motor_deploy_config.e_instances_num, 0..16
  /// (0 when absent); with the key present, single_e_instance_pod_num (1..64, default 1; the pods of each encode
  /// instance, not upstream's X5) and e_pod_npu_num (required, 1..hardware->max_npus_per_pod).
  int e_instances = 0;
  int e_pods_per_instance = 1;
  int e_npus_per_pod = 0;
  /// True when the deployment has encode instances, or may get them by scale --encode (e_instances_num present).
  bool encode = false;
  /// PD heterogeneous scheduling (PyMotor 7d15c04 U2): motor_deploy_config.enable_pd_heterogeneous (a boolean);
  /// when on, prefill pods also select nodeSelector[pd_hetero_label_key] = pd_hetero_prefill_value and decode
  /// pods ... = pd_hetero_decode_value (keys pd_heterogeneous_label_key, pd_heterogeneous_prefill_label_value,
  /// pd_heterogeneous_decode_label_value; upstream's defaults). No effect on union, single_container or the
  /// control-plane roles.
  bool pd_heterogeneous = false;
  std::string pd_hetero_label_key = "card_type";
  std::string pd_hetero_prefill_value = "Ascend950PR";
  std::string pd_hetero_decode_value = "Ascend950DT";
  std::string weight_mount_path = "/mnt/weight";
  /// motor_deploy_config.infer_node_port (kubectl-mindie's own field, 30000..32767): the nodePort of the
  /// coordinator's external inference Service (port 1025); 0 (absent) = kDefaultInferNodePort (31015) in
  /// infer_service_set mode, allocated by Kubernetes in the other modes.
  int infer_node_port = 0;
  /// motor_deploy_config.obs_node_port (kubectl-mindie's own field, 30000..32767): the nodePort of the
  /// coordinator's observability Service (port 1027, PyMotor 7d15c04 §U6); 0 (absent) = kDefaultObsNodePort (31017)
  /// in infer_service_set mode, allocated by Kubernetes in multi_deployment; refused in single_container.
  int obs_node_port = 0;
  /// motor_deploy_config.controller_obs_node_port (kubectl-mindie's own field, 30000..32767): the nodePort of the
  /// controller's observability Service (port 1027, PyMotor 7d15c04 §U6); 0 (absent) =
  /// kDefaultControllerObsNodePort (31027) in infer_service_set mode, allocated by Kubernetes in multi_deployment;
  /// refused in single_container.
  int controller_obs_node_port = 0;
  /// The engine section's engine_type: vllm, mindie-llm (default), sglang. The engine section (PyMotor 7d15c04) is
  /// motor_engine_prefill_config when present and non-empty, else motor_engine_union_config.
  std::string engine_type;
  std::string engine_base;  ///< vllm, mindie-server, sglang
  /// MODEL_NAME: the engine section's engine_config.served_model_name (served-model-name for sglang), else its
  /// model_config.model_name, else "Unknown" (PyMotor 7d15c04, resolve_model_name).
  std::string model_name;
  bool controller_standby = false;   ///< motor_controller_config.standby_config.enable_master_standby
  bool coordinator_standby = false;  ///< motor_coordinator_config.standby_config.enable_master_standby
  /// The KV pool (kv-pool role, Service kvp-master): on when the engine section's
  /// engine_config.kv_transfer_config.kv_connector is "MultiConnector" or kv_cache_pool_config holds one of the
  /// pool's own keys (kKvPoolOwnKeys). PyMotor 7d15c04 (U9) also turns it on for any non-empty
  /// kv_cache_pool_config, which refuses its own Mooncake-client examples (its X1); such a section leaves the pool
  /// off here, with a notice.
  bool kv_pool = false;
  int kv_pool_port = 50088;  ///< kv_cache_pool_config.port, 1..65535 but 9003 (kvp-master's metrics port)
  /// kv_cache_pool_config.eviction_high_watermark_ratio / eviction_ratio as Python writes the numbers (env
  /// KV_POOL_EVICTION_HIGH_WATERMARK_RATIO / KV_POOL_EVICTION_RATIO of the kv-pool container); empty when off.
  std::string kv_pool_high_watermark_ratio, kv_pool_eviction_ratio;
  /// kv_cache_pool_config.default_kv_lease_ttl in milliseconds, 1..604800000 (a week), default 11000 (PyMotor
  /// 7d15c04): env DEFAULT_KV_LEASE_TTL, mooncake_master's --default_kv_lease_ttl.
  std::int64_t kv_lease_ttl_ms = 11000;
  bool kv_conductor = false;  ///< kv_conductor_config.http_server_port != 0
  int kv_conductor_port = 0;
  /// sglang engines exchange KV blocks through an mf-store (PyMotor's deployer adds one with engine_type sglang).
  bool mf_store = false;
  /// motor_engine_prefill_config.engine_config.disaggregation_bootstrap_port as text, empty when unset; passed to
  /// the coordinator as DISAGGREGATION_BOOTSTRAP_PORT (deploy.py).
  std::string disaggregation_bootstrap_port;
  /// Host directories mounted as component log dirs: logging_config.host_log_dir of motor_controller_config,
  /// motor_coordinator_config and motor_nodemanger_config (engines); deploy.py's default "/root/ascend/log".
  std::string controller_log_dir = "/root/ascend/log";
  std::string coordinator_log_dir = "/root/ascend/log";
  std::string engine_log_dir = "/root/ascend/log";
  /// One-line notices about what the config leaves off although it looks meant to turn on (printed by deploy as
  /// "Warning: ..."); never errors.
  std::vector<std::string> notices;
};

/// The keys of kv_cache_pool_config that belong to the KV pool itself (PyMotor's kv_pool.sh reads them); any of
/// them turns the pool on. Other keys (Mooncake client settings: metadata_server, protocol, ...) do not.
/// kvp-master's metrics port (PyMotor 7d15c04, U9): kv_cache_pool_config.port may not take it.
inline constexpr int kKvPoolMetricsPort = 9003;
/// The bound of kv_cache_pool_config.default_kv_lease_ttl, milliseconds: a week (a lease longer than that keeps
/// evicted KV blocks pinned; PyMotor sets no bound, the number must fit mooncake_master's flag).
inline constexpr std::int64_t kMaxKvLeaseTtlMs = 604800000;
inline constexpr std::array<std::string_view, 4> kKvPoolOwnKeys = {"port", "eviction_high_watermark_ratio",
                                                                   "eviction_ratio", "default_kv_lease_ttl"};

/// Parses and validates user_config.json text. `source` names the file in messages. Throws
/// validation::ValidationError listing every problem (syntax and structure as validation::read_json_object reports
/// them). Required: the sections
/// motor_deploy_config, motor_controller_config, motor_coordinator_config, motor_engine_prefill_config and
/// motor_engine_decode_config (objects; with hybrid_instances_num, motor_engine_union_config may stand in for both),
/// and in motor_deploy_config job_id, image_name, hardware_type,
/// p/d_instances_num and p/d_pod_npu_num (with hybrid_instances_num: hybrid_pod_npu_num instead, p/d counts absent or
/// 0, deploy_mode infer_service_set). nodePorts (infer_node_port, obs_node_port, controller_obs_node_port):
/// integers 30000..32767, pairwise distinct (counting the infer_service_set defaults), obs ports refused in
/// single_container; there job_id is at most kMaxSingleContainerJobId characters (PyMotor 7d15c04 §U6).
/// Defaults (deploy.py's): deploy_mode infer_service_set, pods per
/// instance 1, weight_mount_path /mnt/weight, engine_type mindie-llm, KV pool port 50088, log dirs
/// /root/ascend/log. Unknown keys are allowed (engine sections carry many engine-specific fields).
UserConfig parse_user_config(std::string raw, std::string_view source);

}  // namespace mindie::config
