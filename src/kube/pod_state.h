// What a pod's status says, read once: kubectl's READY and STATUS columns, restarts, age, and in plain words why
// the pod is not running. Used by every status view (MindIE roles, AIBrix StormServices) so they explain a pod
// the same way.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace mindie::kube {

/// One pod as a status view shows it.
struct PodState {
  std::string name;                         ///< metadata.name
  std::string phase;                        ///< status.phase ("" when absent)
  std::string status;                       ///< kubectl's STATUS column (see read_pod_state)
  bool ready = false;                       ///< the Ready condition is True
  bool terminating = false;                 ///< metadata.deletionTimestamp is set
  std::int64_t ready_containers = 0;        ///< containers reporting ready
  std::int64_t containers = 0;              ///< containers in the spec (or in the status, when more)
  std::int64_t restarts = 0;                ///< restartCount summed over the containers
  std::string last_exit_reason;             ///< lastState.terminated.reason of the first container with one
  std::int64_t last_exit_code = 0;          ///< its exitCode
  std::string created_at;                   ///< metadata.creationTimestamp as written
  std::optional<std::int64_t> age_seconds;  ///< now - creation (at least 0); nullopt when unreadable
  std::string node;                         ///< spec.nodeName ("" when not scheduled)
  /// Why the pod is not running, in plain words: "unschedulable: <the scheduler's message>", "cannot pull the
  /// image (ImagePullBackOff): ...", "out of memory: ...", "crash loop: N restarts, last exit R (exit code C)",
  /// "waiting: R", "the pod has ended (Failed)", "running, but not ready (readiness probe failing)" (with "; N
  /// restarts, last exit R (exit code C)" after a restart),
  /// "terminating since T (...)". "" when it is ready and not terminating.
  std::string reason;

  /// "R (exit code C)" of the last termination, "" when there was none.
  std::string last_exit() const;
};

/// Reads `pod` (an API object; any field may be absent or mistyped). `now` (seconds since the epoch) gives the age.
/// The STATUS column follows kubectl's printPod: a container's waiting reason, else its terminated reason, else the
/// phase; "Terminating" when a deletion is pending. The reason's time of a deletion is a time, not an age, so the
/// text does not change by itself (a watching view would report it on every redraw).
PodState read_pod_state(const boost::json::value& pod, std::int64_t now);

}  // namespace mindie::kube
