// MindCluster's pod labels and annotations that both the MindIE and the AIBrix renderers set (MindCluster's
// PodGroup/pod label and annotation tables, dlug_api_024; its StormService guide), in one place.
#pragma once

#include <string_view>

namespace mindie::mindcluster {

/// Pod label: fault rescheduling of a Volcano-scheduled pod (see FaultScheduling).
inline constexpr const char* kFaultSchedulingLabel = "fault-scheduling";
/// Pod label: how often the business plane retries before the pod is rescheduled.
inline constexpr const char* kFaultRetryTimesLabel = "fault-retry-times";
/// Pod label: "on" reschedules a single faulty pod instead of its whole group.
inline constexpr const char* kPodReschedulingLabel = "pod-rescheduling";
/// Pod template annotation: how many pods of a group Volcano must place together.
inline constexpr const char* kMinAvailableAnnotation = "huawei.com/schedule_minAvailable";
/// Pod template annotation: "pod" recovers a fault by recreating the pod alone.
inline constexpr const char* kRecoverPolicyPathAnnotation = "huawei.com/recover_policy_path";
/// Pod template annotation naming the Volcano schedule policy of the hardware profile; infer-operator copies it
/// onto the InstanceSet at creation and never updates it (Ascend/mind-cluster
/// component/infer-operator/pkg/controller/v1/inferservice_controller.go, newInstanceSet).
inline constexpr const char* kSchedulePolicyAnnotation = "huawei.com/schedule_policy";
/// Pod template annotation: the hardware profile's super-pod block rule.
inline constexpr const char* kSpBlockAnnotation = "sp-block";

/// The fault-scheduling label's values: grace deletes the faulty instance's pods gracefully (forcing after 15
/// minutes) before rescheduling, force deletes them at once, off never reschedules.
enum class FaultScheduling { Grace, Force, Off };

/// "grace", "force", "off".
inline std::string_view to_string(FaultScheduling f) {
  switch (f) {
    case FaultScheduling::Grace: return "grace";
    case FaultScheduling::Force: return "force";
    case FaultScheduling::Off: return "off";
  }
  return "off";
}

}  // namespace mindie::mindcluster
