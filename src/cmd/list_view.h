// The views of `kubectl mindie list`: one row per deployment (kubectl get's table, -o wide), the JSON shape of
// `list -o json` (docs/list.md) and the object names of -o name. Reads the status reports; judges nothing itself.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "cmd/list_inputs.h"
#include "kube/client.h"

namespace mindie::cmd {

/// The table: NAMESPACE (when `all_namespaces`), NAME, MODE, ROLES, INSTANCES (ready/desired), OUT-OF-DATE, AGE;
/// `wide` adds READY and the instances per role. "No resources found..." as kubectl says it when there is none.
std::string render_list(const Listing& listing, bool all_namespaces, bool wide,
                        std::chrono::system_clock::time_point now);

/// {apiVersion: "kubectl-mindie/v1", kind: "DeploymentList", items: [{namespace, name, framework ("mindie" or
///  "aibrix"), mode, ready, roles: [{name, readyInstances, desiredInstances}], readyInstances, desiredInstances,
///  outOfDateInstances (null for a StormService), createdAt}], warnings}
boost::json::object list_json(const Listing& listing);

/// The objects -o name prints: each InferServiceSet, Deployment (multi_deployment) and StormService.
std::vector<std::pair<kube::GVR, std::string>> listed_objects(const Listing& listing);

}  // namespace mindie::cmd
