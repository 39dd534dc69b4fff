// The Volcano PodGroups infer-operator leaves behind: it creates one per instance of a gang-scheduled role and never
// deletes it on scale-in, then reuses it unchanged on a later scale-out (Ascend/mind-cluster
// component/infer-operator/pkg/controller/workload/podgroup_manager.go, GetOrCreatePodGroupForInstance). deploy and
// scale remove those of instances that no longer exist.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cmd/common.h"

namespace mindie::cmd {

/// Deletes the PodGroups "pg-<iss>-0-<role>-<k>" (operator_rules::pod_group_prefix) of namespace `ns` whose instance
/// k is at or above `instances.at(role)`, for the gang roles in `instances` (role -> instances now wanted). One LIST
/// of PodGroups (a 404, Volcano's API not served, means none); when some are stale, waits (up to 60 s, one GET of
/// each role's InstanceSet per 200 ms) until infer-operator has acted on the lower count, since a PodGroup deleted
/// before that is made again; then one DELETE each; every one is tried. Returns
/// the names deleted. Throws PartialFailure when some could not be deleted, naming each that is left and the kubectl
/// command that removes them, after `done` (what the command had already achieved); ApiError/TransportError when
/// the LIST fails.
std::vector<std::string> remove_stale_pod_groups(kube::Client& client, const std::string& ns, const std::string& iss,
                                                 const std::map<std::string, int>& instances,
                                                 const kube::WriteOptions& opts, const std::string& done);

}  // namespace mindie::cmd
