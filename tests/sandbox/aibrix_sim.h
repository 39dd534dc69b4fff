// A stand-in for the AIBrix StormService controller (orchestration.aibrix.ai/v1alpha1), enough for kubectl-mindie's
// deploy, scale, status and delete: the pods of every role, replica and pod group with AIBrix's labels, and the
// StormService status (roleStatuses). Pure functions here; ApiServer::reconcile_storm_service (aibrix_sim.cpp)
// stores the results.
//
// Simplifications, on purpose: AIBrix puts a RoleSet (and, for pod groups, PodSets) between the StormService and
// its pods; the sandbox has no such CRDs, so pods are owned by the StormService directly (deleting it still
// cascades, as through the real chain). Pod names are stable per slot, as AIBrix's stateful roles keep them:
// `<app>-roleset-<role>-<replica>` (podGroupSize 1) or `<app>-roleset-<role>-<replica>-<pod>`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store.h"

namespace mindie::sandbox {

/// One pod slot of a StormService: role, replica index and index within the pod group.
struct StormPodSlot {
  std::string role;
  int replica = 0;
  int pod = 0;
  int group_size = 1;
  std::string name;  ///< the pod's name
};

/// Every pod slot `ss` asks for: for each role of spec.template.spec.roles, replicas × podGroupSize (missing or
/// non-integer values count as 1 pod group of 1 pod, negative replicas as 0; at most 4096 slots in all).
std::vector<StormPodSlot> storm_pod_slots(const nlohmann::json& ss);

/// A stable hash (FNV-1a, 10 hex digits) of a role's pod template: the role-template-hash label. A role whose
/// template changes gets a new hash, and its pods are recreated (AIBrix's default Recreate role update).
std::string storm_role_template_hash(const nlohmann::json& role);

/// The pod of `slot` as the AIBrix controller creates it: the role's template, plus the labels
/// storm-service-name, role-name, roleset-name, role-template-hash, storm-service-revision,
/// stormservice.orchestration.aibrix.ai/role-replica-index (and pod-group-index for pod groups), owned by `ss`,
/// on a sandbox node, Running and Ready. `now` is RFC 3339.
nlohmann::json storm_pod_for(const nlohmann::json& ss, const nlohmann::json& role, const StormPodSlot& slot,
                             const std::string& now);

/// The StormService status from its pods: replicas/readyReplicas (the one RoleSet of pooled mode: ready when
/// every role is), observedGeneration, roleStatuses [{name, replicas, readyReplicas, notReadyReplicas,
/// updatedReplicas, updatedReadyReplicas}] counted in role replicas (a replica is ready when all its pods are),
/// and condition Ready. `previous` keeps the condition's lastTransitionTime.
nlohmann::json storm_service_status(const nlohmann::json& ss, const std::vector<ObjectPtr>& pods,
                                    const nlohmann::json& previous, const std::string& now);

}  // namespace mindie::sandbox
