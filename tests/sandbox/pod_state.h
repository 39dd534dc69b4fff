// Pod states as kubelet and the scheduler report them, for POST /sandbox/pod-state and --pod-state: the pod's
// status (phase, conditions, container states) and the core/v1 Events those components record. Pure functions; the
// API server stores the results.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mindie::sandbox {

enum class PodState {
  Ready,              ///< Running, every container ready
  NotReady,           ///< Running, readiness probe failing (event Unhealthy)
  ContainerCreating,  ///< Pending, containers waiting ContainerCreating
  Unschedulable,      ///< Pending, PodScheduled=False Unschedulable, no node (event FailedScheduling)
  ImagePullBackOff,   ///< Pending, waiting ImagePullBackOff (events Failed, BackOff)
  CrashLoopBackOff,   ///< Running, waiting CrashLoopBackOff after an Error exit 1, restartCount+1 (event BackOff)
  OOMKilled,          ///< as CrashLoopBackOff after an OOMKilled exit 137
  Terminating,        ///< deleted on a dead node: deletionTimestamp set, never confirmed by its kubelet
};

/// "Ready", "NotReady", ... → the state; nullopt for anything else (names are case-sensitive).
std::optional<PodState> parse_pod_state(const std::string& name);
std::string to_string(PodState state);
/// Every state name, comma-separated (for messages and --help).
std::string pod_state_names();

/// An Event a component records about a pod, before it is named and stored.
struct PodEventSpec {
  std::string type;        ///< Normal or Warning
  std::string reason;      ///< e.g. Unhealthy, FailedScheduling, BackOff
  std::string message;
  std::string component;   ///< kubelet, default-scheduler or volcano
  std::string field_path;  ///< involvedObject.fieldPath: spec.containers{NAME} for container events, else ""
};

/// A pod after a state change, with the events that change records.
struct PodTransition {
  nlohmann::json pod;
  std::vector<PodEventSpec> events;
};

/// The pod in `state` as kubelet and the scheduler would report it (status, spec.nodeName, and for Terminating
/// metadata.deletionTimestamp/deletionGracePeriodSeconds and the DisruptionTarget condition of a taint-manager
/// eviction). Restart counts and last states carry over; CrashLoopBackOff and OOMKilled add a restart. The
/// unschedulable message names the pod's NPU resource (huawei.com/...) and the sandbox's 4 nodes, in the wording of
/// the pod's scheduler (default-scheduler, or volcano for schedulerName volcano). `now` is RFC 3339.
PodTransition apply_pod_state(const nlohmann::json& pod, PodState state, const std::string& now);

/// A new core/v1 Event recording `e` about `pod`, named `<pod>.<16 hex digits of unique>` like client-go's
/// recorder. kubelet and volcano use the legacy recorder (source.component/host, firstTimestamp, lastTimestamp,
/// count 1, reportingComponent = the component); default-scheduler uses events.k8s.io/v1, which core/v1 shows as
/// eventTime (microseconds), action, reportingComponent/reportingInstance, empty source and no timestamps or count.
/// `now` is RFC 3339, `now_micro` the same instant with microseconds.
nlohmann::json make_pod_event(const nlohmann::json& pod, const PodEventSpec& e, const std::string& now,
                              const std::string& now_micro, std::uint64_t unique);

/// `existing` seen once more (the event correlator's aggregation of identical events): count+1 and lastTimestamp
/// for legacy events, series {count, lastObservedTime} for events.k8s.io ones.
nlohmann::json repeat_pod_event(nlohmann::json existing, const std::string& now, const std::string& now_micro);

/// The sandbox's nodes (spec.nodeName of simulated pods): sandbox-node-0..3.
inline constexpr int kSandboxNodes = 4;
/// Where a pod lands, derived from its name: its node, that node's IP and the pod's IP.
std::string node_for(const std::string& pod_name);
std::string host_ip_for(const std::string& pod_name);
std::string pod_ip_for(const std::string& pod_name);
/// FNV-1a, the sandbox's stable hash for generated names and addresses.
std::uint32_t fnv32a(const std::string& s);

}  // namespace mindie::sandbox
