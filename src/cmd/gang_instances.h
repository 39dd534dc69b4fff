// What scale and deploy must do about infer-operator's rebuild loop on gang-scheduled roles: refuse a scale-out that
// would start it, and record on the role's InstanceSet which instances a scale removed
// (operator_rules::kRemovedGangInstancesAnnotation).
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

/// Throws CommandError (nothing written) when a change in `changes` scales a gang role of InferServiceSet `iss` (the
/// live object) in namespace `ns` out onto instances infer-operator would rebuild in a loop
/// (operator_rules::gang_scale_out_refusal). One GET of the role's InstanceSet and one LIST of its pods per gang role
/// scaled out; nothing for the others.
void refuse_gang_rebuild_loop(kube::Client& client, const std::string& ns, const boost::json::object& iss,
                              const std::vector<scale::RoleChange>& changes, bool operator_restarted);

/// After `changes` were applied: on each gang role's InstanceSet, adds the instances a scale-in removed to
/// kRemovedGangInstancesAnnotation, or clears it after a scale-out with `operator_restarted` (the restart cleared
/// every record). One merge patch per such role; a failure is a warning on `printer` (the scale itself is done), as
/// a missing InstanceSet is nothing to record.
void record_gang_instances(kube::Client& client, const std::string& ns, const boost::json::object& iss,
                           const std::vector<scale::RoleChange>& changes, bool operator_restarted,
                           const kube::WriteOptions& opts, Printer& printer);

/// After infer-operator restarted with the pods of gang role `role`'s removed instances gone: deletes
/// kRemovedGangInstancesAnnotation from its InstanceSet (the restart forgot every fault record). A failure is a
/// warning on `printer`, as in record_gang_instances.
void clear_removed_gang_instances(kube::Client& client, const std::string& ns, const boost::json::object& iss,
                                  const std::string& role, Printer& printer);

}  // namespace mindie::cmd
