// The status report of one AIBrix StormService: its roles, their replicas (pod groups) and pods, the rescheduling
// evidence (recreated pods, restarts), the per-replica Services, and why what is not ready is not. Pure: the objects
// status read in, a typed StormStatus out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kube/pod_state.h"

namespace mindie::aibrix {

/// Everything status reads for one StormService: the object, its pods (storm-service-name=<app>), the Services
/// kubectl-mindie wrote for it (services_selector) and the namespace's pod events (involvedObject.kind=Pod).
struct StormStatusInputs {
  boost::json::object storm_service;
  boost::json::array pods;
  boost::json::array services;
  boost::json::array events;
};

/// One pod of a replica.
struct StormPod {
  kube::PodState state;
  std::optional<std::int64_t> pod_group_index;  ///< AIBrix's pod-group-index label
  bool ready = false;                           ///< Ready and not being deleted
  std::int64_t earlier_pods = 0;                ///< pods of this name with another uid that events name (recreations)
  /// Recreated, and made at or after the recorded change of its role's pod template (kTemplateChangeAnnotation).
  bool after_template_change = false;
  std::optional<std::string> last_event;  ///< the latest event about an earlier pod, else the latest warning
};

/// One replica (pod group) of a role.
struct StormGroup {
  std::int64_t replica = 0;  ///< role-replica-index (-1: pods whose label is unreadable)
  bool ready = false;        ///< wanted, with podGroupSize pods, all ready
  std::vector<StormPod> pods;
};

/// One role (prefill, decode, routing).
struct StormRole {
  std::string name;
  std::int64_t replicas = 0;                    ///< spec
  std::int64_t pod_group_size = 1;              ///< spec podGroupSize (at least 1)
  std::optional<std::string> min_available;     ///< huawei.com/schedule_minAvailable (none for routing)
  std::optional<std::int64_t> status_replicas;  ///< the controller's roleStatuses, when present
  std::optional<std::int64_t> status_ready_replicas;
  std::int64_t ready_replicas = 0;  ///< replicas whose pods are all present and ready, counted here
  std::int64_t pods = 0;
  std::int64_t ready_pods = 0;
  std::int64_t restarts = 0;
  std::int64_t recreated_pods = 0;
  std::vector<StormGroup> groups;
};

/// The report. See build_storm_status for the rules; to_json for the shape scripts read.
struct StormStatus {
  std::string ns;
  std::string name;
  std::int64_t generation = 1;
  std::optional<std::int64_t> observed_generation;
  bool ready = false;
  std::vector<StormRole> roles;
  std::vector<std::string> expected_services, missing_services, extra_services;
  /// "pod P (role decode, replica 0, pod 1): recreated: 1 earlier pod of this name (kubelet Killing: ...)", or
  /// "recreated after a template change: ..." for a pod made since kubectl-mindie changed its role's template,
  /// "pod P (...): 3 restarts, last exit Error (exit code 1)".
  std::vector<std::string> rescheduling;
  /// "pod P (role prefill, replica 1): crash loop: ...", "role decode replica 1: 1 of 2 pods".
  std::vector<std::string> unready;

  /// The stable JSON shape (docs/status.md):
  /// {apiVersion: "kubectl-mindie/v1", kind: "StormServiceStatus", namespace, stormService, generation,
  ///  observedGeneration (null when absent), ready,
  ///  roles: [{name, replicas, podGroupSize, minAvailable, statusReplicas, statusReadyReplicas, readyReplicas,
  ///           desiredPods, pods, readyPods, restarts, recreatedPods,
  ///           groups: [{replica, ready, pods: [{name, podGroupIndex, phase, status, ready, restarts, createdAt,
  ///                     ageSeconds, node, reason, recreated, recreatedAfterTemplateChange, earlierPods,
  ///                     lastEvent}]}]}],
  ///  services: {expected, missing, extra}, rescheduling, unready}
  boost::json::object to_json() const;
};

/// Builds the report of StormService inputs.storm_service in `ns` (`now` gives ages). Ready: the controller has
/// observed the current generation and every role has exactly its replicas, each with podGroupSize pods, all ready,
/// and no pods beyond them. Pods are grouped by AIBrix's labels (role-name, role-replica-index, pod-group-index),
/// never by name. A pod is "recreated" when pod events name a pod of the same name with another uid: an earlier
/// pod in that slot was killed (a fault reschedule by MindCluster, a manual delete, or a role template change), as
/// AIBrix's stateful roles keep pod names; "after a template change" when the StormService records
/// (kTemplateChangeAnnotation) that its role's template changed at or before the pod was made. Pods are explained by
/// kube::read_pod_state.
StormStatus build_storm_status(const std::string& ns, const StormStatusInputs& inputs,
                               std::chrono::system_clock::time_point now);

/// The human view: the role table, then role → replica (pod group) → pods (READY, STATUS, RESTARTS, AGE, RECREATED:
/// earlier pods of the name; `wide` adds NODE), then the Services, the rescheduling evidence and the not-ready lines.
std::string render_storm_status(const StormStatus& report, bool wide = false);

/// "waiting for APP: prefill 1/2 decode 1/1": ready replicas of the spec's, per role.
std::string storm_progress_line(const StormStatus& report);

}  // namespace mindie::aibrix
