// Planning a scale of a live InferServiceSet: which role indices change, and the JSON Patch that changes them.
// Knows objects, not HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mindie::scale {

/// One role whose role.replicas (instances) changes, found at `index` in spec.template.roles.
struct RoleChange {
  std::string role;
  std::size_t index = 0;
  std::int64_t from = 0;  ///< live role.replicas
  std::int64_t to = 0;    ///< requested
  bool present = true;    ///< false when the live role omits replicas (then `from` is the default 1)
};

/// Raised when the live object cannot be scaled as asked (role missing, replicas not an integer, or owned by an
/// HPA scalingPolicy). The message names the role and the field, and for shapes deploy never writes (an edited live
/// object) says that a redeploy restores the roles.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads spec.template.roles of the live InferServiceSet `iss` and returns, for every role in `targets`
/// (role name -> instances), its index and live replicas; roles already at their target are included with
/// from == to. Throws PlanError when a role is absent, has no integer replicas, or has a `scalingPolicy`
/// (infer-operator: an HPA owns that role's replicas, so a patch would have no effect).
std::vector<RoleChange> plan_role_changes(const boost::json::object& iss, const std::map<std::string, int>& targets);

/// The roles of the live InferServiceSet `iss` that would lose instances if its roles had the counts of `wanted`
/// (role name -> instances; a live role absent from it goes to 0): from = the live role.replicas (1 when omitted),
/// to = wanted. What a deploy's redeploy would remove (the operator deletes the instances beyond the count).
std::vector<RoleChange> instance_cuts(const boost::json::object& iss, const std::map<std::string, int>& wanted);

/// The RFC 6902 patch that applies `changes` (those with from != to): per role, `test` its name and its live
/// replicas at its index (when present), then set the replicas. The tests make the patch fail (422, nothing applied) if
/// the roles array moved or someone else scaled since it was read: the roles array is atomic in the CRD, so
/// addressing by index needs these guards. Empty when nothing changes.
boost::json::array build_replicas_patch(const std::vector<RoleChange>& changes);

/// The patch that undoes build_replicas_patch(changes): tests the new values, restores the old ones.
boost::json::array build_undo_patch(const std::vector<RoleChange>& changes);

}  // namespace mindie::scale
