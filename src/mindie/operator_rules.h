// What MindCluster infer-operator refuses or never changes, as checks on objects: the rules deploy, scale and status
// apply before writing or when explaining what runs. Each rule names its source file (and function) in
// Ascend/mind-cluster component/infer-operator/pkg/controller/. Pure: objects in, findings out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mindie/render.h"

namespace mindie::operator_rules {

/// Names of the roles of a rendered or live InferServiceSet whose metadata.labels carry
/// infer.huawei.com/gang-schedule "true", in role order. infer-operator refuses such a role unless Volcano's
/// PodGroup CRD was established when it started (v1/instanceset_controller.go validate, SetupWithManager).
std::vector<std::string> gang_roles(const boost::json::object& iss);

/// Whether `role` is one of gang_roles(iss).
bool is_gang_role(const boost::json::object& iss, const std::string& role);

/// A Service of the cluster already holding a nodePort a deployment needs.
struct NodePortConflict {
  render::NodePortClaim claim;  ///< what the deployment needs
  std::string holder_ns;        ///< the Service holding the port
  std::string holder_name;
};

/// The claims whose port a Service in `services` (items of a cluster-wide Service list) already holds, other than
/// the claim's own Service (a redeploy keeps its port). A taken port stops the coordinator for good: the operator
/// creates role Services before workloads and gives up at the first failure (v1/instanceset_controller.go
/// reconcileWorkLoads, checkOrCreateService).
std::vector<NodePortConflict> node_port_conflicts(const std::vector<render::NodePortClaim>& claims,
                                                  const boost::json::array& services);

/// The range kube-apiserver allocates nodePorts from unless its --service-node-port-range says otherwise
/// (kubernetes/kubernetes pkg/kubeapiserver/options, DefaultServiceNodePortRange); the config accepts the same.
inline constexpr int kNodePortMin = 30000;
inline constexpr int kNodePortMax = 32767;

/// Every nodePort a Service in `services` (items of a Service list) holds.
std::set<int> held_node_ports(const boost::json::array& services);

/// A free port for each of `wanted`, to suggest: the first from its own port upward, wrapping within
/// kNodePortMin..kNodePortMax, that is not in `taken` and not suggested for an earlier one; 0 when none is left.
std::vector<int> free_node_ports(const std::vector<render::NodePortClaim>& wanted, std::set<int> taken);

/// The nodePort the claim's own Service holds in `services` (a cluster-wide Service list), if it exists with one.
/// infer-operator never updates a role Service (v1/instanceset_controller.go checkOrCreateService): in
/// infer_service_set mode a redeploy with another port leaves the live one as it is.
std::optional<int> own_node_port(const render::NodePortClaim& claim, const boost::json::array& services);

/// A redeploy that infer-operator would not carry out: InstanceSet labels and annotations are fixed at creation
/// (v1/inferservice_controller.go newInstanceSet; updateExistInstanceSets copies only the spec), so a change of a live
/// role's gang scheduling or schedule policy would give its new instances no PodGroup or a stale policy.
struct FixedAtCreation {
  std::string role;
  std::string instance_set;  ///< the live InstanceSet's name
  std::string what;          ///< e.g. "gang scheduling (label infer.huawei.com/gang-schedule)"
  std::string live;          ///< the live value ("" = absent)
  std::string wanted;        ///< the rendered value
};

/// Compares each role of the rendered InferServiceSet `iss` with its live InstanceSet among `instance_sets` (items
/// of an InstanceSet list; InferService "<iss name>-0"): the gang-schedule label (absent = "false") and, when the
/// live InstanceSet carries one, the huawei.com/schedule_policy annotation the operator copied from the pod
/// template. Roles without a live InstanceSet are new and fine.
std::vector<FixedAtCreation> fixed_at_creation_changes(const boost::json::object& iss,
                                                       const boost::json::array& instance_sets);

/// The kubectl-mindie template hash (render::kTemplateHashAnnotation) on a workload's pod template; "" when it has
/// none (made before kubectl-mindie recorded hashes, or not from kubectl-mindie's template).
std::string workload_template_hash(const boost::json::value& workload);

/// A workload as kubectl names it: "statefulset/NAME" or "deployment/NAME" (its "kind", which callers set on list
/// items; "workload/NAME" without one).
std::string workload_ref(const boost::json::value& workload);

/// Per role of `iss` (rendered): the live instance workloads in `workloads` (items of StatefulSet and Deployment
/// lists carrying the operator's labels) that run another pod template than the role's, because infer-operator never
/// updates an existing workload (workload/statefulset_handler.go, deployment_handler.go), as workload_ref names them.
/// Only instances the role keeps (index below its replicas) count; roles with none are left out.
std::map<std::string, std::vector<std::string>> instances_on_other_templates(const boost::json::object& iss,
                                                                             const boost::json::array& workloads);

/// The Volcano PodGroups infer-operator makes for the instances of `role` in InferService `service` of set `iss` are
/// named "<this prefix><index>", i.e. "pg-<iss>-<service>-<role>-<index>" (podgroup_manager.go). They are left
/// behind on scale-in and reused unchanged on a later scale-out (GetOrCreatePodGroupForInstance), so deploy and scale
/// delete those of removed instances.
std::string pod_group_prefix(const std::string& iss, int service, const std::string& role);

/// The PodGroup of the instance whose workload is `workload_name` ("<iss>-<service>-<role>-<index>"): the same name
/// with pod_group_prefix's "pg-" (podgroup_manager.go GetPGNameFromIndexer).
std::string workload_pod_group(const std::string& workload_name);

/// The annotation kubectl-mindie puts on a gang role's InstanceSet when a scale removes instances: each removed
/// index with the time, {"1":"2026-12-05T06:01:02Z"}. infer-operator's rescheduler records a fault for the workload of
/// every deleted pod of a gang-scheduled InstanceSet and keeps it in memory until the operator restarts (or sees the
/// InstanceSet being deleted, which a plain delete without finalizers never shows it); a record left by a removed
/// instance makes it delete a later instance of that index as soon as it is made, and that one's pods going away
/// record the next fault: a rebuild loop (Ascend/mind-cluster component/infer-operator/pkg/controller/rescheduling/
/// rescheduling.go, handlePodDelete, recordWorkLoadFault, DoRescheduling, CleanupWithInstanceSetDeletion).
inline constexpr const char* kRemovedGangInstancesAnnotation = "kubectl-mindie/removed-gang-instances";

/// Where infer-operator runs as its published manifest installs it (Ascend/mind-cluster
/// component/infer-operator/build/infer-operator.yaml), for the restart that clears its fault records.
inline constexpr const char* kOperatorDeployment = "infer-operator-manager";
inline constexpr const char* kOperatorNamespace = "mindx-dl";

/// The removed instances `instance_set` (an InstanceSet) records in kRemovedGangInstancesAnnotation: index -> time.
/// Unreadable entries are skipped.
std::map<int, std::string> removed_gang_instances(const boost::json::value& instance_set);

/// The annotation's value once a scale from `before` down to `after` instances at `when` is added to `recorded`.
std::string removed_gang_instances_value(std::map<int, std::string> recorded, int after, int before,
                                         const std::string& when);

/// How to move running instances of `role` in namespace `ns` (`workloads` as workload_ref names them) to the current
/// pod template, which infer-operator applies only to instances it creates: kubectl mindie rollout restart (which
/// deletes each workload for the operator to make again, keeping the role serving), except for a gang role (`gang`),
/// where that starts the rebuild loop unless infer-operator is stopped meanwhile: rollout restart --stop-operator, or
/// gang_ways_out.
std::string recreate_advice(const std::string& ns, const std::string& role, bool gang,
                            const std::vector<std::string>& workloads);

/// The ways to make gang role `role` of namespace `ns` run new instances from `lowest` up without infer-operator's
/// rebuild loop: no instance of those names left (scale below `lowest`, impossible for 0; or delete the
/// deployment), then, once their pods are gone, a restart of the operator, the only thing that clears its fault
/// records (a delete leaves them: CleanupWithInstanceSetDeletion runs only for an InstanceSet it sees being deleted,
/// and a background delete without finalizers is never seen so), then scale out or deploy again.
std::string gang_ways_out(const std::string& ns, const std::string& role, std::int64_t lowest);

/// The scale flag of a role: --prefill, --decode, --encode, --hybrid for the PD-hybrid union role.
std::string scale_flag(const std::string& role);

/// What a scale-out of a gang role must know to be safe from the rebuild loop.
struct GangScaleOut {
  std::string ns;
  std::string role;
  std::string workload_prefix;         ///< "<iss>-0-<role>-": the instance workloads' names without the index
  int from = 0;                        ///< live instances
  int to = 0;                          ///< instances wanted
  std::map<int, std::string> removed;  ///< removed_gang_instances of the role's InstanceSet
  /// Pods of the role's instances at or above `from` (the pods of removed instances, still going): name -> index.
  std::map<std::string, int> leftover_pods;
  bool operator_restarted = false;  ///< the user says infer-operator restarted after those pods were gone
};

/// Why the scale-out would start infer-operator's rebuild loop, with what to do instead; "" when it is safe: no pod
/// of a removed instance is still going (its final deletion records a fault later, after a restart too), and no
/// instance it makes was removed by an earlier scale unless the operator restarted since.
std::string gang_scale_out_refusal(const GangScaleOut& scale);

}  // namespace mindie::operator_rules
