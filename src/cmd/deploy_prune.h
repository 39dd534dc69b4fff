// What a redeploy would remove, found before its first write: deploy refuses it unless --prune confirms it, and
// diff shows it.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cmd/multi_deployment.h"
#include "kube/client.h"
#include "mindie/config.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

/// The instances and objects a redeploy would remove.
struct Removals {
  /// infer_service_set: the roles whose live InferServiceSet counts exceed the rendered ones (the operator then
  /// deletes the instances beyond them).
  std::vector<scale::RoleChange> instances;
  /// multi_deployment, single_container: the objects deploy would delete after its writes (stale_workload_objects).
  std::vector<StaleObject> objects;
  /// Whether running pods would go: instances cut, or a Deployment deleted (Services alone are not).
  bool removes_workloads() const;
  /// One line per role cut ("  role prefill: 3 instances → 1") and per Deployment deleted.
  std::string describe() const;
};

/// What a redeploy of `objects` (rendered for `cfg`, deployment `workload`) would remove, from one read: the live
/// InferServiceSet (infer_service_set) or the two LISTs of stale_workload_objects (the other modes). Throws
/// ApiError / TransportError.
Removals planned_removals(kube::Client& client, const config::UserConfig& cfg, const std::string& workload,
                          const std::vector<boost::json::object>& objects);

/// deploy's refusal of `r` in namespace `ns`: what would go, and the two ways on (scale first, or --prune).
std::string removal_refusal(const Removals& r, const std::string& ns);

}  // namespace mindie::cmd
