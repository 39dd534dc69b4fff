// The MindIE PyMotor configuration model: user_config.json (+ env.json) parsed once into a normalized,
// validated model with one set of defaults. Knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mindie::config {

/// How the workload is rendered (motor_deploy_config.deploy_mode). Missing = InferServiceSet everywhere (the
/// published deployer defaults differently in deploy and update-config, a defect we do not repeat).
enum class DeployMode { InferServiceSet, MultiDeployment, SingleContainer };
/// "infer_service_set", "multi_deployment", "single_container".
std::string_view to_string(DeployMode m);
/// Inverse of to_string; std::nullopt for anything else.
std::optional<DeployMode> deploy_mode_from_string(std::string_view s);

/// How engine pods carry MindCluster's sp-block annotation (the NPUs of one logical SuperPoD; MindCluster
/// "Affinity Scheduling of Logical SuperPoDs").
enum class SpBlockRule {
  None,         ///< no annotation (A2)
  PerPod,       ///< NPUs per pod (deploy.py's infer_service_set mode on A3)
  PerInstance,  ///< NPUs per pod x pods per instance: an instance stays inside one SuperPoD
};

/// An Ascend server model the built-in templates know (motor_deploy_config.hardware_type). The profiles are data:
/// manifests/hardware_profiles.yaml (embedded at build time) defines them; see that file for the sources.
struct HardwareProfile {
  std::string name;              ///< "800I_A2", "800I_A3", "900_A3_SuperPoD"
  std::string description;       ///< one line for people; may be empty
  std::string accelerator_type;  ///< node_selector's "accelerator-type" value ("module-910b-8"); may be empty
  int max_npus_per_pod = 0;      ///< NPUs on one server (npus_per_node): 8 (A2), 16 (A3)
  bool sp_block = false;         ///< engine pod templates carry the sp-block annotation (sp_block_rule != None)
  SpBlockRule sp_block_rule = SpBlockRule::None;
  std::string npu_resource;      ///< extended resource of the NPUs ("huawei.com/Ascend910")
  /// Engine pods' nodeSelector, in file order ("accelerator" and "accelerator-type").
  std::vector<std::pair<std::string, std::string>> node_selector;
  /// Extra engine pod labels, in file order ("ring-controller.atlas").
  std::vector<std::pair<std::string, std::string>> pod_labels;
  std::string schedule_policy;   ///< huawei.com/schedule_policy annotation of engine pods; empty = none
  /// ASCEND_MF_TRANSFER_PROTOCOL of sglang engines (the mf-store's KV transfer): "device_rdma" (A2's RoCE NICs)
  /// or "sdma" (A3's on-package links).
  std::string mf_transfer_protocol;
};
/// The known profile named `name` (exact match), or nullptr. The profiles are parsed from the embedded
/// manifests/hardware_profiles.yaml on first use; a broken file is a build defect (std::logic_error).
const HardwareProfile* find_hardware_profile(std::string_view name);
/// Every known profile, in file order.
const std::vector<HardwareProfile>& hardware_profiles();
/// Parses profile data in the format of manifests/hardware_profiles.yaml (exposed for tests). Throws
/// std::invalid_argument naming every problem: unknown or missing fields, wrong types, duplicate names, invalid
/// label keys or values.
std::vector<HardwareProfile> parse_hardware_profiles(const std::string& yaml_text, const std::string& source);

/// One validation problem: `path` is the JSON path in the input ("motor_deploy_config.p_instances_num").
struct Problem {
  std::string path;
  std::string message;
};

/// Raised by parse_* when the input is not usable; carries every problem found, not just the first.
/// what() is "<source>: N problem(s)" followed by one "* path: message" line per problem.
class ValidationError : public std::runtime_error {
 public:
  ValidationError(std::string source, std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<Problem> problems_;
};

/// A parsed and validated user_config.json. `raw` is the exact input (the baseline stored in the ConfigMap).
struct UserConfig {
  std::string raw;
  boost::json::object doc;

  std::string job_id;  ///< = namespace; DNS-1123 label
  DeployMode deploy_mode = DeployMode::InferServiceSet;
  std::string image_name;
  const HardwareProfile* hardware = nullptr;  ///< motor_deploy_config.hardware_type (required)
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
  /// coordinator's external inference Service (port 1025); 0 (absent) = render::kDefaultInferNodePort (31015) in
  /// infer_service_set mode, allocated by Kubernetes in the other modes.
  int infer_node_port = 0;
  std::string engine_type;     ///< motor_engine_prefill_config.engine_type: vllm, mindie-llm, sglang
  std::string engine_base;     ///< vllm, mindie-server, sglang
  std::string model_name;      ///< motor_engine_prefill_config.model_config.model_name (may be empty)
  bool controller_standby = false;   ///< motor_controller_config.standby_config.enable_master_standby
  bool coordinator_standby = false;  ///< motor_coordinator_config.standby_config.enable_master_standby
  bool kv_pool = false;        ///< prefill kv_connector == "MultiConnector"
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

/// An env.json: section name -> (variable -> value as a string). Values that are numbers or booleans in the
/// file are kept in their JSON spelling. `raw` is the exact input.
struct EnvConfig {
  std::string raw;
  boost::json::object doc;
};

/// The deepest nesting of objects and arrays accepted in user_config.json and env.json. Real files nest about five
/// levels (engine sections); the bound turns pathological input into a clear error.
inline constexpr std::size_t kMaxJsonDepth = 128;

/// Parses and validates user_config.json text. `source` names the file in messages. Throws ValidationError
/// listing every problem (JSON syntax errors, a byte-order mark and nesting deeper than kMaxJsonDepth are one problem
/// at path "" with line/column). Required: the sections
/// motor_deploy_config, motor_controller_config, motor_coordinator_config, motor_engine_prefill_config and
/// motor_engine_decode_config (objects), and in motor_deploy_config job_id, image_name, hardware_type,
/// p/d_instances_num and p/d_pod_npu_num (with hybrid_instances_num: hybrid_pod_npu_num instead, p/d counts absent or
/// 0, deploy_mode infer_service_set). Defaults (deploy.py's): deploy_mode infer_service_set, pods per
/// instance 1, weight_mount_path /mnt/weight, engine_type mindie-llm, KV pool port 50088, log dirs
/// /root/ascend/log. Unknown keys are allowed (engine sections carry many engine-specific fields).
UserConfig parse_user_config(std::string raw, std::string_view source);

/// Parses env.json text: an object of sections, each an object of scalar values (string, number, boolean) keyed by
/// shell variable names (deploy.py exports each section from a bash function); a top-level "version" string is
/// allowed. Throws ValidationError listing every problem.
EnvConfig parse_env_config(std::string raw, std::string_view source);

/// Every JSON path at which `a` and `b` differ ("motor_deploy_config.image_name"; array elements as "x[2]";
/// an array whose length differs is reported as the array's own path). Sorted.
std::vector<std::string> diff_paths(const boost::json::value& a, const boost::json::value& b);

/// Returns `raw` with the number at dotted object path `path` (e.g. "motor_deploy_config.p_instances_num")
/// replaced by `value`, every other byte unchanged, so the stored baseline keeps the operator's formatting.
/// Throws std::invalid_argument when `raw` is not JSON (or nests deeper than kMaxJsonDepth) or the path does not
/// hold a number.
std::string replace_json_number(std::string_view raw, std::string_view path, std::int64_t value);

/// A short rendering of a JSON value for validation messages: its kind and its text, cut at 40 characters
/// ("string \"2\"", "number 2.0", "an object").
std::string describe_value(const boost::json::value& v);

/// DNS-1123 label check (RFC 1123, as Kubernetes uses it): lower-case alphanumerics and '-', starts and ends
/// alphanumeric, at most 63 characters.
bool is_dns1123_label(std::string_view s);

/// DNS-1123 subdomain check (apimachinery IsDNS1123Subdomain): dot-separated parts of lower-case alphanumerics and
/// '-', each starting and ending alphanumeric, at most 253 characters in all.
bool is_dns1123_subdomain(std::string_view s);

/// Kubernetes qualified name (label and annotation keys, resource names; apimachinery IsQualifiedName): an optional
/// DNS-1123 subdomain prefix and '/', then a name of at most 63 characters of [A-Za-z0-9-_.] that starts and ends
/// alphanumeric.
bool is_qualified_name(std::string_view s);

/// Kubernetes label value (apimachinery IsValidLabelValue): empty, or at most 63 characters of [A-Za-z0-9-_.]
/// starting and ending alphanumeric.
bool is_label_value(std::string_view s);

}  // namespace mindie::config
