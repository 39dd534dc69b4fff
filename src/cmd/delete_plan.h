// What kubectl mindie delete removes in one namespace: found by the names motor-config records and by
// kubectl-mindie's labels, read only (GETs and LISTs); cmd/delete.h deletes it.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "change/intent.h"
#include "kube/client.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// One object to delete. `kept_reason` non-empty: found but not this deployment's own, so left alone (a warning).
struct DeleteTarget {
  kube::GVR gvr;
  std::string ns;  ///< "" for cluster-scoped objects
  std::string name;
  std::string kept_reason;
  /// The object as read: its delete's preconditions, so that a delete that lost the namespace lock cannot remove a
  /// successor's object of the same name. uid ("" none: unconditional); resourceVersion only for objects without a
  /// status that a controller rewrites (motor-config, RBAC), where it cannot fail spuriously.
  std::string uid;
  std::string resource_version;
  /// The object as read, which -o json|yaml shows once it is deleted.
  boost::json::object object;
};

/// What delete removes in one namespace, in order, and what --wait waits to see gone. Built by plan_delete (reads
/// only); other workload kinds (e.g. AIBrix) extend it by appending to `targets` before the ConfigMap and to
/// `gone`.
struct DeletePlan {
  std::string ns;
  /// The motor-config ConfigMap when it exists (and was written by kubectl-mindie).
  std::optional<boost::json::object> config_map;
  /// The recorded workload name (annotation kubectl-mindie/infer-service-set, else the baseline's default; ""
  /// when neither is known).
  std::string workload;
  /// The recorded deploy mode ("" when unknown).
  std::string deploy_mode;
  /// Objects to delete, in order; the ConfigMap is never among them (it is deleted last: config_map_target()).
  std::vector<DeleteTarget> targets;
  /// Collections that must be empty before --wait returns (the workload, its Deployments and pods).
  std::vector<kube::WatchTarget> gone;
  /// motor-config as a target (its uid and resourceVersion as preconditions). Only when config_map is set.
  DeleteTarget config_map_target() const;
  /// The "targets" of delete's lock intent: {apiVersion, kind, namespace, name} of every target not kept, then
  /// motor-config's.
  change::DeleteIntent intent() const;
};

/// The label every object deploy writes carries (render.cpp's set_common_metadata).
inline constexpr const char* kManagedBySelector = "app.kubernetes.io/managed-by=kubectl-mindie";

/// Reads what deploy created in `ns` and returns the plan. Found by names recorded on motor-config (the
/// InferServiceSet, the RBAC names deploy derives from the namespace) and by labels (managed-by kubectl-mindie,
/// instance = the workload name; every labelled InferServiceSet, Deployment, Service, ServiceAccount, RoleBinding and
/// Role without an owner: owned objects go with their owner through garbage collection and are never deleted
/// directly).
/// Cluster-scoped RBAC is planned only when it is this deployment's own: labelled managed-by kubectl-mindie, its
/// instance label equal to the workload, and (the binding) every subject in `ns`; otherwise it becomes a kept
/// target with the reason. Without a motor-config the plan is label-based alone. Throws CommandError when
/// motor-config exists but was not written by kubectl-mindie (deploy.py's: nothing of another tool's deployment is
/// touched), ApiError / TransportError on read failures. Sends only GETs and LISTs.
DeletePlan plan_delete(kube::Client& client, const std::string& ns);

/// True when the object `t` names is gone, being deleted (deletionTimestamp), or replaced by another of the name
/// (another uid): a delete whose answer was lost took effect. Sends one GET.
bool delete_took_effect(kube::Client& client, const DeleteTarget& t);

/// The targets a delete intent (DeletePlan::intent()) records, in its order (motor-config last), as read now: each
/// with its uid, and its resourceVersion where plan_delete takes it, as its delete's preconditions; one already gone
/// has neither and reads back as deleted. Entries naming an unknown kind, an invalid name or an object outside `ns`
/// (cluster-scoped RBAC aside) are left out: the Lease is anyone's to write. Sends one GET per target.
std::vector<DeleteTarget> recorded_targets(kube::Client& client, const std::string& ns,
                                           const change::DeleteIntent& intent);

}  // namespace mindie::cmd
