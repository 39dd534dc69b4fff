// The status report of a MindIE deployment: what runs per role, instance and pod, why what is not running is not
// running, and where the live state differs from the baseline. Pure: the objects status read (StatusInputs) in, a
// typed Report out; knows nothing of HTTP. Its JSON form (Report::to_json) is the stable shape of `status -o json`,
// documented in docs/status.md.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/pod_state.h"

namespace mindie::status {

/// Everything status reads from the cluster for one namespace (one request per kind, or a watch cache).
struct StatusInputs {
  boost::json::object config_map;                  ///< motor-config
  std::optional<boost::json::object> service_set;  ///< the InferServiceSet, absent when not found
  boost::json::array infer_services;               ///< the set's InferServices
  boost::json::array instance_sets;                ///< their InstanceSets
  boost::json::array pods;                         ///< the InferServices' pods (slim_pod is enough)
  boost::json::array events;                       ///< warning events of the namespace (may be empty)
  boost::json::array deployments;  ///< multi_deployment: the deployment's Deployments (then the set fields are empty)
  /// infer_service_set: the operator's instance workloads (StatefulSets and Deployments, each with "kind"), whose
  /// pod templates say which template each instance runs (infer-operator never updates them). slim_workload is
  /// enough.
  boost::json::array workloads;
  /// Why `workloads` could not be read (a 403 on listing them), "" when they were: the report then says so instead
  /// of judging templates.
  std::string workloads_unknown;
  /// The deployment's Services: infer_service_set the operator's (selected as the pods are), the other modes
  /// kubectl-mindie's (by its labels).
  boost::json::array services;
  /// Why `services` could not be read (a 403 on listing them), "" when they were.
  std::string services_unknown;
  /// Normal events about apps/v1 objects (the StatefulSet controller's SuccessfulCreate, the deployment
  /// controller's ScalingReplicaSet): each incarnation of an instance's workload has its own uid, so they tell a
  /// workload the operator deleted and made again from one that was always there. Read for gang roles only.
  boost::json::array workload_events;
  /// Why `workload_events` could not be read (a 403 on listing events), "" when they were or were not needed.
  std::string workload_events_unknown;
  /// The roles a kubectl-mindie scale, redeploy or rollout under way is changing (its intent in the namespace lock):
  /// role → (from, to) instances. Between its workload write and its baseline write the two disagree: that is
  /// converging, not drift.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> scaling;
  /// The command of `scaling`: "scale", "deploy", or "rollout" (a rollout restart's temporary instances).
  std::string scaling_by = "scale";
};

/// A Warning event as the report shows it (the latest of an object first).
struct Event {
  std::string reason;
  std::string message;
  std::int64_t count = 1;                 ///< count, else series.count (events.k8s.io writers), else 1
  std::optional<std::int64_t> last_seen;  ///< seconds since the epoch; nullopt when no time was readable
  std::string instance_set;               ///< operator events only: the InstanceSet it is about
};

/// One pod.
struct Pod {
  kube::PodState state;
  std::int64_t npus = 0;  ///< huawei.com/ resources the containers ask for (limits)
  /// state.reason, except "standby (only the master passes readiness)" for the standby of a healthy pair.
  std::string reason;
  std::vector<Event> events;  ///< the latest Warning events about it, only when it is not ready (at most 3)
};

/// An instance whose workload infer-operator deleted and made again more than once, or made again while the pods of
/// the one before are still going (made twice with nothing going is a plain re-creation: a scale-in and out, a
/// deliberate delete). Its rescheduler rebuilds a gang instance each
/// time one of its pods is deleted, and the pods of the workload it deleted, going away, count as the next deletion
/// (Ascend/mind-cluster component/infer-operator/pkg/controller/rescheduling/rescheduling.go, handlePodDelete and
/// DoRescheduling).
struct Rebuild {
  std::int64_t workloads = 0;  ///< incarnations of its workload (distinct uids) in the controllers' events
  std::int64_t since = 0;      ///< seconds since the epoch: the earliest incarnation's first event
  std::int64_t latest = 0;     ///< seconds since the epoch: when the current incarnation began
  /// Still under way: a pod of the instance is terminating, or the current incarnation is younger than
  /// kRebuildQuietSeconds (the next deletion comes one grace period after the last).
  bool ongoing = false;
};

/// How long a rebuilt gang instance must stay as it is before status believes the rebuilding stopped: longer than
/// the grace period of the pods kubectl-mindie renders (10 s) several times over.
inline constexpr std::int64_t kRebuildQuietSeconds = 60;

/// One instance of a role: one StatefulSet/Deployment of the operator (infer_service_set) or one Deployment
/// (multi_deployment).
struct Instance {
  std::string infer_service;    ///< the InferService it belongs to ("" in multi_deployment)
  std::int64_t index = 0;       ///< instanceset-index (-1: pods whose label is unreadable)
  bool wanted = false;          ///< the live spec asks for it (else: being scaled in)
  bool healthy = false;         ///< wanted, enough of its pods exist and are ready, none terminating, not being rebuilt
  std::int64_t ready_pods = 0;  ///< ready and not terminating
  std::int64_t terminating_pods = 0;  ///< with a deletionTimestamp: never ready, whatever their Ready condition says
  std::optional<Rebuild> rebuild;     ///< gang roles: set when its workload has been made more than once
  std::vector<Pod> pods;
  std::optional<std::string> deployment;     ///< multi_deployment: its Deployment (nullopt: gone)
  std::optional<std::string> template_hash;  ///< its workload's template hash (nullopt: none)
  /// Its workload as kubectl names it ("statefulset/NAME", "deployment/NAME"; "" none) and that object's uid: what
  /// rollout restart replaces, and how it tells the replacement from the object it replaced.
  std::string workload;
  std::string workload_uid;
  /// Every pod of it runs the current pod template: its workload was made from the role's template
  /// (infer_service_set) and has rolled out completely (rollout::pending). nullopt: not judged (not wanted, no
  /// workload, or the workloads could not be read). A wanted instance that is not current is not healthy.
  std::optional<bool> current;
  std::string rollout;  ///< why it is not current ("" when it is or was not judged)
};

/// The HPA owning a role's instance count, as the InstanceSet reports it (status.scalingResourceStatus).
struct Hpa {
  std::string name;
  bool ready = false;
  std::string message;
};

/// One role (controller, coordinator, prefill, decode, union, kv-pool, kv-conductor, mf-store).
struct Role {
  std::string name;
  std::optional<std::int64_t> baseline_instances;  ///< nullopt: the baseline is not usable
  std::optional<std::int64_t> spec_instances;      ///< nullopt: the role is not live
  std::optional<std::int64_t> observed_instances;  ///< InstanceSets' status.replicas; nullopt: none seen
  std::optional<std::int64_t> wanted_instances;    ///< over all InferServices (HPA counts included)
  std::int64_t pods_per_instance = 0;
  std::int64_t desired_pods = 0;
  std::int64_t ready_pods = 0;
  std::int64_t pods = 0;
  std::int64_t terminating_pods = 0;
  std::int64_t restarts = 0;
  std::int64_t ready_instances = 0;
  bool healthy = false;
  bool master_standby = false;  ///< controller/coordinator with 2 pods: only the master passes readiness
  bool hpa_owned = false;       ///< scalingPolicy HPA: the HPA, not the spec, sets the instance count
  /// infer-operator gang-schedules its instances (the InstanceSet's, else the live role's, gang-schedule label):
  /// a deleted pod makes it rebuild the whole instance.
  bool gang = false;
  std::optional<Hpa> hpa;
  std::optional<std::string> template_hash;        ///< the role's pod template hash in the live spec
  std::int64_t instances_on_current_template = 0;  ///< wanted instances with Instance::current true
  std::int64_t instances_on_other_templates = 0;   ///< wanted instances with Instance::current false
  /// Why the new pods of instances that have not rolled out cannot be scheduled (their PodScheduled=False messages,
  /// each once).
  std::vector<std::string> rollout_unschedulable;
  std::vector<std::string> other_images;                    ///< images pods run that the spec does not name
  std::vector<Event> operator_events;                       ///< infer-operator's Warning events about its InstanceSets
  std::vector<std::string> instance_sets_without_strategy;  ///< InstanceSets lacking the priority-scheduling label
  /// InstanceSets whose pod template is not yet the role's: infer-operator copies a changed template into them a
  /// reconcile after the InferService (inferservice_controller.go updateExistInstanceSets), and makes new workloads
  /// from theirs.
  std::vector<std::string> instance_sets_on_other_templates;
  std::vector<Instance> instances;

  /// Off everywhere: neither the baseline nor the live spec asks for it and no pod of it exists (kv-pool,
  /// kv-conductor when not configured). Views leave such roles out.
  bool unused() const;
};

/// One InferService of the set.
struct InferService {
  std::string name;
  std::int64_t index = 0;
  bool ready = false;  ///< the operator's Ready condition
  std::vector<Event> events;
};

/// multi_deployment: one Deployment of the deployment.
struct DeploymentStatus {
  std::string name;
  std::string role;
  std::int64_t index = 0;
  std::int64_t replicas = 0;
  std::int64_t ready_replicas = 0;
  std::int64_t updated_replicas = 0;
  std::int64_t generation = 0;
  std::int64_t observed_generation = 0;
  std::int64_t old_replicas = 0;  ///< pods of its earlier ReplicaSets (status.replicas - status.updatedReplicas)
  std::string rollout;            ///< rollout::pending: why its pods do not all run its template ("" when they do)
};

/// One Service of the deployment, as `kubectl get service` shows it.
struct ServiceStatus {
  std::string name;
  std::string type;        ///< spec.type ("ClusterIP" when absent)
  std::string cluster_ip;  ///< spec.clusterIP ("" before allocation)
  /// spec.ports: {name, port, nodePort (when set), protocol}; in the table "1025:31015/TCP" as kubectl prints them.
  boost::json::array ports;
};

/// The report. See build_report for the rules; to_json for the shape scripts read.
struct Report {
  std::string ns;
  std::string name;         ///< the InferServiceSet (or, multi_deployment, the workload label)
  std::string deploy_mode;  ///< as recorded ("" when nothing says)
  bool found = false;       ///< the InferServiceSet (multi_deployment: some Deployment) exists
  bool baseline_usable = false;
  bool ready = false;  ///< every role healthy, everything observed, no pods left of removed instances
  std::optional<std::int64_t> generation;           ///< the InferServiceSet's; nullopt in multi_deployment
  std::optional<std::int64_t> observed_generation;  ///< its status.observedGeneration
  std::vector<DeploymentStatus> deployments;        ///< multi_deployment only
  std::vector<InferService> infer_services;         ///< infer_service_set only
  std::vector<Role> roles;
  std::vector<ServiceStatus> services;  ///< by name; headless per-instance Services left out
  std::vector<std::string> drift;       ///< live state that disagrees with the baseline or the spec
  std::vector<std::string> converging;  ///< work in flight: a controller has not caught up yet
  std::vector<std::string> warnings;    ///< what the report could not judge (a forbidden list)
  std::vector<std::string> unready;     ///< why what should run does not
  /// Seconds since the epoch when the report would change with nothing else changing (a rebuilt instance's quiet
  /// period ends): a watcher judges again then. nullopt: only a change of the inputs changes it.
  std::optional<std::int64_t> recheck_at;

  /// True in the deploy modes that run plain Deployments (baseline::runs_deployments).
  bool multi() const;
  /// The stable JSON shape (docs/status.md):
  /// {apiVersion: "kubectl-mindie/v1", kind: "Status", namespace, inferServiceSet, deployMode, found,
  ///  baselineUsable, generation, observedGeneration, [deployments: [{name, role, index, replicas, readyReplicas,
  ///  updatedReplicas, oldReplicas, generation, observedGeneration, rollout}] in multi_deployment], inferServices:
  ///  [{name, index, ready,
  ///  events}], ready,
  ///  roles: [{name, baselineInstances, specInstances, observedInstances, podsPerInstance, wantedInstances,
  ///           desiredPods, readyPods, pods, terminatingPods, restarts, readyInstances, healthy, masterStandby, gang,
  ///           replicasOwner ("spec"
  ///           or "HPA"), hpa ({name, ready, message} or null), templateHash, instancesOnCurrentTemplate,
  ///           instancesOnOtherTemplates, rolloutUnschedulable, otherImages, operatorEvents,
  ///           instanceSetsWithoutStrategy,
  ///           instances: [{inferService, index, healthy, current (bool or null), rollout, readyPods, terminatingPods,
  ///                        rebuild ({workloads, since, latest, ongoing} or null),
  ///                        pods: [{name, phase, status, ready, readyContainers, containers, restarts, createdAt,
  ///                                ageSeconds, node, npus, reason, events: [{reason, message, count, lastSeen}]}],
  ///                        wanted, templateHash, deployment (multi_deployment)}]}],
  ///  services: [{name, type, clusterIP, ports: [{name, port, nodePort, protocol}]}],
  ///  drift, converging, warnings, unready: [strings]}
  boost::json::object to_json() const;
};

/// Builds the report of namespace `ns` (`now` gives pod ages). An instance is healthy when all its pods are ready
/// and none is terminating (a pod being deleted is never counted ready), it is current (Instance::current: on the
/// role's template, rolled out) and, in a gang role, infer-operator is not rebuilding it;
/// for controller/coordinator with master/standby (2 pods) one ready pod is, since only the master passes
/// readiness (infer-operator behaviour). The report is never ready above an InferService the operator reports
/// NotReady, unless only master/standby InstanceSets (healthy by that rule) keep it so. Every instance the spec asks
/// for is listed, with its pods or none; pods are grouped by the operator's labels (inferservice-name,
/// instanceset-name, instanceset-index; multi_deployment: app.kubernetes.io/component and
/// kubectl-mindie/instance-index), never by name prefix. A broken baseline is a drift line, not an error. Services are
/// listed by name, headless ones (clusterIP None: the operator's per-instance Services) left out. Throws
/// baseline::BaselineError only when nothing names the workload.
Report build_report(const std::string& ns, const StatusInputs& inputs, std::chrono::system_clock::time_point now);

/// The label selector matching the pods (and InstanceSets) of InferServiceSet `name` with `services`
/// InferServices: "infer.huawei.com/inferservice-name in (name-0,...)". The operator does not put the set's name
/// on pods, and name prefixes are ambiguous (infer-operator behaviour).
std::string service_selector(const std::string& name, std::int64_t services);

/// The product's limits (config validation: 1..16 instances per role, at most 64 pods per instance; deploy renders
/// one InferService): a live object asking for more is flagged as drift by build_report.
inline constexpr std::int64_t kMaxInstancesPerRole = 16;
inline constexpr std::int64_t kMaxPodsPerInstance = 64;
/// The most InferServices of one InferServiceSet that status looks at (spec.replicas beyond it is flagged): its
/// selectors and per-service rows never grow with a hand-edited count (issue 17: replicas 10000000 made status use
/// 9 GB).
inline constexpr std::int64_t kMaxServices = 16;

/// How many InferServices InferServiceSet `iss` asks for (spec.replicas, at least 1; 1 when absent), at most
/// kMaxServices.
std::int64_t service_count(const std::optional<boost::json::object>& iss);

/// Pods InferServiceSet `iss` asks for: InferServices × the roles' instances × pods per instance (clamped: only a
/// comparison with the pods listed needs it).
std::int64_t desired_pods(const boost::json::object& iss);

/// True when `pod`'s Ready condition is True.
bool pod_ready(const boost::json::value& pod);

/// The part of a pod build_report reads (name, labels, timestamps, node, container names, images and limits, the
/// status): pods are most of the bytes of a list, so status keeps only this.
boost::json::object slim_pod(const boost::json::object& pod);

/// The part of a workload build_report reads: `kind`, name, uid, generation, creationTimestamp, labels, replicas,
/// the template hash and the status fields of its rollout (rollout::pending).
boost::json::object slim_workload(const boost::json::object& workload, const std::string& kind);

}  // namespace mindie::status
