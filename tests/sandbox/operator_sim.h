// A stand-in for MindCluster infer-operator and the Kubernetes controllers below it (see
// shared/docs/infer-operator-behaviour.md): the objects an InferServiceSet leads to (InferService, InstanceSet,
// Deployment/StatefulSet per instance, ReplicaSet, Services, pods) and the status each controller reports. Pure
// functions; the API server stores the results.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store.h"

namespace mindie::sandbox {

/// One workload instance the operator keeps: InferService `service`, role `role`, instance `index`.
struct InstanceRef {
  int service = 0;
  std::string role;
  int index = 0;
  bool operator==(const InstanceRef&) const = default;
};

/// Label keys the operator puts on its objects.
inline constexpr const char* kLabelInferServiceSet = "infer.huawei.com/inferserviceset-name";
inline constexpr const char* kLabelInferServiceIndex = "infer.huawei.com/inferservice-index";
inline constexpr const char* kLabelInferService = "infer.huawei.com/inferservice-name";
inline constexpr const char* kLabelInstanceSet = "infer.huawei.com/instanceset-name";
inline constexpr const char* kLabelInstanceIndex = "infer.huawei.com/instanceset-index";
inline constexpr const char* kLabelOperator = "infer.huawei.com/ascend-infer-operator";
/// InstanceSet label the operator adds at creation (default Parallel); without it no workloads are created.
inline constexpr const char* kLabelPriorityStrategy = "infer.huawei.com/priority-scheduling-strategy";
/// Role (and so InstanceSet) label asking for a Volcano PodGroup per instance.
inline constexpr const char* kLabelGangSchedule = "infer.huawei.com/gang-schedule";

/// Why the operator's InstanceSet validation refuses `ist` (instanceset_controller.go validate), "" when it
/// accepts it: a NodePort role Service entry with a port whose nodePort is 0 or absent (A1), a gang-scheduled
/// InstanceSet while the PodGroup CRD is not served (`pod_groups_served`, A3), or spec.replicas absent (A4).
std::string instance_set_refusal(const nlohmann::json& ist, bool pod_groups_served);

/// The InferService index of InstanceSet `ist` of set `set_name` (the last segment of its InferService's name).
int infer_service_index(const nlohmann::json& ist, const std::string& set_name);

/// The Volcano PodGroup of instance `index` of gang InstanceSet `ist`: "pg-<InstanceSet>-<index>", minMember =
/// pods per instance, owned by the InstanceSet (podgroup_manager.go).
nlohmann::json pod_group_for(const nlohmann::json& ist, int index);

/// Whether the operator accepts the set: spec.replicas 1..64, at most 32 roles, every role named and names unique,
/// and (a sandbox limit) at most 4096 instances. The operator only logs a refusal and changes nothing.
bool infer_service_set_valid(const nlohmann::json& iss);

/// Every instance the InferServiceSet `iss` asks for: services 0..spec.replicas-1 × roles × 0..role.replicas-1;
/// empty for a set the operator refuses. Roles with missing, negative or non-integer replicas have no instances.
std::vector<InstanceRef> desired_instances(const nlohmann::json& iss);

/// The instance a pod (or workload) belongs to, read from its operator labels; false if it does not carry them.
bool instance_of_pod(const nlohmann::json& pod, const std::string& iss_name, InstanceRef& out);

/// A controller ownerReference to `owner` (apiVersion, kind, name, uid, controller, blockOwnerDeletion).
nlohmann::json controller_ref(const nlohmann::json& owner);

/// InferService `X-<index>` of set `iss`: labels inferserviceset-name/inferservice-index, owned by the set, spec =
/// the set's template (roles, schedulingStrategy).
nlohmann::json infer_service_for(const nlohmann::json& iss, int index);

/// InstanceSet `<InferService>-<role>` of InferService `is`: the role's metadata.labels plus inferservice-name,
/// instanceset-name and priority-scheduling-strategy Parallel; the pod template's huawei.com/schedule_policy as an
/// annotation when the role has none of its own; owned by the InferService, spec = the role.
nlohmann::json instance_set_for(const nlohmann::json& is, const nlohmann::json& role);

/// Whether a role (or InstanceSet spec) hands its replicas to an HPA (scalingPolicy.type HPA).
bool hpa_scaled(const nlohmann::json& role);

/// The workload of instance `index` of InstanceSet `ist`: `<InstanceSet>-<index>`, a StatefulSet when
/// spec.workload.kind says so, else a Deployment; replicas = the role's spec.replicas (pods per instance), the role's
/// pod template with the operator's labels and env (INFER_SERVICE_NAME, INFER_SERVICE_INDEX, INSTANCE_ROLE,
/// INSTANCE_INDEX), owned by the InstanceSet. `set_name` is the InferServiceSet's name.
nlohmann::json workload_for(const nlohmann::json& ist, int index, const std::string& set_name);

/// The ReplicaSet of a Deployment: `<deployment>-<pod-template-hash>`, template labeled with the hash.
nlohmann::json replica_set_for(const nlohmann::json& deployment);

/// The headless Service of a StatefulSet instance: `service-<workload>`, port 8080 named infer, owned by `owner`.
nlohmann::json headless_service_for(const nlohmann::json& statefulset, const nlohmann::json& owner);

/// The Service a role.services entry becomes: `<entry.name>-<InstanceSet>`, selecting the role's pods of that
/// InferService, each nodePort plus `service_index` (the operator's offset per InferService), owned by the
/// InstanceSet.
nlohmann::json role_service_for(const nlohmann::json& ist, const nlohmann::json& entry, int service_index = 0);

/// A pod the workload controller creates: `name` (StatefulSet: `<sts>-<ordinal>`; ReplicaSet:
/// `<rs>-<5 chars>`), from `pod_owner`'s template (the StatefulSet or the ReplicaSet), on a sandbox node, Running
/// and Ready unless `ready` is false (the standby of a master/standby pair runs but fails readiness). `now` is
/// RFC 3339.
nlohmann::json pod_for(const nlohmann::json& pod_owner, const std::string& name, bool ready, const std::string& now);

/// The name of the `seed`th pod a ReplicaSet would create (deterministic, in Kubernetes' name alphabet).
std::string replica_set_pod_name(const std::string& rs_name, int seed);

/// Whether a pod counts as Ready (condition Ready True).
bool pod_ready(const nlohmann::json& pod);

/// Whether `role` with `pods_per_instance` pods runs MindIE master/standby (controller or coordinator with 2 pods).
bool master_standby(const std::string& role, int pods_per_instance);

/// Deployment status (apps/v1, omitempty fields left out) from its active pods: replicas, updated, ready, available,
/// unavailable, observedGeneration, conditions Available and Progressing. `rs_name` names the ReplicaSet in the
/// Progressing message. `previous` keeps condition times.
nlohmann::json deployment_status(const nlohmann::json& deployment, const std::vector<ObjectPtr>& pods,
                                 const std::string& rs_name, const nlohmann::json& previous, const std::string& now);
/// ReplicaSet status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration.
nlohmann::json replica_set_status(const nlohmann::json& rs, const std::vector<ObjectPtr>& pods);
/// StatefulSet status: replicas, ready, current, updated, available, revisions, collisionCount, observedGeneration.
nlohmann::json stateful_set_status(const nlohmann::json& sts, const std::vector<ObjectPtr>& pods);

/// A workload is ready when its status has observed the current generation and its ready and updated replicas equal
/// spec.replicas (infer-operator's rule).
bool workload_ready(const nlohmann::json& workload);

/// InstanceSet status: replicas (workloads present), readyReplicas (ready workloads), labelSelector, observedGeneration,
/// condition Ready (ready == spec.replicas; 0 counts as Ready), and for an HPA role scalingResourceStatus.
nlohmann::json instance_set_status(const nlohmann::json& ist, const std::vector<nlohmann::json>& workloads,
                                   const nlohmann::json& previous, const std::string& now);
/// InferService status: replicas (= roles), readyReplicas (InstanceSets Ready), observedGeneration, condition Ready.
nlohmann::json infer_service_status(const nlohmann::json& is, const std::vector<nlohmann::json>& instance_sets,
                                    const nlohmann::json& previous, const std::string& now);
/// InferServiceSet status: replicas (= spec.replicas), readyReplicas (InferServices Ready), observedGeneration,
/// condition Ready.
nlohmann::json infer_service_set_status(const nlohmann::json& iss, const std::vector<nlohmann::json>& infer_services,
                                        const nlohmann::json& previous, const std::string& now);

/// Whether a status carries condition `type` with status "True".
bool condition_true(const nlohmann::json& object, const std::string& type);

}  // namespace mindie::sandbox
