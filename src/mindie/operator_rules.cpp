#include "mindie/operator_rules.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "util/json_path.h"
#include "mindcluster/labels.h"

namespace mindie::operator_rules {
namespace json = boost::json;

namespace {

using util::find;
using util::str;

const json::array& roles_of(const json::object& iss) {
  static const json::array none;
  const auto* spec = iss.if_contains("spec");
  const json::value* roles = find(spec, {"template", "roles"});
  return roles && roles->is_array() ? roles->as_array() : none;
}

std::string iss_name(const json::object& iss) {
  const auto* md = iss.if_contains("metadata");
  return str(find(md, {"name"}));
}

// The annotation the operator copies from the pod template onto a new InstanceSet (rules B3).
std::string template_schedule_policy(const json::value& role) {
  return str(find(&role, {"spec", "template", "metadata", "annotations", mindcluster::kSchedulePolicyAnnotation}));
}

}  // namespace

std::vector<std::string> gang_roles(const json::object& iss) {
  std::vector<std::string> out;
  for (const auto& r : roles_of(iss))
    if (str(find(&r, {"metadata", "labels", render::kGangScheduleLabel})) == "true") out.push_back(str(find(&r, {"name"})));
  return out;
}

std::vector<NodePortConflict> node_port_conflicts(const std::vector<render::NodePortClaim>& claims,
                                                  const json::array& services) {
  std::vector<NodePortConflict> out;
  for (const auto& claim : claims) {
    for (const auto& s : services) {
      const std::string ns = str(find(&s, {"metadata", "namespace"})), name = str(find(&s, {"metadata", "name"}));
      if (ns == claim.ns && name == claim.service) continue;
      const auto* ports = find(&s, {"spec", "ports"});
      if (!ports || !ports->is_array()) continue;
      bool holds = false;
      for (const auto& p : ports->as_array())
        if (util::num(find(&p, {"nodePort"})) == claim.port) holds = true;
      if (holds) {
        out.push_back({claim, ns, name});
        break;
      }
    }
  }
  return out;
}

std::vector<FixedAtCreation> fixed_at_creation_changes(const json::object& iss, const json::array& instance_sets) {
  std::vector<FixedAtCreation> out;
  const std::string service = iss_name(iss) + "-0";
  for (const auto& role : roles_of(iss)) {
    const std::string name = str(find(&role, {"name"}));
    const std::string ist_name = service + "-" + name;
    const json::value* live = nullptr;
    for (const auto& s : instance_sets)
      if (str(find(&s, {"metadata", "name"})) == ist_name) live = &s;
    if (!live) continue;
    std::string live_gang = str(find(live, {"metadata", "labels", render::kGangScheduleLabel}));
    std::string wanted_gang = str(find(&role, {"metadata", "labels", render::kGangScheduleLabel}));
    if (live_gang.empty()) live_gang = "false";
    if (wanted_gang.empty()) wanted_gang = "false";
    if (live_gang != wanted_gang)
      out.push_back({name, ist_name, std::string("gang scheduling (label ") + render::kGangScheduleLabel + ")",
                     live_gang, wanted_gang});
    // Only when the live InstanceSet has one: an operator that did not copy it (or a role's own annotation) is
    // not ours to judge.
    const auto* live_policy = find(live, {"metadata", "annotations", mindcluster::kSchedulePolicyAnnotation});
    if (live_policy && live_policy->is_string() && live_policy->as_string() != template_schedule_policy(role))
      out.push_back({name, ist_name,
                     std::string("the Volcano schedule policy (annotation ") + mindcluster::kSchedulePolicyAnnotation +
                         ", from hardware_type)",
                     std::string(live_policy->as_string()), template_schedule_policy(role)});
  }
  return out;
}

std::string workload_template_hash(const json::value& workload) {
  return str(find(&workload, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}));
}

std::string workload_ref(const json::value& workload) {
  std::string kind = str(find(&workload, {"kind"}));
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
  return (kind.empty() ? "workload" : kind) + "/" + str(find(&workload, {"metadata", "name"}));
}

std::map<std::string, std::vector<std::string>> instances_on_other_templates(const json::object& iss,
                                                                            const json::array& workloads) {
  std::map<std::string, std::vector<std::string>> out;
  const std::string service = iss_name(iss) + "-0";
  for (const auto& role : roles_of(iss)) {
    const std::string name = str(find(&role, {"name"}));
    const std::string hash = str(find(&role, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}));
    const std::int64_t kept = util::num(find(&role, {"replicas"}));
    for (const auto& w : workloads) {
      const auto* labels = find(&w, {"metadata", "labels"});
      if (str(find(labels, {"infer.huawei.com/instanceset-name"})) != name ||
          str(find(labels, {"infer.huawei.com/inferservice-name"})) != service)
        continue;
      const std::string index = str(find(labels, {"infer.huawei.com/instanceset-index"}));
      if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(index) >= kept)
        continue;  // an instance this deploy removes
      if (workload_template_hash(w) != hash) out[name].push_back(workload_ref(w));
    }
  }
  return out;
}

std::optional<int> own_node_port(const render::NodePortClaim& claim, const json::array& services) {
  for (const auto& s : services) {
    if (str(find(&s, {"metadata", "namespace"})) != claim.ns || str(find(&s, {"metadata", "name"})) != claim.service)
      continue;
    if (const auto* ports = find(&s, {"spec", "ports"}); ports && ports->is_array())
      for (const auto& p : ports->as_array())
        if (const auto n = util::num(find(&p, {"nodePort"}))) return static_cast<int>(n);
  }
  return std::nullopt;
}

std::string pod_group_prefix(const std::string& iss, int service, const std::string& role) {
  return "pg-" + iss + "-" + std::to_string(service) + "-" + role + "-";
}


}  // namespace mindie::operator_rules
