// build_report's drift (the live state against the baseline and its own spec) and convergence (controllers behind).
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "mindie/rollout.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"
#include "util/strings.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using detail::find;
using util::find;
using util::num;
using util::str;

/// infer-operator's API group (its InstanceSets), for the kubectl commands the report suggests.
constexpr const char* kInstanceSetsGroup = "mindcluster.huawei.com";

/// multi_deployment: the Deployments, each converging until the deployment controller observed its generation.
void list_deployments(const Context& ctx) {
  if (!ctx.report.found) ctx.report.drift.push_back("no Deployment of " + ctx.iss_name + " exists");
  for (const auto& d : ctx.in.deployments) {
    DeploymentStatus listed;
    std::tie(listed.role, listed.index) = deployment_instance(find(&d, {"metadata", "labels"}));
    listed.generation = num(find(&d, {"metadata", "generation"}));
    listed.observed_generation = num(find(&d, {"status", "observedGeneration"}));
    listed.replicas = num(find(&d, {"spec", "replicas"}), 1);
    listed.ready_replicas = num(find(&d, {"status", "readyReplicas"}));
    listed.updated_replicas = num(find(&d, {"status", "updatedReplicas"}));
    listed.old_replicas = std::max<std::int64_t>(0, num(find(&d, {"status", "replicas"})) - listed.updated_replicas);
    listed.rollout = rollout::pending(d, "Deployment");
    listed.name = str(find(&d, {"metadata", "name"}));
    if (listed.observed_generation < listed.generation) {
      ctx.ready = false;
      ctx.report.converging.push_back("the deployment controller has not observed generation " +
                                      std::to_string(listed.generation) + " of deployment " + listed.name + " yet");
    }
    ctx.report.deployments.push_back(std::move(listed));
  }
}

/// The InferServiceSet's generation, converging until the operator observed it.
void judge_generation(const Context& ctx, const json::object& iss) {
  const std::int64_t generation = num(find(iss, {"metadata", "generation"}));
  const std::int64_t observed = num(find(iss, {"status", "observedGeneration"}));
  ctx.report.generation = generation;
  ctx.report.observed_generation = observed;
  if (observed == generation) return;
  ctx.ready = false;
  // No status at all: the operator never acted on it, which usually means it is not running (or not watching
  // this namespace). A refusal comes with its ValidateError events, listed apart.
  const bool never = find(iss, {"status"}) == nullptr;
  ctx.report.converging.push_back(
      "the operator has not observed generation " + std::to_string(generation) + " yet (" +
      (never ? "no status at all: is infer-operator running and watching namespace " + ctx.ns + "?"
             : "status.observedGeneration " + std::to_string(observed)) +
      ")");
}

}  // namespace

void judge_live_object(const Context& ctx, const json::object* iss) {
  if (ctx.multi) {
    list_deployments(ctx);
  } else if (iss) {
    judge_generation(ctx, *iss);
  } else {
    ctx.report.drift.push_back("inferserviceset " + ctx.iss_name + " does not exist");
  }
  if (const std::int64_t asked = iss ? num(find(*iss, {"spec", "replicas"}), 1) : 1; !ctx.multi && asked > kMaxServices)
    ctx.report.drift.push_back("inferserviceset " + ctx.iss_name + " asks for " + std::to_string(asked) +
                               " InferServices (spec.replicas), beyond what kubectl-mindie deploys (1); only the "
                               "first " +
                               std::to_string(kMaxServices) + " are shown");
}

void judge_instance_sets(const Context& ctx, const Grouped& grouped, const LiveRole& lr, const RoleTally& tally,
                         Role& role) {
  static const std::vector<const json::value*> kNone;
  const auto found = grouped.instance_sets.find(lr.name);
  const auto& instance_sets = found == grouped.instance_sets.end() ? kNone : found->second;
  // What the operator said about this role's InstanceSets: a refusal (ValidateError), a Service it could not
  // create, ... Shown as the reason when the role is not healthy (old events of a healthy role say nothing now).
  for (std::int64_t sv = 0; sv < (ctx.multi ? 0 : ctx.services); ++sv) {
    const std::string ist = ctx.iss_name + "-" + std::to_string(sv) + "-" + lr.name;
    std::string uid;  // events about an earlier InstanceSet of the same name are not about this one
    for (const auto* s : instance_sets)
      if (str(find(s, {"metadata", "name"})) == ist) uid = str(find(s, {"metadata", "uid"}));
    for (auto& e : warning_events(ctx.in.events, "InstanceSet", ist, 3, uid)) {
      e.instance_set = ist;
      // They explain what the operator did not create; pods that exist explain themselves.
      if (!tally.healthy && tally.operator_missed)
        ctx.report.unready.push_back("role " + lr.name + ": " + operator_event_text("instanceset/" + ist, e));
      role.operator_events.push_back(std::move(e));
    }
  }
  for (const auto* ist : instance_sets)
    if (!find(ist, {"metadata", "labels", render::kPrioritySchedulingLabel})) {
      const std::string ist_name = str(find(ist, {"metadata", "name"}));
      role.instance_sets_without_strategy.push_back(ist_name);
      const std::string line =
          "role " + lr.name + ": instanceset/" + ist_name + " has no " + render::kPrioritySchedulingLabel +
          " label (an older infer-operator created it), so a current operator creates no new workloads for it "
          "and scale-out does nothing; add it: kubectl label instancesets." +
          std::string(kInstanceSetsGroup) + " -n " + ctx.ns + " " + ist_name + " " + render::kPrioritySchedulingLabel +
          "=Parallel";
      ctx.report.drift.push_back(line);
      if (!tally.healthy) ctx.report.unready.push_back(line);  // why wait never sees the new instances
    }
  for (const auto* ist : instance_sets)
    if (!lr.hash.empty() && !find(ist, {"metadata", "deletionTimestamp"}) &&
        str(find(ist, {"spec", "spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation})) !=
            lr.hash)
      role.instance_sets_on_other_templates.push_back(str(find(ist, {"metadata", "name"})));
}

void judge_role_drift(const Context& ctx, const LiveRole& lr, const RoleTally& tally, bool baseline_usable) {
  auto& drift = ctx.report.drift;
  const std::string& name = lr.name;
  const std::string roles_at = "spec.template.roles[" + std::to_string(lr.index) + "]";
  if (!tally.other_images.empty()) {
    const std::string images = util::join(tally.other_images, ", ");
    const std::string wanted_images = util::join(lr.spec_images, ", ",
                                                 [](const auto& spec) -> const std::string& { return spec.second; });
    drift.push_back("role " + name + ": pods run image " + images + ", " + roles_at + " says " + wanted_images);
  }
  const bool iss = ctx.in.service_set.has_value();
  const std::int64_t base = lr.base, spec = lr.spec;
  const auto scaling = ctx.in.scaling.find(name);
  const auto scaled = [&](std::int64_t n) { return n == scaling->second.first || n == scaling->second.second; };
  if (!baseline_usable) {
    // Nothing to compare with; the baseline problem is already reported.
  } else if (scaling != ctx.in.scaling.end() && spec != base && scaled(base) && scaled(spec)) {
    ctx.ready = false;  // a scale between its workload write and its baseline write
    ctx.report.converging.push_back(
        "role " + name + ": kubectl-mindie " + ctx.in.scaling_by + " is changing it from " +
        std::to_string(scaling->second.first) + " to " + std::to_string(scaling->second.second) + " instances" +
        (ctx.in.scaling_by == "rollout" ? " (a temporary instance while one is replaced)" : ""));
  } else if (iss && spec < 0) {
    if (base > 0) {
      ctx.ready = false;
      drift.push_back("role " + name + ": in the baseline but not in the live InferServiceSet");
    }
  } else if (ctx.multi && spec != base) {
    if (base > 0 || spec > 0) {
      if (spec < base) ctx.ready = false;
      drift.push_back("role " + name + ": baseline " + std::to_string(base) + " instances, " + std::to_string(spec) +
                      " Deployments live");
    }
  } else if (iss && spec != base && !lr.hpa) {
    drift.push_back("role " + name + ": baseline " + std::to_string(base) + " instances, " + roles_at + ".replicas " +
                    std::to_string(spec));
  }
  if (!ctx.multi && lr.observed && spec >= 0 && *lr.observed != spec * ctx.services && !lr.hpa) {
    ctx.ready = false;
    ctx.report.converging.push_back("role " + name + ": spec asks for " + std::to_string(spec * ctx.services) +
                                    " instances, the operator's InstanceSets report " + std::to_string(*lr.observed));
  }
}

}  // namespace mindie::status::detail
