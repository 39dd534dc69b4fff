// The Ascend server models the built-in templates know (motor_deploy_config.hardware_type, the StormService
// hardware_type): NPUs per server, the NPU resource name, node selector and pod labels, SuperPoD affinity. The
// profiles are data: manifests/hardware_profiles.yaml (embedded at build time) defines them, with their sources.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mindie::hardware {

/// The value of MindCluster's sp-block annotation (the NPUs of one logical SuperPoD; MindCluster "Affinity
/// Scheduling of Logical SuperPoDs") on an engine object.
enum class SpBlockRule {
  None,         ///< no annotation (A2)
  PerPod,       ///< NPUs per pod
  PerInstance,  ///< NPUs per pod x pods per instance: an instance stays inside one SuperPoD
};

/// The sp-block rule of a profile per deploy mode: PyMotor's deployer (7d15c04, engine.py and infer_service.py)
/// puts NPUs per pod on infer_service_set pod templates, pods x NPUs on multi_deployment engine Deployments and the
/// pod's NPUs on the single_container Deployment, for A3 and A5 alike.
struct SpBlockRules {
  SpBlockRule pod_template = SpBlockRule::None;      ///< infer_service_set role and StormService pod templates
  SpBlockRule multi_deployment = SpBlockRule::None;  ///< metadata.annotations of multi_deployment engine Deployments
  SpBlockRule single_container = SpBlockRule::None;  ///< metadata.annotations of the single_container Deployment
  /// True when some mode carries the annotation.
  bool any() const {
    return pod_template != SpBlockRule::None || multi_deployment != SpBlockRule::None ||
           single_container != SpBlockRule::None;
  }
};

/// An Ascend server model the built-in templates know (motor_deploy_config.hardware_type). The profiles are data:
/// manifests/hardware_profiles.yaml (embedded at build time) defines them; see that file for the sources.
struct HardwareProfile {
  std::string name;              ///< "800I_A2", "800I_A3", "900_A3_SuperPoD", "950-SuperPod-Atlas-8", ...
  std::string description;       ///< one line for people; may be empty
  std::string accelerator_type;  ///< node_selector's "accelerator-type" value ("module-910b-8"); may be empty
  int max_npus_per_pod = 0;      ///< NPUs on one server (npus_per_node): 8 (A2), 16 (A3), 8 or 16 (A5)
  SpBlockRules sp_block;         ///< where engine objects carry the sp-block annotation, per deploy mode
  std::string npu_resource;      ///< extended resource of the NPUs ("huawei.com/Ascend910", A5 "huawei.com/npu")
  /// Engine pods' nodeSelector, in file order ("accelerator" and "accelerator-type").
  std::vector<std::pair<std::string, std::string>> node_selector;
  /// Extra engine pod labels, in file order (A2/A3: "ring-controller.atlas", which makes ascend-operator write a
  /// ranktable; A5 has none).
  std::vector<std::pair<std::string, std::string>> pod_labels;
  std::string schedule_policy;  ///< huawei.com/schedule_policy annotation of engine pods; empty = none
  /// ASCEND_MF_TRANSFER_PROTOCOL of sglang engines (the mf-store's KV transfer): "device_rdma" (A2's RoCE NICs)
  /// or "sdma" (A3's and A5's on-package links).
  std::string mf_transfer_protocol;
};
/// The known profile named `name` (exact match), or nullptr. The profiles are parsed from the embedded
/// manifests/hardware_profiles.yaml on first use; a broken file is a build defect (std::logic_error).
const HardwareProfile* find_hardware_profile(std::string_view name);
/// Every known profile, in file order.
const std::vector<HardwareProfile>& hardware_profiles();
/// Parses profile data in the format of manifests/hardware_profiles.yaml (exposed for tests). Throws
/// validation::ValidationError naming every problem: unknown or missing fields, wrong types, duplicate names,
/// invalid label keys or values.
std::vector<HardwareProfile> parse_hardware_profiles(const std::string& yaml_text, const std::string& source);

}  // namespace mindie::hardware
