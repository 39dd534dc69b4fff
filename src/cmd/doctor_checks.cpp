#include "cmd/doctor_checks.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "aibrix/storm_render.h"
#include "cmd/common.h"
#include "cmd/deploy_checks.h"
#include "cmd/npu_preflight.h"
#include "hardware/profile.h"
#include "mindie/node_fit.h"
#include "mindie/operator_rules.h"
#include "util/json_path.h"
#include "util/strings.h"

namespace mindie::cmd::doctor {

namespace json = boost::json;

namespace {

/// A Deployment named `name`, in `ns` where the published manifest puts it, else in any namespace.
std::optional<json::object> find_deployment(kube::Client& client, const std::string& ns, const std::string& name) {
  if (auto d = client.get_if_exists(kube::gvr::kDeployments, ns, name)) return d;
  const json::object list = client.list(kube::gvr::kDeployments, "", "", 10, "metadata.name=" + name);
  const json::array& items = list.at("items").as_array();
  if (items.empty()) return std::nullopt;
  return items.front().as_object();
}

Check controller(kube::Client& client, const std::string& check, const std::string& ns, const std::string& name,
                 const std::string& needed_for) {
  const auto d = find_deployment(client, ns, name);
  if (!d) {
    return {check, State::Warning, "deployment/" + name + " not found (looked in " + ns + ", then everywhere by name)",
            "install it (" + needed_for + "), or ignore this if it runs under another name"};
  }
  const json::value dv = *d;
  const std::string where = "deployment/" + name + " in namespace " +
                            util::str(util::find(&dv, {"metadata", "namespace"}));
  const std::int64_t ready = util::num(util::find(&dv, {"status", "readyReplicas"}));
  std::string image;
  if (const json::value* c = util::find(&dv, {"spec", "template", "spec", "containers"});
      c && c->is_array() && !c->get_array().empty())
    image = util::str(util::find(&c->get_array()[0], {"image"}));
  const std::string running = where + (image.empty() ? "" : " (image " + image + ")");
  if (ready < 1)
    return {check, State::Failed, running + " has no ready pod",
            "kubectl describe deployment/" + name + " -n " + util::str(util::find(&dv, {"metadata", "namespace"}))};
  return {check, State::Ok, running + ": " + std::to_string(ready) + " ready", ""};
}

}  // namespace

const char* to_string(State s) {
  switch (s) {
    case State::Ok: return "ok";
    case State::Warning: return "warning";
    case State::Failed: break;
  }
  return "failed";
}

Check server(kube::Client& client) {
  const json::value v = client.server_version();
  return {"server", State::Ok, "reachable, Kubernetes " + util::str(util::find(&v, {"gitVersion"})), ""};
}

std::vector<Check> apis(kube::Client& client, const Target& target) {
  const bool service_set = !target.config || target.config->deploy_mode == config::DeployMode::InferServiceSet;
  bool gang = false;
  if (target.config && service_set && target.objects && !target.objects->empty())
    gang = !operator_rules::gang_roles(target.objects->back()).empty();
  struct Api {
    std::string check, group, version;
    std::vector<std::string> resources;
    State missing;
    std::string fix;
  };
  const std::vector<Api> wanted = {
      {"api/infer-operator",
       "mindcluster.huawei.com",
       "v1",
       {"inferservicesets", "instancesets", "inferservices"},
       target.config && service_set ? State::Failed : State::Warning,
       "install MindCluster infer-operator and its CRDs (deploy_mode infer_service_set needs them)"},
      {"api/volcano",
       kube::gvr::kPodGroups.group,
       kube::gvr::kPodGroups.version,
       {"podgroups"},
       gang ? State::Failed : State::Warning,
       "install Volcano, then restart infer-operator (gang-scheduled roles, more than one pod per instance, need "
       "its PodGroups)"},
      {"api/aibrix",
       aibrix::kGroup,
       aibrix::kVersion,
       {"stormservices"},
       State::Warning,
       "install AIBrix if you deploy with --framework aibrix"},
  };
  std::vector<Check> out;
  for (const auto& api : wanted) {
    const auto served = client.served_resources(api.group, api.version);
    std::vector<std::string> missing;
    for (const auto& r : api.resources)
      if (!served || std::find(served->begin(), served->end(), r) == served->end()) missing.push_back(r);
    const std::string gv = api.group + "/" + api.version;
    if (missing.empty()) out.push_back({api.check, State::Ok, gv + " serves " + util::join(api.resources, ", "), ""});
    else out.push_back({api.check, api.missing, gv + " does not serve " + util::join(missing, ", "), api.fix});
  }
  return out;
}

std::vector<Check> controllers(kube::Client& client) {
  // Where the published manifests put them: infer-operator's deploy YAML (Ascend/mind-cluster
  // component/infer-operator build/) and Volcano's installer (volcano-sh/volcano installer/volcano-development.yaml).
  return {controller(client, "controller/infer-operator", "mindx-dl", "infer-operator-manager",
                     "MindCluster infer-operator runs infer_service_set deployments"),
          controller(client, "controller/volcano-scheduler", "volcano-system", "volcano-scheduler",
                     "Volcano schedules gang-scheduled roles")};
}

std::optional<Check> namespace_exists(kube::Client& client, const Target& target) {
  if (target.ns.empty()) return std::nullopt;
  if (client.get_if_exists(kube::gvr::kNamespaces, "", target.ns))
    return Check{"namespace", State::Ok, "namespace " + target.ns + " exists", ""};
  return Check{"namespace", State::Failed, "namespace " + target.ns + " does not exist (deploy never creates it)",
               "kubectl create namespace " + target.ns};
}

std::vector<Check> nodes(kube::Client& client, const Target& target) {
  const NodeUsage usage = read_node_usage(client);
  const std::vector<node_fit::NodeSupply> supplies = usage.supplies("");
  // Profiles sharing labels and resource (800I_A3 and 900_A3_SuperPoD) are one pool.
  std::map<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>, std::vector<std::string>> pools;
  for (const auto& p : hardware::hardware_profiles()) pools[{p.node_selector, p.npu_resource}].push_back(p.name);
  std::vector<Check> out;
  for (const auto& [key, names] : pools) {
    const auto& [selector, resource] = key;
    int count = 0;
    long long allocatable = 0, used = 0;
    for (const auto& n : supplies) {
      const bool match = std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
        const auto it = n.labels.find(kv.first);
        return it != n.labels.end() && it->second == kv.second;
      });
      if (!match || n.unschedulable) continue;
      ++count;
      const auto a = n.allocatable.find(resource);
      const long long have = a == n.allocatable.end() ? 0 : a->second;
      const auto u = n.used.find(resource);
      allocatable += have;
      used += std::min(have, u == n.used.end() ? 0 : u->second);
    }
    if (count == 0) continue;
    out.push_back({"nodes/" + util::join(names, ","), State::Ok,
                   std::to_string(count) + " schedulable node" + (count == 1 ? "" : "s") + ", " +
                       std::to_string(allocatable) + " " + resource + " allocatable, " +
                       std::to_string(allocatable - used) + " free",
                   ""});
  }
  if (out.empty())
    out.push_back({"nodes", State::Warning, "no schedulable node carries a hardware profile's labels",
                   "label the NPU nodes (accelerator, accelerator-type) as the Ascend device plugin does"});
  if (target.config && target.objects) {
    // As deploy's preflight counts: the namespace's own pods are replaced, what they hold is free.
    const auto short_roles = node_fit::pack(node_fit::npu_demands(*target.objects, npu_resources()),
                                            usage.supplies(target.ns));
    std::vector<std::string> lines;
    for (const auto& s : short_roles) lines.push_back(s.message());
    if (lines.empty()) out.push_back({"fit", State::Ok, "the config's engine pods fit the free NPUs", ""});
    else
      out.push_back({"fit", State::Failed, util::join(lines, "; "),
                     "lower the instance or pod counts, or free or add or label nodes"});
  }
  return out;
}

std::optional<Check> node_ports(kube::Client& client, const Target& target) {
  if (!target.config || !target.render_options) return std::nullopt;
  std::ostringstream warnings;
  Printer quiet(warnings, warnings, "");
  try {
    const auto claims = check_node_ports(client, quiet, *target.config, *target.render_options);
    if (!warnings.str().empty()) return Check{"nodeports", State::Warning, warnings.str(), ""};
    std::vector<std::string> ports;
    for (const auto& c : claims) ports.push_back(std::to_string(c.port));
    return Check{"nodeports", State::Ok,
                 ports.empty() ? "no fixed nodePort" : "nodePorts " + util::join(ports, ", ") + " free", ""};
  } catch (const CommandError& e) {
    return Check{"nodeports", State::Failed, e.what(), "set the config's nodePort keys to ports no Service holds"};
  }
}

}  // namespace mindie::cmd::doctor
