// What deploy, scale and status share about a live multi_deployment (or single_container) deployment: finding its
// Deployments and Services (by the labels render::render_multi_workloads puts on them, never by name prefix).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cmd/common.h"
#include "kube/client.h"
#include "mindie/render.h"

namespace mindie::cmd {

/// One Deployment of a multi_deployment (or single_container) deployment, as found live.
struct WorkloadDeployment {
  std::string name;
  std::string role;  ///< label app.kubernetes.io/component ("prefill", "decode", "kv-pool", ...)
  int index = -1;    ///< label kubectl-mindie/instance-index (engines); -1 when absent or not a number
  std::string uid;   ///< metadata.uid: the precondition of its delete
};

/// The label selector of every object of deployment `workload` (the kubectl-mindie/infer-service-set annotation
/// of motor-config): "app.kubernetes.io/managed-by=kubectl-mindie,app.kubernetes.io/instance=<workload>".
std::string multi_selector(const std::string& workload);

/// Names of the objects of resource `r` (Services, say) in `ns` that carry multi_selector(workload), sorted. One
/// LIST. Throws ApiError / TransportError.
std::vector<std::string> list_workload_object_names(kube::Client& client, const kube::GVR& r, const std::string& ns,
                                                    const std::string& workload);

/// The Deployments of deployment `workload` in `ns` (with `engines_only`, those of an engine component: prefill,
/// decode, encode or union): one LIST of apps/v1 Deployments selected by multi_selector(workload), sorted by role,
/// index, name. Throws ApiError / TransportError.
std::vector<WorkloadDeployment> list_workload_deployments(kube::Client& client, const std::string& ns,
                                                          const std::string& workload, bool engines_only);

/// Warns, per role, how many running instances of deployment `workload` in `ns` this deploy changes the pod template
/// of (the live Deployments whose template hash differs from `rendered`'s): the deployment controller rolls them,
/// adding a pod before it removes one, and until then status and wait count them as on an earlier template. One
/// LIST of Deployments; a 403 is a warning that this went unchecked.
void warn_rolled_deployments(kube::Client& client, Printer& printer, const std::string& ns, const std::string& workload,
                             const std::vector<boost::json::object>& rendered);

/// An object of a Deployment-based deployment that the current rendering no longer has.
struct StaleObject {
  const kube::GVR* gvr = nullptr;  ///< kube::gvr::kDeployments or kube::gvr::kServices
  std::string name;
};

/// What deploy deletes after writing a multi_deployment or single_container deployment: the Deployments and Services
/// in `ns` carrying multi_selector(workload) whose (resource, name) is not in `wanted` (the rendered objects). Engine
/// Deployments (prefill, decode) first, highest index first (as scale deletes them), then the other Deployments, then
/// the Services, among them those PyMotor 7d15c04 renamed (render::renamed_services, §U6). Two LISTs. Throws
/// ApiError / TransportError.
std::vector<StaleObject> stale_workload_objects(kube::Client& client, const std::string& ns,
                                                const std::string& workload,
                                                const std::set<std::pair<std::string, std::string>>& wanted);

/// One line per renamed Service (render::renamed_services) whose old name exists in `ns` but is not deployment
/// `workload`'s (it lacks multi_selector(workload)'s labels, e.g. made by PyMotor's deploy.py), so
/// stale_workload_objects leaves it: that deploy left it, its replacement and the kubectl command that deletes it.
/// One GET per renamed Service; a 404 means none. Throws ApiError / TransportError.
std::vector<std::string> foreign_renamed_services(kube::Client& client, const std::string& ns,
                                                  const std::string& workload,
                                                  const std::vector<render::RenamedService>& renamed);

}  // namespace mindie::cmd
