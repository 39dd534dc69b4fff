#include "mindie/scale_plan.h"

namespace mindie::scale {

namespace json = boost::json;

std::vector<RoleChange> instance_cuts(const json::object& iss, const std::map<std::string, int>& wanted) {
  std::vector<RoleChange> cuts;
  const json::value* roles = nullptr;
  if (const auto* spec = iss.if_contains("spec"); spec && spec->is_object())
    if (const auto* tmpl = spec->as_object().if_contains("template"); tmpl && tmpl->is_object())
      roles = tmpl->as_object().if_contains("roles");
  if (!roles || !roles->is_array()) return cuts;
  for (std::size_t i = 0; i < roles->as_array().size(); ++i) {
    const auto* role = roles->as_array()[i].if_object();
    const auto* name = role ? role->if_contains("name") : nullptr;
    if (!name || !name->is_string()) continue;
    const auto* replicas = role->if_contains("replicas");
    const bool present = replicas && (replicas->is_int64() || replicas->is_uint64());
    const std::int64_t live = present ? replicas->to_number<std::int64_t>() : 1;  // the CRD's default
    const auto it = wanted.find(std::string(name->as_string()));
    const std::int64_t to = it == wanted.end() ? 0 : it->second;
    if (live > to) cuts.push_back({std::string(name->as_string()), i, live, to, present});
  }
  return cuts;
}

std::vector<RoleChange> plan_role_changes(const json::object& iss, const std::map<std::string, int>& targets) {
  const json::array* roles = nullptr;
  if (auto* spec = iss.if_contains("spec"); spec && spec->is_object()) {
    if (auto* tmpl = spec->as_object().if_contains("template"); tmpl && tmpl->is_object()) {
      if (auto* r = tmpl->as_object().if_contains("roles"); r && r->is_array()) roles = &r->as_array();
    }
  }
  // Shapes deploy never writes: someone edited the live object, and a redeploy puts back what the baseline says.
  const std::string restore = "; nothing was changed: kubectl mindie deploy restores the roles the baseline describes";
  if (!roles) throw PlanError("the live InferServiceSet has no spec.template.roles array" + restore);

  std::vector<RoleChange> changes;
  for (const auto& [name, target] : targets) {
    bool found = false;
    for (std::size_t i = 0; i < roles->size(); ++i) {
      const auto* role = (*roles)[i].if_object();
      if (!role) continue;
      const auto* role_name = role->if_contains("name");
      if (!role_name || !role_name->is_string() || role_name->as_string() != name) continue;
      found = true;
      const std::string field = "spec.template.roles[" + std::to_string(i) + "]";
      if (role->contains("scalingPolicy") && !(*role).at("scalingPolicy").is_null()) {
        throw PlanError("role " + name + " has " + field +
                        ".scalingPolicy: an HPA owns its replicas, so kubectl-mindie will not patch them");
      }
      const auto* replicas = role->if_contains("replicas");
      std::int64_t from = 1;  // the CRD's default when role.replicas is omitted
      if (replicas) {
        if (!replicas->is_int64() && !replicas->is_uint64())
          throw PlanError(field + ".replicas of role " + name + " is not an integer" + restore);
        from = replicas->to_number<std::int64_t>();
      }
      changes.push_back({name, i, from, target, replicas != nullptr});
      break;
    }
    if (!found)
      throw PlanError("the live InferServiceSet has no role named " + name + " in spec.template.roles" + restore);
  }
  return changes;
}

namespace {

json::array patch_for(const std::vector<RoleChange>& changes, bool undo) {
  json::array ops;
  for (const auto& c : changes) {
    if (c.from == c.to) continue;
    const std::string base = "/spec/template/roles/" + std::to_string(c.index);
    const std::int64_t expected = undo ? c.to : c.from;
    const std::int64_t desired = undo ? c.from : c.to;
    ops.push_back({{"op", "test"}, {"path", base + "/name"}, {"value", c.role}});
    // A test on an absent member fails, so an omitted role.replicas is guarded by the name test alone and set
    // with "add" (which creates or replaces an object member).
    const bool present = undo || c.present;
    if (present) ops.push_back({{"op", "test"}, {"path", base + "/replicas"}, {"value", expected}});
    ops.push_back({{"op", present ? "replace" : "add"}, {"path", base + "/replicas"}, {"value", desired}});
  }
  return ops;
}

}  // namespace

json::array build_replicas_patch(const std::vector<RoleChange>& changes) { return patch_for(changes, false); }

json::array build_undo_patch(const std::vector<RoleChange>& changes) { return patch_for(changes, true); }

}  // namespace mindie::scale
