// build_report's verdict: infer-operator's word on each InferService, weighed against what the report found.
#include <algorithm>

#include "mindie/status_internal.h"
#include "util/json_path.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using util::find;
using util::str;

/// Why InferService `name`'s InstanceSets (`instance_sets`) are not Ready, leaving out master/standby roles the
/// report finds healthy (the standby never passes readiness, so the operator never calls them Ready:
/// Ascend/mind-cluster infer-operator, workload/deployment_handler.go); `standby_only` is set when such a role is not
/// Ready.
std::vector<std::string> instance_set_causes(const std::string& name, const json::array& instance_sets,
                                             const std::vector<Role>& roles, bool& standby_only) {
  std::vector<std::string> causes;
  for (const auto& ist : instance_sets) {
    if (str(find(&ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"})) != name) continue;
    const auto [ist_status, ist_why] = ready_condition(ist);
    if (ist_status == "True") continue;
    const std::string role = str(find(&ist, {"metadata", "labels", "infer.huawei.com/instanceset-name"}));
    const auto r = std::find_if(roles.begin(), roles.end(), [&](const Role& x) { return x.name == role; });
    if (r != roles.end() && r->master_standby && r->healthy) {
      standby_only = true;
      continue;
    }
    causes.push_back("instanceset/" + str(find(&ist, {"metadata", "name"})) +
                     (ist_status.empty() ? " has no Ready condition yet" : " " + ist_why));
  }
  return causes;
}

/// Whether the report may agree with infer-operator's verdict on each InferService of `names` (`infer_services`, the
/// listed objects): an InferService it does not call Ready keeps the report not ready, unless the only InstanceSets
/// of it that are not Ready are master/standby roles the report finds healthy. Why not goes to `unready`.
bool operator_agrees(const std::vector<InferService>& names, const json::array& infer_services,
                     const json::array& instance_sets, const std::vector<Role>& roles,
                     std::vector<std::string>& unready) {
  bool agrees = true;
  for (const auto& service : names) {
    const json::value* obj = nullptr;
    for (const auto& s : infer_services)
      if (str(find(&s, {"metadata", "name"})) == service.name) obj = &s;
    if (obj == nullptr) continue;  // not made yet: the missing pods say so
    const auto [status, why] = ready_condition(*obj);
    if (status == "True") continue;
    bool standby_only = false;  // an InstanceSet not Ready is a healthy master/standby pair
    const std::vector<std::string> causes = instance_set_causes(service.name, instance_sets, roles, standby_only);
    if (causes.empty() && standby_only) continue;
    agrees = false;
    std::string line = "inferservice/" + service.name + ": infer-operator reports it " +
                       (status.empty() ? "without a Ready condition yet" : "not Ready (" + why + ")");
    for (const auto& c : causes) line += "; " + c;
    unready.push_back(line);
  }
  return agrees;
}

}  // namespace

void list_infer_services(const Context& ctx) {
  for (std::int64_t i = 0; i < (ctx.multi ? 0 : ctx.services); ++i) {
    InferService service;
    service.name = ctx.iss_name + "-" + std::to_string(i);
    service.index = i;
    for (const auto& s : ctx.in.infer_services)
      if (str(find(&s, {"metadata", "name"})) == service.name)
        service.ready = condition_status(find(&s, {"status"}), "Ready") == "True";
    service.events = warning_events(ctx.in.events, "InferService", service.name, 3);
    if (!service.ready)
      for (const auto& e : service.events)
        ctx.report.unready.push_back(operator_event_text("inferservice/" + service.name, e));
    ctx.report.infer_services.push_back(std::move(service));
  }
}

void final_verdict(const Context& ctx) {
  Report& report = ctx.report;
  if (!ctx.multi && !operator_agrees(report.infer_services, ctx.in.infer_services, ctx.in.instance_sets, report.roles,
                                     report.unready))
    ctx.ready = false;
  report.ready = ctx.ready;
  if (!ctx.in.workloads_unknown.empty()) report.warnings.push_back(ctx.in.workloads_unknown);
  if (!ctx.in.workload_events_unknown.empty()) report.warnings.push_back(ctx.in.workload_events_unknown);
}

}  // namespace mindie::status::detail
