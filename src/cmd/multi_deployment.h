// What deploy, scale and status share about a live multi_deployment (or single_container) deployment: finding its
// Deployments and Services (by the labels render::render_multi_workloads puts on them, never by name prefix).
#pragma once

#include <string>
#include <vector>

#include "kube/client.h"

namespace mindie::cmd {

/// One engine Deployment of a multi_deployment deployment, as found live.
struct EngineDeployment {
  std::string name;
  std::string role;  ///< "prefill" or "decode" (label app.kubernetes.io/component)
  int index = -1;    ///< label kubectl-mindie/instance-index; -1 when absent or not a number
};

/// The label selector of every object of deployment `workload` (the kubectl-mindie/infer-service-set annotation
/// of motor-config): "app.kubernetes.io/managed-by=kubectl-mindie,app.kubernetes.io/instance=<workload>".
std::string multi_selector(const std::string& workload);

/// Names of the objects of resource `r` (Deployments, Services) in `ns` that carry multi_selector(workload), sorted.
/// One LIST. Throws ApiError / TransportError.
std::vector<std::string> list_workload_object_names(kube::Client& client, const kube::GVR& r, const std::string& ns,
                                                    const std::string& workload);

/// The engine Deployments of deployment `workload` in `ns`: one LIST of apps/v1 Deployments selected by
/// multi_selector(workload) and component in (prefill, decode), sorted by role then index. Throws ApiError /
/// TransportError.
std::vector<EngineDeployment> list_engine_deployments(kube::Client& client, const std::string& ns,
                                                      const std::string& workload);

}  // namespace mindie::cmd
