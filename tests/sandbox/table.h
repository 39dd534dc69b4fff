// Server-side printing (meta.k8s.io/v1 Table), which kubectl asks for with `Accept: ...;as=Table;g=meta.k8s.io`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// duration.HumanDuration of the time since `rfc3339`, as kubectl shows ages ("<unknown>" when unparsable).
std::string human_age(const std::string& rfc3339);

/// The Table kube-apiserver's printers make of `objects` of kind `kind`: the columns of Pods (Ready, Status as
/// kubectl's printPod derives it, Restarts with "(Xs ago)", IP, Node), Deployments, StatefulSets, ReplicaSets,
/// Namespaces and ConfigMaps, Name and Age for the rest. `list_meta` becomes the Table's metadata; with
/// `with_columns` false columnDefinitions is null (a watch sends the columns with its first event only).
nlohmann::json to_table(const std::string& kind, const std::vector<nlohmann::json>& objects,
                        const nlohmann::json& list_meta, bool with_columns = true);

/// The STATUS column of a pod (printers.go printPod): the phase, replaced by a container's waiting or terminated
/// reason, "Terminating" once deleted.
std::string pod_display_status(const nlohmann::json& pod);

}  // namespace mindie::sandbox
