// deploy --adopt: taking over a deployment PyMotor's deploy.py made (Ascend/MindIE-PyMotor examples/deployer/deploy.py;
// its objects carry no kubectl-mindie labels and their fields belong to client-side `kubectl apply`), so that scale,
// status and delete work on it afterwards.
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "mindie/render.h"

namespace mindie::cmd {

/// True when `obj` carries the label app.kubernetes.io/managed-by=kubectl-mindie (what delete and status select by).
bool managed_by_us(const boost::json::object& obj);

/// True when motor-config `cm` carries kubectl-mindie's records: our managed-by label or the deploy-mode
/// annotation (baseline::kDeployModeAnnotation). deploy.py's carries neither.
bool has_our_records(const boost::json::object& cm);

/// Throws CommandError when motor-config `cm` of namespace `ns` lacks our records (has_our_records): `command`
/// ("scale", "update-config", "delete") would act on another tool's deployment, whose objects our labels do not
/// find. The message says how to take it over (deploy --adopt) and ends with `nothing_done`
/// ("nothing was changed").
void require_ours(const boost::json::object& cm, const std::string& ns, const std::string& command,
                  const std::string& nothing_done);

/// One live object of another tool's deployment in the namespace.
struct ForeignObject {
  const kube::GVR* gvr = nullptr;
  std::string ns;  ///< "" for cluster-scoped objects
  std::string name;
  boost::json::object live;  ///< as read
  std::string text() const;  ///< "kind.group/name"
};

/// What deploy --adopt does: the objects it renders that already exist without our label (taken over: their
/// client-side-apply fields handed to our field manager, then a forced server-side apply), and deploy.py's
/// objects it renders under other names (removed once ours are written): the ClusterRole
/// "mindie-controller-role-<ns>" and ClusterRoleBinding "mindie-controller-binding-<ns>" (PyMotor 7d15c04 U7; ours
/// are named "mindie-motor-controller-<ns>") and the Services PyMotor renamed (render::renamed_services).
struct AdoptionPlan {
  std::vector<ForeignObject> take_over;
  std::vector<ForeignObject> remove;
  bool empty() const { return take_over.empty() && remove.empty(); }
  /// The objects, one per line, each "  kind.group/name (taken over|replaced by ...)".
  std::string describe() const;
};

/// deploy.py 7d15c04's per-namespace RBAC names (U7).
std::string deploy_py_cluster_role(const std::string& ns);
std::string deploy_py_cluster_role_binding(const std::string& ns);

/// Reads what an adoption of namespace `ns` would touch: one GET per object of `objects` (deploy's rendered
/// objects, in write order), per deploy.py RBAC name and per renamed Service. A deploy.py ClusterRoleBinding that
/// binds a subject outside `ns` is not removed (it is not this namespace's alone). Throws ApiError / TransportError.
AdoptionPlan plan_adoption(kube::Client& client, const std::string& ns, const std::vector<boost::json::object>& objects,
                           const std::vector<render::RenamedService>& renamed);

/// Hands each take-over object's client-side-apply fields to opts.field_manager (kube::csa_upgrade_patch on the
/// plan's read, a JSON patch guarded by that resourceVersion; nothing is sent for an object without them), calling
/// `on_patched` after each patch. A controller writing in between (the patch's test fails: 409 or 422) makes it
/// read again and retry, three attempts at most. Throws ApiError / TransportError.
void hand_over_fields(kube::Client& client, const AdoptionPlan& plan, const kube::WriteOptions& opts,
                      const std::function<void(const ForeignObject&)>& on_patched);

}  // namespace mindie::cmd
