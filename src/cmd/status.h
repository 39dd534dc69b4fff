// kubectl mindie status: what runs for a MindIE deployment, per role, instance and pod, why what is not running is
// not running, and where live state differs from the baseline. One GET or LIST per kind (baseline ConfigMap,
// InferServiceSet, InferServices, InstanceSets, the instances' workloads, pods, and warning events only when a pod
// is unhealthy or missing), never a request per pod. --watch keeps the view current through the watch API.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// status's own flags, as given.
struct StatusFlags {
  std::string output;  ///< -o: "" (tree), wide, json or yaml
  bool watch = false;  ///< -w/--watch
};

/// Binds StatusFlags to `desc`.
void add_status_flags(boost::program_options::options_description& desc, StatusFlags& flags);

/// Everything status reads from the cluster for one namespace. Built by read_status_inputs (one request per
/// kind) or from a watch cache; consumed by build_status_report (pure).
struct StatusInputs {
  boost::json::object config_map;                  ///< motor-config
  std::optional<boost::json::object> service_set;  ///< the InferServiceSet, absent when not found
  boost::json::array infer_services;               ///< the set's InferServices
  boost::json::array instance_sets;                ///< their InstanceSets
  boost::json::array pods;                         ///< the InferServices' pods
  boost::json::array events;                       ///< warning events of the namespace (may be empty)
  boost::json::array deployments;  ///< multi_deployment: the deployment's Deployments (then the set fields are empty)
  /// infer_service_set: the operator's instance workloads (StatefulSets and Deployments), whose pod templates say
  /// which template each instance runs (infer-operator never updates them).
  boost::json::array workloads;
  /// Why `workloads` could not be read (a 403 on listing them), "" when they were: the report then says so instead
  /// of judging templates.
  std::string workloads_unknown;
};

/// multi_deployment: the watch targets keeping StatusInputs current: motor-config, the Deployments and pods of
/// workload `name` (cmd::multi_selector), warning events.
std::vector<kube::WatchTarget> multi_status_watch_targets(const std::string& ns, const std::string& name);

/// StatusInputs from an informer started with multi_status_watch_targets.
StatusInputs inputs_from_multi_informer(const kube::Informer& informer);

/// The label selector matching the pods (and InstanceSets) of InferServiceSet `name` with `services`
/// InferServices: "infer.huawei.com/inferservice-name in (name-0,...)". The operator does not put the set's name
/// on pods, and name prefixes are ambiguous (infer-operator behaviour).
std::string service_selector(const std::string& name, std::int64_t services);

/// How many InferServices InferServiceSet `iss` asks for (spec.replicas, at least 1; 1 when absent).
std::int64_t service_count(const std::optional<boost::json::object>& iss);

/// Reads StatusInputs for namespace `ns` (multi_deployment: GET motor-config, one LIST each of Deployments and
/// pods by cmd::multi_selector, events on trouble). Otherwise: GET motor-config (CommandError "no deployment found" when absent), GET
/// the InferServiceSet, then when it exists one LIST each of InferServices, InstanceSets, StatefulSets, Deployments
/// and pods, and one LIST of warning events only when some pod is not ready or fewer pods exist than the set asks
/// for (the operator's events then say why). Throws ApiError / TransportError / CommandError.
StatusInputs read_status_inputs(kube::Client& client, const std::string& ns);

/// Builds the status report (pure; `now` gives pod ages). Stable shape, for scripts (documented in docs/status.md):
/// {apiVersion: "kubectl-mindie/v1", kind: "Status", namespace, inferServiceSet, deployMode,
///  found (the InferServiceSet exists), baselineUsable (the stored user_config.json parses; when false the
///  baseline counts are null and drift says why), generation, observedGeneration,
///  ready (every role healthy, the operator has observed the current generation, no pods left of removed
///  instances),
///  inferServices: [{name, index, ready (the operator's Ready condition)}],
///  roles: [{name, baselineInstances, specInstances (null: not live), observedInstances (InstanceSets'
///           status.replicas; null: none seen), podsPerInstance, desiredPods, readyPods, pods, restarts,
///           readyInstances, healthy, masterStandby, replicasOwner ("spec" or "HPA"), hpa ({name, ready, message}
///           or null),
///           instances: [{inferService, index, healthy, readyPods,
///                        pods: [{name, phase, status, ready, readyContainers, containers, restarts, createdAt,
///                                ageSeconds, node, npus, reason, events: [{reason, message, count, lastSeen}]}]}]}],
///  drift: ["role prefill: baseline 3 instances, spec.template.roles[2].replicas 1", ...],
///  unready: ["pod X (role decode, instance 0): crash loop: ...", ...]}
/// In multi_deployment mode (inputs.deployments) the shape is the same with: found = some Deployment exists,
/// generation/observedGeneration null, inferServices [], instances' inferService "" and an added
/// instances[].deployment (its Deployment's name, null for pods of a Deployment that is gone), specInstances = the
/// role's live Deployments, observedInstances = those the deployment controller has observed, and an added
/// top-level deployments: [{name, role, index, replicas, readyReplicas, updatedReplicas, generation,
/// observedGeneration}]; pods are grouped by the app.kubernetes.io/component and kubectl-mindie/instance-index
/// labels.
/// An instance is healthy when all its pods are ready; for controller/coordinator with master/standby (2 pods) one
/// ready pod is healthy, since only the master passes readiness (infer-operator behaviour). Every instance below
/// the spec is listed, with its pods or none. Pods are grouped by the operator's labels (inferservice-name,
/// instanceset-name, instanceset-index), never by name prefix.
boost::json::object build_status_report(const std::string& ns, const StatusInputs& inputs,
                                        std::chrono::system_clock::time_point now);

/// Renders a report as the human view: a role table, the tree InferServiceSet → InferService → role → instance
/// → pods, then drift and not-ready lines. `wide` adds node and NPUs per pod.
std::string render_status_table(const boost::json::object& report, bool wide);

/// The watch targets that keep StatusInputs current for InferServiceSet `name` (with `services` InferServices)
/// in `ns`, in the order StatusInputs lists them: motor-config, the set, InferServices, InstanceSets, pods, events,
/// then StatefulSets and Deployments (the workloads).
std::vector<kube::WatchTarget> status_watch_targets(const std::string& ns, const std::string& name,
                                                    std::int64_t services);

/// StatusInputs from an informer started with status_watch_targets.
StatusInputs inputs_from_informer(const kube::Informer& informer);

/// The status command.
class StatusOptions {
 public:
  StatusOptions(StatusFlags flags, std::string namespace_flag);
  /// -o value, --watch with -o; no I/O. Throws UsageError.
  void validate() const;
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// Prints the view (or the report as JSON/YAML). Exits normally when the query worked, drift or not. With
  /// --watch, keeps printing until interrupted (`new_transport` gives each watch its own connection).
  /// Throws ApiError, TransportError or CommandError (no deployment in the namespace).
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  StatusFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

}  // namespace mindie::cmd
