// build_report's grouping: the live objects by role and instance, and what the live spec asks of each role.
#include <algorithm>

#include "mindie/render.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using util::find;
using util::num;
using util::str;

/// The most instances of one role the report lists (kubectl-mindie deploys at most 16).
constexpr std::int64_t kMaxListedInstances = 1024;

bool is_control_role(const std::string& role) { return role == "controller" || role == "coordinator"; }

/// Which instance a pod or workload of set `iss_name` belongs to, by the operator's labels: role
/// (instanceset-name, "" when absent), InferService index (-1 unless one of the set's) and instance index (-1 when
/// unreadable).
std::tuple<std::string, std::int64_t, std::int64_t> operator_instance(const json::value* labels,
                                                                      const std::string& iss_name) {
  std::int64_t k = -1;
  try {
    k = std::stoll(str(find(labels, {"infer.huawei.com/instanceset-index"})));
  } catch (const std::exception&) {
  }
  return {str(find(labels, {"infer.huawei.com/instanceset-name"})),
          service_index(str(find(labels, {"infer.huawei.com/inferservice-name"})), iss_name), k};
}

/// The role's entry in the live spec: instances, pods per instance, index, HPA ownership.
void read_spec_role(const json::array* live_roles, LiveRole& lr) {
  if (!live_roles) return;
  for (std::size_t i = 0; i < live_roles->size(); ++i) {
    const json::value& r = (*live_roles)[i];
    if (str(find(&r, {"name"})) != lr.name) continue;
    lr.spec = num(find(&r, {"replicas"}), 1);
    lr.pods_per_instance = num(find(&r, {"spec", "replicas"}), 1);
    lr.hpa = str(find(&r, {"scalingPolicy", "type"})) == "HPA";
    lr.index = i;
    lr.live = &r;
  }
}

/// Instances wanted per InferService: the role's replicas, or for an HPA-owned role what the HPA set on the
/// InstanceSet (Ascend/mind-cluster infer-operator, inferservice_controller.go updateExistInstanceSets: the role's
/// count is only where the HPA started). Drift beyond the limit.
void read_wanted(const Context& ctx, const std::vector<const json::value*>& instance_sets, LiveRole& lr) {
  for (std::int64_t sv = 0; sv < ctx.services && lr.spec >= 0; ++sv) lr.wanted_of[sv] = lr.spec;
  if (lr.hpa)
    for (const auto* ist : instance_sets) {
      const std::int64_t sv =
          service_index(str(find(ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"})), ctx.iss_name);
      if (lr.wanted_of.count(sv))
        lr.wanted_of[sv] = std::max<std::int64_t>(0, num(find(ist, {"spec", "replicas"}), lr.spec));
    }
  for (const auto& [sv, n] : lr.wanted_of) {
    lr.wanted_total += n;
    if (n > kMaxInstancesPerRole)
      ctx.report.drift.push_back("role " + lr.name + ": " + std::to_string(n) +
                                 " instances wanted, beyond "
                                 "kubectl-mindie's limit of " +
                                 std::to_string(kMaxInstancesPerRole) + " per role" +
                                 (n > kMaxListedInstances
                                      ? "; only the first " + std::to_string(kMaxListedInstances) + " are shown"
                                      : std::string()));
  }
}

/// multi_deployment: the live spec is which instances have a Deployment, and pods per instance from their replicas.
/// Every live Deployment is a wanted instance (there are no InferServices to count per).
void read_deployments(const std::map<std::int64_t, const json::value*>& role_deployments, LiveRole& lr) {
  lr.spec = static_cast<std::int64_t>(role_deployments.size());
  for (const auto& [k, d] : role_deployments)
    lr.pods_per_instance = std::max(lr.pods_per_instance, num(find(d, {"spec", "replicas"}), 1));
  lr.wanted_total = lr.spec;
}

/// Instances observed: Deployments the deployment controller has observed in their current generation, plus the
/// InstanceSets' status.replicas; the HPA an InstanceSet reports goes to role.hpa.
void read_observed(const Context& ctx, const std::map<std::int64_t, const json::value*>& role_deployments,
                   const std::vector<const json::value*>& instance_sets, LiveRole& lr, Role& role) {
  if (ctx.multi && !role_deployments.empty()) {
    lr.observed = 0;
    for (const auto& [k, d] : role_deployments)
      if (num(find(d, {"status", "observedGeneration"})) >= num(find(d, {"metadata", "generation"}))) ++*lr.observed;
  }
  for (const auto* s : instance_sets) {
    lr.observed = lr.observed.value_or(0) + num(find(s, {"status", "replicas"}));
    if (const auto* scaling = find(s, {"status", "scalingResourceStatus"}); scaling && scaling->is_object()) {
      const auto* r = find(scaling, {"ready"});
      role.hpa = Hpa{str(find(scaling, {"name"})), r && r->is_bool() && r->as_bool(), str(find(scaling, {"message"}))};
    }
  }
}

/// The pod template the role asks for (its hash and container images), to tell which instances run another; gang
/// scheduling; when each InferService's InstanceSet of the role was made.
void read_template(const std::vector<const json::value*>& instance_sets, LiveRole& lr) {
  lr.hash = str(find(lr.live, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}));
  if (const auto* cs = find(lr.live, {"spec", "template", "spec", "containers"}); cs && cs->is_array())
    for (const auto& c : cs->as_array()) lr.spec_images[str(find(&c, {"name"}))] = str(find(&c, {"image"}));
  // infer-operator decides gang scheduling from the InstanceSet's label, fixed at its creation
  // (inferservice_controller.go newInstanceSet); before the InstanceSet exists, the live role's label is what it will
  // copy.
  lr.gang = str(find(lr.live, {"metadata", "labels", render::kGangScheduleLabel})) == "true";
  for (const auto* ist : instance_sets)
    if (const auto* v = find(ist, {"metadata", "labels", render::kGangScheduleLabel})) lr.gang = str(v) == "true";
  // InferService -> when this role's InstanceSet in it was made (server time, as the events' times).
  for (const auto* ist : instance_sets)
    lr.instance_set_created[str(find(ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"}))] =
        util::parse_rfc3339(str(find(ist, {"metadata", "creationTimestamp"}))).value_or(0);
}

}  // namespace

std::pair<std::string, std::int64_t> deployment_instance(const json::value* labels) {
  std::string role = str(find(labels, {render::kComponentLabel}));
  std::int64_t k = 0;  // controller, coordinator, kv-pool, kv-conductor: one instance
  if (render::is_instance_engine_role(role)) {
    try {
      k = std::stoll(str(find(labels, {render::kInstanceIndexLabel})));
    } catch (const std::exception&) {  // shown under instance -1, as for the operator's pods
      k = -1;
    }
  }
  return {std::move(role), k};
}

Grouped group_inputs(const Context& ctx) {
  Grouped g;
  if (ctx.multi)
    for (const auto& d : ctx.in.deployments) {
      const auto [role, k] = deployment_instance(find(&d, {"metadata", "labels"}));
      if (!role.empty()) g.deployments[role][k] = &d;
    }
  // role -> (service, instance) -> pods, from the operator's labels.
  for (const auto& pod : ctx.in.pods) {
    const json::value* labels = find(&pod, {"metadata", "labels"});
    if (ctx.multi) {
      const auto [role, k] = deployment_instance(labels);
      if (!role.empty()) g.pods[role][{0, k}].push_back(&pod);
      continue;
    }
    // A label we cannot read still shows the pod, under instance -1.
    const auto [role, service, k] = operator_instance(labels, ctx.iss_name);
    if (role.empty() || service < 0) continue;
    g.pods[role][{service, k}].push_back(&pod);
  }
  // InstanceSets by role: what the operator has observed.
  for (const auto& s : ctx.in.instance_sets) {
    const std::string role = str(find(&s, {"metadata", "labels", "infer.huawei.com/instanceset-name"}));
    if (!role.empty()) g.instance_sets[role].push_back(&s);
  }
  // The operator's workloads by role and (InferService, instance): each one's pod template is what that instance
  // runs, since the operator never updates a workload (workload/statefulset_handler.go, deployment_handler.go).
  for (const auto& w : ctx.in.workloads) {
    const auto [role, service, k] = operator_instance(find(&w, {"metadata", "labels"}), ctx.iss_name);
    if (!role.empty() && service >= 0 && k >= 0) g.workloads[role][{service, k}] = &w;
  }
  return g;
}

LiveRole read_live_role(const Context& ctx, Grouped& grouped, const std::string& name, std::int64_t base,
                        const json::array* live_roles, Role& role) {
  LiveRole lr;
  lr.name = name;
  lr.base = base;
  read_spec_role(live_roles, lr);
  const auto& instance_sets = grouped.instance_sets[name];
  read_wanted(ctx, instance_sets, lr);
  const auto& role_deployments = grouped.deployments[name];
  if (ctx.multi) read_deployments(role_deployments, lr);
  if (lr.pods_per_instance > kMaxPodsPerInstance)
    ctx.report.drift.push_back("role " + name + ": " + std::to_string(lr.pods_per_instance) +
                               " pods per instance wanted, beyond kubectl-mindie's limit of " +
                               std::to_string(kMaxPodsPerInstance));
  // Only the master of a master/standby pair passes readiness (infer-operator behaviour).
  lr.master_standby = is_control_role(name) && lr.pods_per_instance == 2;
  lr.needed_ready = lr.master_standby ? 1 : lr.pods_per_instance;
  read_observed(ctx, role_deployments, instance_sets, lr, role);
  // Every instance the live spec asks for is listed, with or without pods, so a missing pod or instance
  // shows up instead of vanishing; pods of instances beyond the spec (being scaled in) are listed too.
  auto& by_instance = grouped.pods[name];
  if (ctx.multi) {
    for (const auto& [k, d] : role_deployments) by_instance.try_emplace({0, k});
  } else {
    for (const auto& [sv, n] : lr.wanted_of)
      // Listed up to a bound: a hand-edited count of millions must not allocate millions of rows.
      for (std::int64_t k = 0; k < std::min(n, kMaxListedInstances); ++k) by_instance.try_emplace({sv, k});
  }
  read_template(instance_sets, lr);
  role.gang = lr.gang;
  return lr;
}

}  // namespace mindie::status::detail
