// --framework aibrix: deploy, scale, status and delete of an AIBrix StormService (orchestration.aibrix.ai/v1alpha1)
// and the per-replica Services its routing proxy addresses, with the same conventions as the MindIE commands
// (validation before any request, server-side apply, guarded JSON Patches, kubectl-style output and errors). The
// objects come from src/aibrix (parse_storm_config, render_storm_service, plan_scale); this file only talks to the
// API server.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// The StormService resource (orchestration.aibrix.ai/v1alpha1, namespaced).
extern const kube::GVR kStormServices;

/// --framework and the flags only the AIBrix path has, as given.
struct FrameworkFlags {
  std::string framework = "mindie";  ///< --framework: mindie (default) or aibrix
  std::string app;                   ///< --app: the StormService name (scale, status, delete)
  std::string role;                  ///< --role: prefill, decode or routing (scale)
  std::optional<int> replicas;       ///< --replicas: the role's new replica count (scale)
};

/// Binds --framework to `desc` for deploy, scale, status and delete, plus --app (scale, status, delete) and
/// --role/--replicas (scale). Other commands get nothing.
void add_framework_flags(boost::program_options::options_description& desc, FrameworkFlags& flags,
                         const std::string& command);

/// True for --framework aibrix, false for mindie. Throws UsageError for any other value, and when an AIBrix-only
/// flag (--app, --role, --replicas) is given without --framework aibrix (it would otherwise be ignored).
bool use_aibrix(const FrameworkFlags& flags);

/// Runs `command` (deploy, scale, status or delete) for --framework aibrix: flags and files are validated before
/// the connection is made (from `global`, not at all under deploy --dry-run=client). Output goes to `printer`.
/// Flags of the MindIE path that mean nothing here (-e, --config-dir, --scripts-dir, --name, --overrides,
/// --output-dir, --prefill/--decode/-f on scale, --watch on status) are UsageErrors. Throws what the command
/// throws.
void run_aibrix(const std::string& command, const FrameworkFlags& framework, const DeployFlags& deploy,
                const ScaleFlags& scale, const StatusFlags& status, const DeleteFlags& del,
                const GlobalFlags& global, Printer& printer);

/// Everything status reads for one StormService: the object, its pods (storm-service-name=<app>), the Services
/// kubectl-mindie wrote for it (services_selector) and the namespace's pod events (involvedObject.kind=Pod).
struct StormStatusInputs {
  boost::json::object storm_service;
  boost::json::array pods;
  boost::json::array services;
  boost::json::array events;
};

/// Builds the status report of one StormService (pure; `now` gives ages). Shape (documented in docs/status.md):
/// {apiVersion: "kubectl-mindie/v1", kind: "StormServiceStatus", namespace, stormService, generation,
///  observedGeneration (status.observedGeneration; null when absent), ready,
///  roles: [{name, replicas (spec), podGroupSize, minAvailable (huawei.com/schedule_minAvailable; null for routing),
///           statusReplicas / statusReadyReplicas (the controller's roleStatuses; null when absent),
///           readyReplicas (replicas whose pods are all present and ready, counted here), desiredPods, pods,
///           readyPods, restarts, recreatedPods,
///           groups: [{replica, ready, pods: [{name, podGroupIndex, phase, status, ready, restarts, createdAt,
///                     ageSeconds, node, reason, recreated, earlierPods, lastEvent}]}]}],
///  services: {expected: [names], missing: [names], extra: [names]},
///  rescheduling: ["pod P (role decode, replica 0, pod 1): recreated: 1 earlier pod of this name (kubelet
///                 Killing: ...)", "pod P (...): 3 restarts, last exit Error (exit code 1)"],
///  unready: ["pod P (role prefill, replica 1): crash loop: ...", "role decode replica 1: 1 of 2 pods"]}
/// Ready: the controller has observed the current generation and every role has exactly its replicas, each with
/// podGroupSize pods, all ready, and no pods beyond them. Pods are grouped by AIBrix's labels (role-name,
/// role-replica-index, pod-group-index), never by name. A pod is "recreated" when pod events name a pod of the same
/// name with another uid: an earlier pod in that slot was killed (a fault reschedule by MindCluster, a manual
/// delete, or a role template change), as AIBrix's stateful roles keep pod names.
boost::json::object build_storm_status_report(const std::string& ns, const StormStatusInputs& inputs,
                                              std::chrono::system_clock::time_point now);

/// Renders a report as the human view: the role table, then role → replica (pod group) → pods, then the
/// rescheduling evidence and the not-ready lines.
std::string render_storm_status(const boost::json::object& report);

}  // namespace mindie::cmd
