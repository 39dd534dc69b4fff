// The MindIE PyMotor configuration model: user_config.json parsed once into a normalized, validated model with one
// set of defaults (env.json is env_config.h). Knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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
/// ports (§U6). infer-operator refuses a NodePort role Service without a nodePort (instanceset_controller.go
/// validateServices; infer-operator-rules.md A1), so that mode always fixes one.
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
  int p_instances = 1;         ///< p_instances_num, 1..16; 0 with PD-hybrid
  int d_instances = 1;         ///< d_instances_num, 1..16; 0 with PD-hybrid
  /// PD-hybrid (the design's "union" role: prefill and decode in one engine instance):
  /// motor_deploy_config.hybrid_instances_num, 1..16; 0 = prefill/decode disaggregated. With it set,
  /// p/d_instances_num must be absent or 0, and only deploy_mode infer_service_set is accepted.
  int hybrid_instances = 0;
  int hybrid_pods_per_instance = 1;  ///< single_hybrid_instance_pod_num, 1..64
  int hybrid_npus_per_pod = 0;       ///< hybrid_pod_npu_num, 1..hardware->max_npus_per_pod
  /// True when the deployment runs one union role instead of prefill and decode instances.
  bool hybrid() const { return hybrid_instances > 0; }
  int p_pods_per_instance = 1; ///< single_p_instance_pod_num
  int d_pods_per_instance = 1; ///< single_d_instance_pod_num
  int p_npus_per_pod = 0;      ///< p_pod_npu_num, 1..hardware->max_npus_per_pod
  int d_npus_per_pod = 0;      ///< d_pod_npu_num
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
  std::string engine_base;     ///< vllm, mindie-server, sglang
  /// MODEL_NAME: the engine section's engine_config.served_model_name (served-model-name for sglang), else its
  /// model_config.model_name, else "Unknown" (PyMotor 7d15c04, resolve_model_name).
  std::string model_name;
  bool controller_standby = false;   ///< motor_controller_config.standby_config.enable_master_standby
  bool coordinator_standby = false;  ///< motor_coordinator_config.standby_config.enable_master_standby
  bool kv_pool = false;        ///< the engine section's kv_connector == "MultiConnector"
  int kv_pool_port = 50088;    ///< kv_cache_pool_config.port
  bool kv_conductor = false;   ///< kv_conductor_config.http_server_port != 0
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
};

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
