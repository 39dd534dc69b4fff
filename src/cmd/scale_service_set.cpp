// scale of an infer_service_set deployment (ScaleOptions::run_service_set, cmd/scale.h): the InferServiceSet's
// role replicas by a guarded JSON Patch, then the baseline; then the PodGroups of removed gang instances.
#include <map>

#include "cmd/gang_instances.h"
#include "cmd/pod_groups.h"
#include "cmd/rights.h"
#include "cmd/scale_steps.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"

namespace mindie::cmd {

namespace json = boost::json;

void ScaleOptions::run_service_set(kube::Client& client, Printer& printer, const json::object& cm,
                                   const baseline::Baseline& stored, const InstanceCounts& target) {
  const config::UserConfig& base = stored.user();
  const std::string iss_name = stored.workload_name();
  std::optional<json::object> iss = client.get_if_exists(kube::gvr::kInferServiceSets, namespace_, iss_name);
  if (!iss) {
    throw CommandError("the baseline in namespace " + namespace_ + " names inferserviceset." +
                       kube::gvr::kInferServiceSets.group + "/" + iss_name +
                       ", which does not exist: re-run kubectl mindie deploy");
  }
  // Only the roles asked for are touched (-f names both): a role left out keeps its live replicas even when
  // they drifted, and an HPA-owned role that is not being scaled does not block the other.
  std::map<std::string, int> targets;
  if (base.hybrid()) {
    targets["union"] = target.hybrid;
  } else {
    if (proposed_ || flags_.prefill) targets["prefill"] = target.prefill;
    if (proposed_ || flags_.decode) targets["decode"] = target.decode;
  }
  const auto changes = scale::plan_role_changes(*iss, targets);
  for (const auto& c : changes) {
    const int base_count = baseline_count(base, c.role);
    if (c.from != base_count) {
      printer.warning("role " + c.role + " had drifted: " + std::to_string(c.from) + " live instances, " +
                      std::to_string(base_count) + " in the baseline; both become " + std::to_string(c.to));
    }
  }

  // Before any write: a gang role scaled out onto instances infer-operator would rebuild for ever.
  refuse_gang_rebuild_loop(client, namespace_, *iss, changes, flags_.operator_restarted);
  json::object scaled = *iss;
  for (const auto& c : changes)
    scaled.at("spec").at("template").at("roles").as_array().at(c.index).as_object()["replicas"] = c.to;
  check_added_npus(client, printer, {*iss}, {scaled});

  std::vector<std::string> roles;
  std::map<std::string, int> live_counts;
  for (const auto& [role, n] : targets) roles.push_back(role);
  for (const auto& c : changes) live_counts[c.role] = static_cast<int>(c.from);
  plan_intent(stored.deploy_mode(), iss_name, roles, base, target, cm, live_counts);

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  json::object result = *iss;
  std::vector<change::Step> steps;
  if (!scale::build_replicas_patch(changes).empty())
    steps.push_back(service_set_step(client, *iss, changes, opts, result));
  json::object baseline_after = cm;
  if (new_baseline_text(base, target) != base.raw)
    steps.push_back(baseline_step(client, cm, base, target, opts, baseline_after));
  if (new_baseline_text(base, target) != base.raw && !opts.dry_run)
    steps.push_back(revision_step(client, namespace_, baseline_after,
                                  author_.value_or(author_now(flags_.history.cause_or("scale"))),
                                  flags_.history.history_limit, printer));
  // Every right the writes need, all named before the first (issue 33).
  if (!steps.empty()) rights::check_before_write(client, namespace_, rights::kScale, true, "scale");
  LockFence fence(*lock_, change::Intent{intent_});
  change::Runner runner(fence, wording(base, target,
                                       [&] { return service_set_now(client, namespace_, iss_name, changes, target); }));
  runner.run(steps);

  lock_->nothing_to_recover();  // the workload and the baseline agree from here: nothing left to recover

  const auto removed_groups = finish_gang_scale(client, printer, *iss, changes, target, opts);
  printer.result(kube::gvr::kInferServiceSets, iss_name, "scaled", dry_run_, result);
  printer.shown_object(std::move(baseline_after));
  for (const auto& pg : removed_groups) printer.result(kube::gvr::kPodGroups, pg, "deleted", dry_run_, {});
}

std::vector<std::string> ScaleOptions::finish_gang_scale(kube::Client& client, Printer& printer,
                                                         const json::object& iss,
                                                         const std::vector<scale::RoleChange>& changes,
                                                         const InstanceCounts& target,
                                                         const kube::WriteOptions& opts) const {
  const std::string iss_name(iss.at("metadata").at("name").as_string());
  // infer-operator leaves the PodGroups of removed gang instances behind and would reuse them unchanged on a later
  // scale-out (Ascend/mind-cluster infer-operator, podgroup_manager.go GetOrCreatePodGroupForInstance): remove them now
  // that the scale is recorded.
  std::vector<std::string> removed_groups;
  std::map<std::string, int> gang_counts;
  bool gang_scale_in = false;
  for (const auto& c : changes)
    if (operator_rules::is_gang_role(iss, c.role)) {
      gang_counts[c.role] = static_cast<int>(c.to);
      gang_scale_in = gang_scale_in || c.to < c.from;
    }
  // First what the operator now remembers (the PodGroup cleanup below may fail after the scale is done).
  if (!opts.dry_run) record_gang_instances(client, namespace_, iss, changes, flags_.operator_restarted, opts, printer);
  if (gang_scale_in)
    removed_groups = remove_stale_pod_groups(client, namespace_, iss_name, gang_counts, opts,
                                             "the scale is done (inferserviceset." +
                                                 kube::gvr::kInferServiceSets.group + "/" + iss_name +
                                                 " and the baseline both say " + counts_text(target) + ")");

  return removed_groups;
}

}  // namespace mindie::cmd
