#include "mindie/operator_rules.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <span>

#include "mindcluster/labels.h"
#include "util/json_path.h"
#include "util/strings.h"

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

// The annotation the operator copies from the pod template onto a new InstanceSet (inferservice_controller.go
// newInstanceSet).
std::string template_schedule_policy(const json::value& role) {
  return str(find(&role, {"spec", "template", "metadata", "annotations", mindcluster::kSchedulePolicyAnnotation}));
}

}  // namespace

std::vector<std::string> gang_roles(const json::object& iss) {
  std::vector<std::string> out;
  for (const auto& r : roles_of(iss))
    if (str(find(&r, {"metadata", "labels", render::kGangScheduleLabel})) == "true")
      out.push_back(str(find(&r, {"name"})));
  return out;
}

bool is_gang_role(const json::object& iss, const std::string& role) {
  const auto gang = gang_roles(iss);
  return std::find(gang.begin(), gang.end(), role) != gang.end();
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
    const std::string hash =
        str(find(&role, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}));
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

std::set<int> held_node_ports(const json::array& services) {
  std::set<int> out;
  for (const auto& s : services)
    if (const auto* ports = find(&s, {"spec", "ports"}); ports && ports->is_array())
      for (const auto& p : ports->as_array())
        if (const auto n = util::num(find(&p, {"nodePort"}))) out.insert(static_cast<int>(n));
  return out;
}

std::vector<int> free_node_ports(const std::vector<render::NodePortClaim>& wanted, std::set<int> taken) {
  std::vector<int> out;
  constexpr int kSize = kNodePortMax - kNodePortMin + 1;
  for (const auto& claim : wanted) {
    int found = 0;
    for (int i = 1; i <= kSize && found == 0; ++i) {
      const int port = kNodePortMin + ((claim.port - kNodePortMin + i) % kSize + kSize) % kSize;
      if (!taken.count(port)) found = port;
    }
    if (found != 0) taken.insert(found);
    out.push_back(found);
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
  return workload_pod_group(iss + "-" + std::to_string(service) + "-" + role + "-");
}

std::string workload_pod_group(const std::string& workload_name) { return "pg-" + workload_name; }

std::map<int, std::string> removed_gang_instances(const json::value& instance_set) {
  std::map<int, std::string> out;
  const std::string text = str(find(&instance_set, {"metadata", "annotations", kRemovedGangInstancesAnnotation}));
  if (text.empty()) return out;
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return out;
  for (const auto& [key, when] : v.as_object()) {
    const std::string k(key);
    if (k.empty() || k.size() > 4 || !std::all_of(k.begin(), k.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    out[std::stoi(k)] = when.is_string() ? std::string(when.as_string()) : std::string();
  }
  return out;
}

std::string removed_gang_instances_value(std::map<int, std::string> recorded, int after, int before,
                                         const std::string& when) {
  for (int k = after; k < before; ++k) recorded.try_emplace(k, when);  // the first removal is when its record began
  json::object o;
  for (const auto& [k, t] : recorded) o[std::to_string(k)] = t;
  return json::serialize(o);
}

std::string recreate_advice(const std::string& ns, const std::string& role, bool gang,
                            const std::vector<std::string>& workloads) {
  std::string names;
  for (const auto& w : workloads) names += " " + w;
  if (!gang)
    return "replace it with kubectl mindie rollout restart -n " + ns + " --role " + role +
           ", which deletes each such workload for the operator to make again from the current one, one at a time "
           "while the role keeps serving (a temporary instance first where it runs one)";
  std::int64_t lowest = -1;
  for (const auto& w : workloads) {
    const auto dash = w.find_last_of('-');
    const std::string digits = dash == std::string::npos ? "" : w.substr(dash + 1);
    if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    const std::int64_t k = std::stoll(digits);
    lowest = lowest < 0 ? k : std::min(lowest, k);
  }
  return "do not delete a gang instance's workload: infer-operator would rebuild it in a loop (its rescheduler "
         "records a fault for every deleted pod of the instance and deletes the new workload for it); instead "
         "kubectl mindie rollout restart -n " +
         ns + " --role " + role +
         " --stop-operator, which stops infer-operator (in every namespace) while each such instance's pods go; or " +
         gang_ways_out(ns, role, std::max<std::int64_t>(lowest, 0));
}

std::string gang_ways_out(const std::string& ns, const std::string& role, std::int64_t lowest) {
  const std::string restart =
      "restart infer-operator, the only thing that clears its fault records (kubectl rollout "
      "restart deployment/" +
      std::string(kOperatorDeployment) + " -n " + kOperatorNamespace + ")";
  std::string out;
  if (lowest > 0)
    out = "scale role " + role + " below instance " + std::to_string(lowest) + " (kubectl mindie scale -n " + ns + " " +
          scale_flag(role) + " " + std::to_string(lowest) + "), then, once those pods are gone, " + restart +
          ", and scale out again with --operator-restarted; or ";
  return out + "kubectl mindie delete -n " + ns + " --wait, then " + restart + ", and deploy again";
}

std::string scale_flag(const std::string& role) { return role == "union" ? "--hybrid" : "--" + role; }

std::string gang_scale_out_refusal(const GangScaleOut& s) {
  if (s.to <= s.from) return "";
  const std::string head = "scaling role " + s.role + " out to " + std::to_string(s.to) +
                           " instances would start "
                           "infer-operator's rebuild loop: ";
  const std::string why =
      "infer-operator records a fault for the workload of every deleted pod of a gang-scheduled "
      "instance and keeps it in memory until it restarts, and a new instance of that name would "
      "be deleted and made again each time the pods of the one before it are gone, without end "
      "(its rescheduler: Ascend/mind-cluster component/infer-operator/pkg/controller/"
      "rescheduling/rescheduling.go)";
  const std::string restart = "restart infer-operator (kubectl rollout restart deployment/" +
                              std::string(kOperatorDeployment) + " -n " + kOperatorNamespace +
                              " where its published manifest installs it; else find it with kubectl get deployments "
                              "-A -l app=infer-controller-manager), then: kubectl mindie scale -n " +
                              s.ns + " " + scale_flag(s.role) + " " + std::to_string(s.to) + " --operator-restarted";
  std::vector<std::string> going;
  // Any removed instance's pod still going records a fault when it is gone, after a restart too.
  for (const auto& [pod, k] : s.leftover_pods)
    if (k >= s.from) going.push_back(pod);
  if (!going.empty()) {
    std::string names = util::join(std::span(going).first(std::min<std::size_t>(going.size(), 4)), ", ");
    if (going.size() > 4) names += ", ...";
    return head + std::to_string(going.size()) + " pod(s) of removed instances are still going (" + names + "); " +
           why + ". Wait until they are gone (kubectl get pods -n " + s.ns +
           " -l infer.huawei.com/instanceset-name=" + s.role + "), " + restart + "; nothing was changed";
  }
  if (s.operator_restarted) return "";
  std::string removed;
  for (const auto& [k, when] : s.removed)
    if (k >= s.from && k < s.to)
      removed += std::string(removed.empty() ? "" : ", ") + s.workload_prefix + std::to_string(k) +
                 (when.empty() ? "" : " (removed " + when + ")");
  if (removed.empty()) return "";
  return head + "kubectl-mindie removed the instance(s) " + removed + " by an earlier scale, and " + why + ". " +
         "Since all their pods are gone, " + restart + "; nothing was changed";
}

}  // namespace mindie::operator_rules
