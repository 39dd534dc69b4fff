#include "mindie/rollout_status.h"

namespace mindie::rollout {

namespace json = boost::json;

namespace {

RoleRollout role_rollout(const status::Role& role, bool multi) {
  RoleRollout r{role.name,
                role.wanted_instances.value_or(role.spec_instances.value_or(0)),
                role.instances_on_current_template,
                role.ready_instances,
                {}};
  for (const auto& inst : role.instances) {
    if (!inst.wanted || inst.current != false) continue;
    const std::string name = multi ? "deployment/" + inst.deployment.value_or("")
                                   : inst.infer_service + " instance " + std::to_string(inst.index);
    r.out_of_date.push_back({name, inst.rollout});
  }
  return r;
}

json::array strings(const std::vector<std::string>& lines) { return json::array(lines.begin(), lines.end()); }

}  // namespace

RolloutStatus summarize(const status::Report& report, std::string subject) {
  RolloutStatus s;
  s.ns = report.ns;
  s.subject = std::move(subject);
  s.deploy_mode = report.deploy_mode;
  s.done = report.ready;
  for (const auto& role : report.roles)
    if (!role.unused()) s.roles.push_back(role_rollout(role, report.multi()));
  s.converging = report.converging;
  if (!s.done) s.not_ready = report.unready;
  return s;
}

json::object RolloutStatus::to_json() const {
  json::array role_list;
  for (const auto& r : roles) {
    json::array old;
    for (const auto& o : r.out_of_date) old.push_back(json::object{{"instance", o.instance}, {"reason", o.reason}});
    role_list.push_back(json::object{{"name", r.name},
                                     {"instances", r.instances},
                                     {"current", r.current},
                                     {"ready", r.ready},
                                     {"outOfDate", std::move(old)}});
  }
  return {{"apiVersion", "kubectl-mindie/v1"},
          {"kind", "RolloutStatus"},
          {"namespace", ns},
          {"subject", subject},
          {"deployMode", deploy_mode},
          {"done", done},
          {"roles", std::move(role_list)},
          {"converging", strings(converging)},
          {"notReady", strings(not_ready)}};
}

std::string RolloutStatus::text() const {
  if (done) return subject + " successfully rolled out\n";
  std::string out = "Waiting for " + subject + " rollout to finish:\n";
  for (const auto& r : roles) {
    out += "  " + r.name + ": " + std::to_string(r.current) + " of " + std::to_string(r.instances) +
           " instances current, " + std::to_string(r.ready) + " ready";
    for (std::size_t i = 0; i < r.out_of_date.size(); ++i)
      out += (i == 0 ? "; on an earlier pod template: " : ", ") + r.out_of_date[i].instance + " (" +
             r.out_of_date[i].reason + ")";
    out += "\n";
  }
  for (const auto& c : converging) out += "  " + c + "\n";
  return out;
}

}  // namespace mindie::rollout
