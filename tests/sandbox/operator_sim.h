// A stand-in for MindCluster infer-operator (see shared/docs/infer-operator-behaviour.md): which pods an
// InferServiceSet leads to and which status the operator reports. Pure functions; the API server stores the result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// One workload instance the operator keeps: InferService `service`, role `role`, instance `index`.
struct InstanceRef {
  int service = 0;
  std::string role;
  int index = 0;
  bool operator==(const InstanceRef&) const = default;
};

/// Label keys the operator puts on pods.
inline constexpr const char* kLabelInferService = "infer.huawei.com/inferservice-name";
inline constexpr const char* kLabelInstanceSet = "infer.huawei.com/instanceset-name";
inline constexpr const char* kLabelInstanceIndex = "infer.huawei.com/instanceset-index";
inline constexpr const char* kLabelOperator = "infer.huawei.com/ascend-infer-operator";

/// Every instance the InferServiceSet `iss` asks for: services 0..spec.replicas-1 × roles × 0..role.replicas-1.
/// Malformed parts (missing or non-integer replicas, roles without a name) count as zero instances, as the operator
/// would refuse them.
std::vector<InstanceRef> desired_instances(const nlohmann::json& iss);

/// The instance a pod belongs to, read from its operator labels; false if the pod does not carry them.
bool instance_of_pod(const nlohmann::json& pod, const std::string& iss_name, InstanceRef& out);

/// The pods of a newly created instance (role.spec.replicas of them, named after the workload kind: StatefulSet
/// `X-i-r-k-<ordinal>`, Deployment `X-i-r-k-<hash>-<suffix>` derived deterministically from the names), with the
/// template's labels + operator labels, the operator's env added to every container, a controller ownerReference to
/// `iss`, a nodeName, and a Running status. In a master/standby pair (controller or coordinator role with 2 pods
/// per instance) the second pod is Running but not Ready. `now` is the RFC 3339 timestamp for conditions.
std::vector<nlohmann::json> pods_for_instance(const nlohmann::json& iss, const InstanceRef& instance,
                                              const std::string& now);

/// The InferServiceSet status the operator reports given the set's current `pods`: replicas, readyReplicas
/// (InferServices whose every instance has all pods Ready; roles with replicas 0 count as ready),
/// observedGeneration and a Ready condition. `previous` is the current status, so lastTransitionTime only moves when
/// the condition flips.
nlohmann::json infer_service_set_status(const nlohmann::json& iss, const std::vector<nlohmann::json>& pods,
                                        const nlohmann::json& previous, const std::string& now);

}  // namespace mindie::sandbox
