#include "mindie/status_view.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "mindie/config.h"
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

/// Display width of UTF-8 text: its code points (the tree's box-drawing characters are one column, three bytes).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Left-aligned columns, two spaces apart, widths from the widest cell (kubectl's tabwriter).
std::string columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(r[i]));
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - display_width(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace

std::string render_table(const Report& report, bool wide) {
  std::ostringstream out;
  const bool multi = report.multi();
  // single_container runs one Deployment: name it rather than the workload label that groups it.
  if (report.deploy_mode == config::to_string(config::DeployMode::SingleContainer) && report.deployments.size() == 1)
    out << "deployment/" << report.deployments[0].name;
  else
    out << (multi ? "deployments of " : "inferserviceset/") << report.name;
  out << " in namespace " << report.ns << " (" << report.deploy_mode << "): ";
  if (!report.found) {
    out << "not found";
  } else if (multi) {
    out << (report.ready ? "Ready" : "Not ready");
  } else {
    out << (report.ready ? "Ready" : "Not ready") << ", generation " << report.generation.value_or(0)
        << " (observed " << report.observed_generation.value_or(0) << ")";
  }
  out << "\n\n";

  std::vector<const Role*> shown;
  for (const auto& r : report.roles)
    if (!r.unused()) shown.push_back(&r);  // kv-pool / kv-conductor when off everywhere would only add noise
  std::vector<std::vector<std::string>> table{
      {"ROLE", "BASELINE", "SPEC", "OBSERVED", "READY INSTANCES", "PODS READY", "RESTARTS", "REPLICAS SET BY"}};
  for (const Role* role : shown) {
    table.push_back({role->name, count_or_dash(role->baseline_instances), count_or_dash(role->spec_instances),
                     count_or_dash(role->observed_instances),
                     std::to_string(role->ready_instances) + "/" +
                         (role->spec_instances ? count_or_dash(role->wanted_instances) : std::string("0")),
                     ready_of(role->ready_pods, role->desired_pods, role->terminating_pods),
                     std::to_string(role->restarts), role->hpa_owned ? "HPA" : "spec"});
  }
  out << columns(table);

  // The tree: InferServiceSet -> InferService -> role -> instance -> pods, pod cells aligned as a table.
  if (report.found) {
    std::vector<std::vector<std::string>> tree;
    std::vector<std::string> header{"", "READY", "STATUS", "RESTARTS", "AGE"};
    if (wide) {
      header.push_back("NODE");
      header.push_back("NPUS");
    }
    tree.push_back(header);
    // multi_deployment: roles hang directly under the deployment, as under one pseudo InferService named "".
    tree.push_back({(multi ? "deployments/" : "inferserviceset/") + report.name});
    std::vector<InferService> services = report.infer_services;
    if (multi) services = {InferService{"", 0, report.ready, {}}};
    for (std::size_t s = 0; s < services.size(); ++s) {
      const InferService& svc = services[s];
      const bool last_svc = s + 1 == services.size();
      if (!multi)
        tree.push_back({std::string(last_svc ? "└── " : "├── ") + "inferservice/" + svc.name,
                        svc.ready ? "Ready" : "NotReady"});
      const std::string p1 = multi ? "" : last_svc ? "    " : "│   ";
      for (std::size_t ri = 0; ri < shown.size(); ++ri) {
        const Role& role = *shown[ri];
        const bool last_role = ri + 1 == shown.size();
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
        tree.push_back({p1 + (last_role ? "└── " : "├── ") + label,
                        std::to_string(healthy) + "/" + std::to_string(wanted) + " instances"});
        const std::string p2 = p1 + (last_role ? "    " : "│   ");
        for (std::size_t ii = 0; ii < insts.size(); ++ii) {
          const Instance& inst = *insts[ii];
          const bool last_inst = ii + 1 == insts.size();
          std::string inst_label = "instance " + std::to_string(inst.index);
          if (inst.deployment) inst_label += " (deployment/" + *inst.deployment + ")";
          const bool rebuilding = inst.rebuild && inst.rebuild->ongoing;
          tree.push_back({p2 + (last_inst ? "└── " : "├── ") + inst_label,
                          ready_of(inst.ready_pods, role.pods_per_instance, inst.terminating_pods) + " pods",
                          inst.healthy ? "" : rebuilding ? "Rebuilding" : inst.pods.empty() ? "NoPods" : "Unhealthy"});
          const std::string p3 = p2 + (last_inst ? "    " : "│   ");
          for (std::size_t pi = 0; pi < inst.pods.size(); ++pi) {
            const kube::PodState& pod = inst.pods[pi].state;
            std::vector<std::string> row{
                p3 + (pi + 1 == inst.pods.size() ? "└── " : "├── ") + pod.name,
                std::to_string(pod.ready_containers) + "/" + std::to_string(pod.containers), pod.status,
                std::to_string(pod.restarts),
                pod.age_seconds ? util::human_duration(*pod.age_seconds) : "<unknown>"};
            if (wide) {
              row.push_back(pod.node.empty() ? "<none>" : pod.node);
              row.push_back(std::to_string(inst.pods[pi].npus));
            }
            tree.push_back(std::move(row));
          }
        }
      }
    }
    out << '\n' << columns(tree);
  }
  if (!report.services.empty()) {
    std::vector<std::vector<std::string>> services{{"SERVICE", "TYPE", "CLUSTER-IP", "PORT(S)"}};
    for (const auto& svc : report.services) {
      std::string ports;  // kubectl get service's column: port[:nodePort]/protocol, comma-separated
      for (const auto& p : svc.ports) {
        const auto& o = p.as_object();
        if (!ports.empty()) ports += ",";
        ports += std::to_string(o.at("port").to_number<std::int64_t>());
        if (const auto* n = o.if_contains("nodePort")) ports += ":" + std::to_string(n->to_number<std::int64_t>());
        ports += "/" + std::string(o.at("protocol").as_string());
      }
      services.push_back({svc.name, svc.type, svc.cluster_ip.empty() ? "<none>" : svc.cluster_ip,
                          ports.empty() ? "<none>" : ports});
    }
    out << '\n' << columns(services);
  }

  out << '\n';
  for (const auto& w : report.warnings) out << "warning: " << w << '\n';
  if (report.drift.empty()) out << "live state matches the baseline\n";
  for (const auto& d : report.drift) out << "drift: " << d << '\n';
  for (const auto& c : report.converging) out << "converging: " << c << '\n';
  if (report.unready.empty() && report.found) out << "every desired pod exists and is ready\n";
  for (const auto& u : report.unready) out << "not ready: " << u << '\n';
  return out.str();
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
  return lines;
}

}  // namespace mindie::status
