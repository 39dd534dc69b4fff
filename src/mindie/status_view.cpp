// The human views of a status::Report (status_view.h): the head line, the role table, the tree, the Services.
#include "mindie/status_view.h"

#include <algorithm>
#include <sstream>

#include "mindie/config.h"
#include "util/table.h"
#include "util/terminal.h"
#include "util/time.h"

namespace mindie::status {

namespace {

std::string count_or_dash(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; }

/// "2/4", or "2/4 (+2 terminating)" while pods are being deleted (they are never counted ready).
std::string ready_of(std::int64_t ready, std::int64_t desired, std::int64_t terminating) {
  std::string out = std::to_string(ready) + "/" + std::to_string(desired);
  if (terminating > 0) out += " (+" + std::to_string(terminating) + " terminating)";
  return out;
}

/// The first line: what was looked at, and the verdict.
std::string head_line(const Report& report) {
  std::ostringstream out;
  const bool multi = report.multi();
  // single_container runs one Deployment: name it rather than the workload label that groups it.
  if (report.deploy_mode == config::to_string(config::DeployMode::SingleContainer) && report.deployments.size() == 1)
    out << "deployment/" << report.deployments[0].name;
  else out << (multi ? "deployments of " : "inferserviceset/") << report.name;
  out << " in namespace " << report.ns << " (" << report.deploy_mode << "): ";
  if (!report.found) {
    out << "not found";
  } else if (multi) {
    out << (report.ready ? "Ready" : "Not ready");
  } else {
    out << (report.ready ? "Ready" : "Not ready") << ", generation " << report.generation.value_or(0) << " (observed "
        << report.observed_generation.value_or(0) << ")";
  }
  out << "\n\n";
  return out.str();
}

/// The role table: instance counts from the baseline, the spec and the operator, ready instances and pods.
std::string role_table(const std::vector<const Role*>& shown) {
  util::Table table({{"ROLE"},
                     {"BASELINE"},
                     {"SPEC"},
                     {"OBSERVED"},
                     {"READY INSTANCES"},
                     {"PODS READY"},
                     {"RESTARTS"},
                     {"REPLICAS SET BY"}},
                    false);
  for (const Role* role : shown) {
    table.add({role->name, count_or_dash(role->baseline_instances), count_or_dash(role->spec_instances),
               count_or_dash(role->observed_instances),
               std::to_string(role->ready_instances) + "/" +
                   (role->spec_instances ? count_or_dash(role->wanted_instances) : std::string("0")),
               ready_of(role->ready_pods, role->desired_pods, role->terminating_pods), std::to_string(role->restarts),
               role->hpa_owned ? "HPA" : "spec"});
  }
  return table.str();
}

/// The rows of instance `inst` of `role` under prefix `p2` and its pods below it.
void instance_rows(const Role& role, const Instance& inst, bool last_inst, const std::string& p2, util::Table& tree) {
  std::string inst_label = "instance " + std::to_string(inst.index);
  if (inst.deployment) inst_label += " (deployment/" + *inst.deployment + ")";
  const bool rebuilding = inst.rebuild && inst.rebuild->ongoing;
  tree.add({p2 + (last_inst ? "└── " : "├── ") + inst_label,
            ready_of(inst.ready_pods, role.pods_per_instance, inst.terminating_pods) + " pods",
            inst.healthy            ? ""
            : rebuilding            ? "Rebuilding"
            : inst.pods.empty()     ? "NoPods"
            : inst.current == false ? "OutOfDate"
                                    : "Unhealthy"});
  const std::string p3 = p2 + (last_inst ? "    " : "│   ");
  for (std::size_t pi = 0; pi < inst.pods.size(); ++pi) {
    const kube::PodState& pod = inst.pods[pi].state;
    tree.add({p3 + (pi + 1 == inst.pods.size() ? "└── " : "├── ") + pod.name,
              std::to_string(pod.ready_containers) + "/" + std::to_string(pod.containers), pod.status,
              std::to_string(pod.restarts), pod.age_seconds ? util::human_duration(*pod.age_seconds) : "<unknown>",
              pod.node.empty() ? "<none>" : pod.node, std::to_string(inst.pods[pi].npus)});
  }
}

/// The rows of `role` in InferService `svc` under prefix `p1`: the role, its instances, their pods.
void role_rows(const Role& role, const InferService& svc, bool last_role, const std::string& p1, util::Table& tree) {
  std::vector<const Instance*> insts;
  for (const auto& inst : role.instances)
    if (inst.infer_service == svc.name) insts.push_back(&inst);
  std::int64_t healthy = 0, wanted = 0;
  for (const auto* inst : insts) {
    if (inst->wanted) ++wanted;
    if (inst->healthy) ++healthy;
  }
  std::string label = role.name;
  if (role.master_standby) label += " (master/standby)";
  if (role.hpa_owned) label += " (replicas owned by HPA)";
  tree.add({p1 + (last_role ? "└── " : "├── ") + label,
            std::to_string(healthy) + "/" + std::to_string(wanted) + " instances"});
  const std::string p2 = p1 + (last_role ? "    " : "│   ");
  for (std::size_t ii = 0; ii < insts.size(); ++ii) instance_rows(role, *insts[ii], ii + 1 == insts.size(), p2, tree);
}

/// The tree: InferServiceSet -> InferService -> role -> instance -> pods, pod cells aligned as a table (`wide` adds
/// NODE and NPUS).
std::string tree_table(const Report& report, const std::vector<const Role*>& shown, bool wide) {
  const bool multi = report.multi();
  util::Table tree({{""}, {"READY"}, {"STATUS"}, {"RESTARTS"}, {"AGE"}, {"NODE", true}, {"NPUS", true}}, wide);
  // multi_deployment: roles hang directly under the deployment, as under one pseudo InferService named "".
  tree.add({(multi ? "deployments/" : "inferserviceset/") + report.name});
  std::vector<InferService> services = report.infer_services;
  if (multi) services = {InferService{"", 0, report.ready, {}}};
  for (std::size_t s = 0; s < services.size(); ++s) {
    const InferService& svc = services[s];
    const bool last_svc = s + 1 == services.size();
    if (!multi)
      tree.add(
          {std::string(last_svc ? "└── " : "├── ") + "inferservice/" + svc.name, svc.ready ? "Ready" : "NotReady"});
    const std::string p1 = multi ? "" : last_svc ? "    " : "│   ";
    for (std::size_t ri = 0; ri < shown.size(); ++ri) role_rows(*shown[ri], svc, ri + 1 == shown.size(), p1, tree);
  }
  return tree.str();
}

/// The Services as `kubectl get service` shows them.
std::string service_table(const std::vector<ServiceStatus>& services) {
  util::Table table({{"SERVICE"}, {"TYPE"}, {"CLUSTER-IP"}, {"PORT(S)"}}, false);
  for (const auto& svc : services) {
    std::string ports;  // kubectl get service's column: port[:nodePort]/protocol, comma-separated
    for (const auto& p : svc.ports) {
      const auto& o = p.as_object();
      if (!ports.empty()) ports += ",";
      ports += std::to_string(o.at("port").to_number<std::int64_t>());
      if (const auto* n = o.if_contains("nodePort")) ports += ":" + std::to_string(n->to_number<std::int64_t>());
      ports += "/" + std::string(o.at("protocol").as_string());
    }
    table.add(
        {svc.name, svc.type, svc.cluster_ip.empty() ? "<none>" : svc.cluster_ip, ports.empty() ? "<none>" : ports});
  }
  return table.str();
}

}  // namespace

std::string render_table(const Report& report, bool wide) {
  std::ostringstream out;
  out << head_line(report);
  std::vector<const Role*> shown;
  for (const auto& r : report.roles)
    if (!r.unused()) shown.push_back(&r);  // kv-pool / kv-conductor when off everywhere would only add noise
  out << role_table(shown);
  if (report.found) out << '\n' << tree_table(report, shown, wide);
  if (!report.services.empty()) out << '\n' << service_table(report.services);
  out << '\n';
  for (const auto& w : report.warnings) out << "warning: " << w << '\n';
  if (report.drift.empty()) out << "live state matches the baseline\n";
  for (const auto& d : report.drift) out << "drift: " << d << '\n';
  for (const auto& c : report.converging) out << "converging: " << c << '\n';
  if (report.unready.empty() && report.found) out << "every desired pod exists and is ready\n";
  for (const auto& u : report.unready) out << "not ready: " << u << '\n';
  return util::escape_terminal(out.str());  // pod messages and events come from the cluster
}

std::vector<std::string> summary_lines(const Report& report) {
  std::vector<std::string> lines;
  std::string head = std::string("ready=") + (report.ready ? "true" : "false");
  for (const auto& role : report.roles) {
    if (role.unused()) continue;
    head += " " + role.name + "=" + std::to_string(role.ready_instances) + "/" + count_or_dash(role.spec_instances);
  }
  lines.push_back(head);
  for (const auto& d : report.drift) lines.push_back("drift: " + d);
  for (const auto& c : report.converging) lines.push_back("converging: " + c);
  for (const auto& u : report.unready) lines.push_back("not ready: " + u);
  for (auto& line : lines) line = util::escape_terminal(line);
  return lines;
}

}  // namespace mindie::status
