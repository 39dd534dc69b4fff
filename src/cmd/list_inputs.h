// What `kubectl mindie list` reads: every deployment in a namespace or in all of them, each with the status report
// status builds (MindIE's status::Report, AIBrix's StormStatus), from one LIST per kind for the whole scope, never
// one per namespace; and the namespaces holding a deployment, for "did you mean -n X?" and completion of -n.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "aibrix/storm_status.h"
#include "kube/client.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

/// One deployment found: a MindIE deployment (its motor-config) or an AIBrix StormService.
struct ListedDeployment {
  std::string ns;
  std::string created;                   ///< creationTimestamp of motor-config or the StormService
  std::optional<status::Report> mindie;  ///< set for a MindIE deployment
  std::optional<aibrix::StormStatus> storm;
};

/// The deployments of a scope, and what could not be read.
struct Listing {
  std::vector<ListedDeployment> deployments;  ///< by namespace, MindIE first, then StormServices by name
  std::vector<std::string> warnings;          ///< a namespace whose baseline names no workload, a fallback taken
};

/// Reads the deployments of namespace `ns` ("" = all namespaces): motor-config ConfigMaps by kubectl-mindie's
/// managed-by label, then one LIST per kind the found modes need (InferServiceSets, InferServices, InstanceSets,
/// StatefulSets, Deployments, pods; StormServices and their pods), each over the whole scope, items matched to
/// their deployment as status matches them. Warning events are not read (they explain, they do not judge). A 403
/// on a list across all namespaces falls back to namespace `fallback` alone, with a warning saying so; a missing
/// CRD counts as none of its kind; in one namespace, a kind the user may not list but motor-config counts as none, with
/// a warning. Throws ApiError / TransportError.
Listing read_listing(kube::Client& client, const std::string& ns, const std::string& fallback);

/// The namespaces holding a MindIE deployment (motor-config with kubectl-mindie's label) or a StormService, sorted,
/// from one LIST of each across all namespaces; empty when the user may not list them so. Throws TransportError,
/// ApiError other than 403/404.
std::vector<std::string> deployment_namespaces(kube::Client& client);

/// The hint "no deployment found" errors end with: "did you mean -n X?" (or "-n X or -n Y ...", at most 3) when
/// other namespaces than `ns` hold a deployment (deployment_namespaces), "" when none does or they cannot be listed.
/// Never throws.
std::string did_you_mean(kube::Client& client, const std::string& ns);

/// motor-config of `ns` (one GET). Throws CommandError "no deployment found in namespace NS ..." with did_you_mean's
/// hint when it does not exist.
boost::json::object motor_config_or_fail(kube::Client& client, const std::string& ns);

/// "; " + `hint` when there is one, else "": the end of an error message.
inline std::string hint_suffix(const std::string& hint) { return hint.empty() ? "" : "; " + hint; }

}  // namespace mindie::cmd
