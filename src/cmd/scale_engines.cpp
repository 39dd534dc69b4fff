// scale of a multi_deployment deployment (ScaleOptions::run_multi, cmd/scale.h): engine Deployments created
// (server-side apply, rendered from the baseline and its stored overrides) or deleted (highest indices first),
// then the baseline.
#include <algorithm>
#include <map>
#include <set>

#include "cmd/multi_deployment.h"
#include "cmd/rights.h"
#include "cmd/scale_steps.h"
#include "mindie/overrides.h"
#include "mindie/render.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// Every engine Deployment the stored deployment may have (16 instances per role, the config's bound), by name,
/// rendered from the baseline and the overrides deploy stored, never from local files: the pod templates are those
/// of the deploy (PyMotor applied local engine files, which drift from what runs). Throws CommandError.
std::map<std::string, json::object> render_engines(const baseline::Baseline& stored, const std::string& ns) {
  const config::UserConfig& base = stored.user();
  const std::string where = "configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + ns;
  render::RenderOptions ropts;
  ropts.service_set_name = stored.workload_name();
  if (stored.overrides_raw) {
    try {
      ropts.overrides = overrides::parse_overrides(*stored.overrides_raw, where + " " + baseline::kOverridesKey);
    } catch (const validation::ValidationError& e) {
      throw CommandError(std::string(e.what()) +
                         "\nredeploy with --overrides FILE to replace them; nothing was "
                         "changed");
    }
  }
  // Every engine Deployment that may exist (16 instances per role, config's bound), by name.
  config::UserConfig all = base;
  if (base.hybrid()) all.hybrid_instances = 16;
  else all.p_instances = all.d_instances = 16;
  if (base.encode) all.e_instances = 16;
  std::map<std::string, json::object> rendered;
  try {
    for (auto& obj : render::render_multi_workloads(all, ropts))
      rendered.emplace(std::string(obj.at("metadata").at("name").as_string()), std::move(obj));
  } catch (const validation::ValidationError& e) {
    throw CommandError(std::string(e.what()) +
                       "\nthe stored deployment no longer renders; redeploy; nothing was "
                       "changed");
  }
  return rendered;
}

}  // namespace

std::vector<EngineChange> ScaleOptions::plan_engine_changes(const std::vector<WorkloadDeployment>& live,
                                                            const std::vector<std::pair<std::string, int>>& targets,
                                                            const config::UserConfig& base, Printer& printer) const {
  std::vector<EngineChange> steps;
  for (const auto& [role, target] : targets) {
    std::set<int> have;
    int count = 0;
    for (const auto& d : live)
      if (d.role == role) {
        have.insert(d.index);
        ++count;
      }
    const int base_count = baseline_count(base, role);
    if (count != base_count)
      printer.warning("role " + role + " had drifted: " + std::to_string(count) + " live engine Deployments, " +
                      std::to_string(base_count) + " in the baseline; both become " + std::to_string(target));
    // Missing instances below the target are created (a gap left by hand included).
    for (int i = 0; i < target; ++i)
      if (!have.count(i)) steps.push_back({render::engine_deployment_name(base, role, i), true, ""});
    // Scale-in removes the highest indices first; a Deployment without a readable index goes too (it is none of
    // 0..target-1).
    std::vector<const WorkloadDeployment*> extra;
    for (const auto& d : live)
      if (d.role == role && (d.index < 0 || d.index >= target)) extra.push_back(&d);
    std::sort(extra.begin(), extra.end(),
              [](const WorkloadDeployment* a, const WorkloadDeployment* b) { return a->index > b->index; });
    for (const auto* d : extra) steps.push_back({d->name, false, d->uid});
  }
  return steps;
}

void ScaleOptions::run_multi(kube::Client& client, Printer& printer, const json::object& cm,
                             const baseline::Baseline& stored, const InstanceCounts& target) {
  const config::UserConfig& base = stored.user();
  const std::string cm_name = baseline::kConfigMapName;
  const std::map<std::string, json::object> rendered = render_engines(stored, namespace_);
  const std::string workload = stored.workload_name();
  const auto live = list_workload_deployments(client, namespace_, workload, true);
  std::vector<std::pair<std::string, int>> targets;  // prefill first, as printed
  if (proposed_ || flags_.prefill) targets.emplace_back("prefill", target.prefill);
  if (proposed_ || flags_.decode) targets.emplace_back("decode", target.decode);
  if (base.hybrid() && (proposed_ || flags_.hybrid)) targets.emplace_back("union", target.hybrid);
  if (base.encode && (proposed_ || flags_.encode)) targets.emplace_back("encode", target.encode);
  const std::vector<EngineChange> steps = plan_engine_changes(live, targets, base, printer);
  std::vector<json::object> adds;
  for (const auto& c : steps)
    if (const auto it = rendered.find(c.name); c.create && it != rendered.end()) adds.push_back(it->second);
  check_added_npus(client, printer, {}, adds);

  std::vector<std::string> roles;
  std::map<std::string, int> live_counts;
  for (const auto& [role, n] : targets) {
    roles.push_back(role);
    live_counts[role] = 0;
  }
  for (const auto& d : live)
    if (live_counts.count(d.role)) ++live_counts[d.role];
  plan_intent(stored.deploy_mode(), workload, roles, base, target, cm, live_counts);

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  std::vector<json::object> results;
  std::vector<change::Step> writes;
  for (const auto& c : steps) {
    auto it = rendered.find(c.name);
    if (it == rendered.end()) throw CommandError("no engine Deployment " + c.name + " renders from the baseline");
    writes.push_back(engine_step(client, c, it->second, opts, results));
  }
  json::object baseline_after = cm;
  if (new_baseline_text(base, target) != base.raw)
    writes.push_back(baseline_step(client, cm, base, target, opts, baseline_after));
  if (new_baseline_text(base, target) != base.raw && !opts.dry_run)
    writes.push_back(revision_step(client, namespace_, baseline_after,
                                   author_.value_or(author_now(flags_.history.cause_or("scale"))),
                                   flags_.history.history_limit, printer));
  // Every right the writes need, all named before the first (issue 33).
  if (!writes.empty()) rights::check_before_write(client, namespace_, rights::kScale, false, "scale");
  LockFence fence(*lock_, change::Intent{intent_});
  change::Runner runner(fence,
                        wording(base, target, [&] { return engines_now(client, namespace_, workload, targets); }));
  runner.run(writes);
  lock_->nothing_to_recover();  // the engine Deployments and the baseline agree

  std::size_t created = 0;
  for (const auto& c : steps)
    printer.result(kube::gvr::kDeployments, c.name, c.create ? "created" : "deleted", dry_run_,
                   c.create && created < results.size() ? std::move(results[created++]) : json::object());
  if (steps.empty())
    printer.result(kube::gvr::kConfigMaps, cm_name, target != counts_of(base) ? "configured" : "unchanged", dry_run_,
                   std::move(baseline_after));
  else printer.shown_object(std::move(baseline_after));
}

}  // namespace mindie::cmd
