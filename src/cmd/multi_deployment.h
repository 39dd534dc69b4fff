// What deploy, scale and status share about a live multi_deployment (or single_container) deployment: finding its
// Deployments and Services (by the labels render::render_multi_workloads puts on them, never by name prefix).
#pragma once

#include <string>
#include <vector>

#include "kube/client.h"

namespace mindie::cmd {

/// One Deployment of a multi_deployment (or single_container) deployment, as found live.
struct WorkloadDeployment {
  std::string name;
  std::string role;  ///< label app.kubernetes.io/component ("prefill", "decode", "kv-pool", ...)
  int index = -1;    ///< label kubectl-mindie/instance-index (engines); -1 when absent or not a number
};

/// The label selector of every object of deployment `workload` (the kubectl-mindie/infer-service-set annotation
/// of motor-config): "app.kubernetes.io/managed-by=kubectl-mindie,app.kubernetes.io/instance=<workload>".
std::string multi_selector(const std::string& workload);

/// Names of the objects of resource `r` (Services, say) in `ns` that carry multi_selector(workload), sorted. One
/// LIST. Throws ApiError / TransportError.
std::vector<std::string> list_workload_object_names(kube::Client& client, const kube::GVR& r, const std::string& ns,
                                                    const std::string& workload);

/// The Deployments of deployment `workload` in `ns` (with `engines_only`, those of component prefill or decode):
/// one LIST of apps/v1 Deployments selected by multi_selector(workload), sorted by role, index, name. Throws
/// ApiError / TransportError.
std::vector<WorkloadDeployment> list_workload_deployments(kube::Client& client, const std::string& ns,
                                                          const std::string& workload, bool engines_only);

}  // namespace mindie::cmd
