#include "cmd/list_inputs.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "aibrix/storm_render.h"
#include "cmd/aibrix.h"
#include "cmd/multi_deployment.h"
#include "mindie/baseline.h"
#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// The operator's labels: on InferServices the set's name, on InstanceSets, workloads and pods the InferService's
/// (Ascend/mind-cluster component/infer-operator; status_report.h, service_selector).
constexpr const char* kSetLabel = "infer.huawei.com/inferserviceset-name";
constexpr const char* kServiceLabel = "infer.huawei.com/inferservice-name";

std::string ours() { return std::string(render::kManagedByLabel) + "=" + render::kFieldManager; }

std::string ns_of(const json::value& o) { return util::str(util::find(&o, {"metadata", "namespace"})); }
std::string name_of(const json::value& o) { return util::str(util::find(&o, {"metadata", "name"})); }
std::string label_of(const json::value& o, const char* key) {
  return util::str(util::find(&o, {"metadata", "labels", key}));
}

/// `slim` (a slim form status keeps, without the namespace) with the namespace of `item`, which matches it to its
/// deployment.
json::object with_namespace(json::object slim, const json::value& item) {
  if (auto* md = slim.if_contains("metadata"); md && md->is_object()) md->as_object()["namespace"] = ns_of(item);
  return slim;
}

/// The items of one LIST of `r` over scope `ns` ("" = all namespaces) by `selector`, each kept as `keep` makes it;
/// none when the server does not serve `r` (its CRD is not installed), and none with a line in `warnings` when the
/// user may not list it in namespace `ns` (across namespaces a 403 propagates: read_listing falls back).
json::array read_kind(kube::Client& client, const kube::GVR& r, const std::string& ns, const std::string& selector,
                      std::vector<std::string>& warnings, json::object (*keep)(const json::object&) = nullptr) {
  json::array out;
  try {
    client.list_each(r, ns, selector, 500, "", [&](json::object& item) {
      if (!keep) return out.push_back(std::move(item));
      out.push_back(with_namespace(keep(item), item));
    });
  } catch (const kube::ApiError& e) {
    if (e.code() == 403 && !ns.empty()) {
      warnings.push_back("cannot list " + r.resource + " in namespace " + ns + " (" + e.status_message() +
                         "): what they hold is not counted");
    } else if (e.code() != 404) {
      throw;
    }
  }
  return out;
}

/// The items of `all` in namespace `ns` for which `match` holds.
template <typename Match>
json::array pick(const json::array& all, const std::string& ns, Match match) {
  json::array out;
  for (const auto& item : all)
    if (ns_of(item) == ns && match(item)) out.push_back(item);
  return out;
}

/// What one scope's lists hold, by kind.
struct ScopeItems {
  json::array config_maps, service_sets, infer_services, instance_sets, workloads, pods;  // infer_service_set
  json::array deployments, multi_pods;                                                    // multi_deployment
  json::array storms, storm_pods;
  std::vector<std::string> warnings;  ///< the kinds the user may not list in the namespace
};

/// The operator's instance workloads (StatefulSets and Deployments), slimmed as status keeps them.
void read_workloads(kube::Client& client, const std::string& ns, ScopeItems& s) {
  for (const kube::GVR* r : {&kube::gvr::kStatefulSets, &kube::gvr::kDeployments})
    for (auto& w : read_kind(client, *r, ns, kServiceLabel, s.warnings))
      s.workloads.push_back(with_namespace(status::slim_workload(w.as_object(), r->kind), w));
}

/// One LIST per kind over `ns` that the modes of the baselines found need.
ScopeItems read_scope(kube::Client& client, const std::string& ns) {
  ScopeItems s;
  client.list_each(kube::gvr::kConfigMaps, ns, ours(), 500, std::string("metadata.name=") + baseline::kConfigMapName,
                   [&](json::object& cm) { s.config_maps.push_back(std::move(cm)); });
  bool sets = false, multi = false;
  for (const auto& cm : s.config_maps) {
    const baseline::Baseline b = baseline::read_baseline(cm.as_object(), ns_of(cm));
    (baseline::runs_deployments(b.deploy_mode_if_known()) ? multi : sets) = true;
  }
  if (sets) {
    s.service_sets = read_kind(client, kube::gvr::kInferServiceSets, ns, "", s.warnings);
    s.infer_services = read_kind(client, kube::gvr::kInferServices, ns, kSetLabel, s.warnings);
    s.instance_sets = read_kind(client, kube::gvr::kInstanceSets, ns, kServiceLabel, s.warnings);
    read_workloads(client, ns, s);
    s.pods = read_kind(client, kube::gvr::kPods, ns, kServiceLabel, s.warnings, status::slim_pod);
  }
  if (multi) {
    s.deployments = read_kind(client, kube::gvr::kDeployments, ns, ours(), s.warnings);
    s.multi_pods = read_kind(client, kube::gvr::kPods, ns, ours(), s.warnings, status::slim_pod);
  }
  s.storms = read_kind(client, kStormServices, ns, "", s.warnings);
  if (!s.storms.empty())
    s.storm_pods = read_kind(client, kube::gvr::kPods, ns, aibrix::kStormServiceNameLabel, s.warnings);
  return s;
}

/// StatusInputs of the deployment whose motor-config is `cm`, from the scope's items; throws BaselineError when
/// nothing names its workload.
status::StatusInputs inputs_of(const json::object& cm, const ScopeItems& s) {
  const std::string ns = ns_of(cm);
  const baseline::Baseline b = baseline::read_baseline(cm, ns);
  const std::string name = b.workload_name();
  status::StatusInputs in;
  in.config_map = cm;
  if (baseline::runs_deployments(b.deploy_mode_if_known())) {
    const auto mine = [&](const json::value& o) { return label_of(o, render::kInstanceLabel) == name; };
    in.deployments = pick(s.deployments, ns, mine);
    in.pods = pick(s.multi_pods, ns, mine);
    return in;
  }
  for (const auto& set : s.service_sets)
    if (ns_of(set) == ns && name_of(set) == name) in.service_set = set.as_object();
  if (!in.service_set) return in;
  std::set<std::string> services;  // the InferServices status selects (status::service_selector)
  for (std::int64_t i = 0; i < status::service_count(in.service_set); ++i)
    services.insert(name + "-" + std::to_string(i));
  const auto of_set = [&](const json::value& o) { return services.count(label_of(o, kServiceLabel)) > 0; };
  in.infer_services = pick(s.infer_services, ns, [&](const json::value& o) { return label_of(o, kSetLabel) == name; });
  in.instance_sets = pick(s.instance_sets, ns, of_set);
  in.workloads = pick(s.workloads, ns, of_set);
  in.pods = pick(s.pods, ns, of_set);
  return in;
}

/// The StormService `storm`'s report from the scope's pods (events and Services are not read).
aibrix::StormStatus storm_report(const json::object& storm, const ScopeItems& s,
                                 std::chrono::system_clock::time_point now) {
  aibrix::StormStatusInputs in;
  in.storm_service = storm;
  const std::string app = name_of(storm);
  in.pods = pick(s.storm_pods, ns_of(storm),
                 [&](const json::value& p) { return label_of(p, aibrix::kStormServiceNameLabel) == app; });
  return aibrix::build_storm_status(ns_of(storm), in, now);
}

/// The listing of what read_scope read.
Listing listing_of(const ScopeItems& s) {
  Listing out;
  out.warnings = s.warnings;
  const auto now = std::chrono::system_clock::now();
  for (const auto& cm : s.config_maps) {
    const std::string ns = ns_of(cm);
    try {
      out.deployments.push_back({ns, util::str(util::find(&cm, {"metadata", "creationTimestamp"})),
                                 status::build_report(ns, inputs_of(cm.as_object(), s), now), std::nullopt});
    } catch (const baseline::BaselineError& e) {
      out.warnings.push_back("namespace " + ns + ": " + e.what());
    }
  }
  for (const auto& storm : s.storms)
    out.deployments.push_back({ns_of(storm), util::str(util::find(&storm, {"metadata", "creationTimestamp"})),
                               std::nullopt, storm_report(storm.as_object(), s, now)});
  std::stable_sort(out.deployments.begin(), out.deployments.end(),
                   [](const ListedDeployment& a, const ListedDeployment& b) { return a.ns < b.ns; });
  return out;
}

}  // namespace

Listing read_listing(kube::Client& client, const std::string& ns, const std::string& fallback) {
  if (!ns.empty()) return listing_of(read_scope(client, ns));
  try {
    return listing_of(read_scope(client, ""));
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    Listing out = listing_of(read_scope(client, fallback));
    out.warnings.insert(out.warnings.begin(), "you may not list all namespaces (" + e.status_message() +
                                                  "): only namespace " + fallback +
                                                  " is shown; pass -n NAMESPACE to look in another");
    return out;
  }
}

std::vector<std::string> deployment_namespaces(kube::Client& client) {
  std::set<std::string> found;
  try {
    const auto add = [&found](json::object& o) { found.insert(ns_of(o)); };
    client.list_each(kube::gvr::kConfigMaps, "", ours(), 500, std::string("metadata.name=") + baseline::kConfigMapName,
                     add);
    client.list_each(kStormServices, "", "", 500, "", add);
  } catch (const kube::ApiError& e) {
    if (e.code() != 403 && e.code() != 404) throw;
  }
  return {found.begin(), found.end()};
}

json::object motor_config_or_fail(kube::Client& client, const std::string& ns) {
  auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!cm)
    throw CommandError("no deployment found in namespace " + ns + " (configmap/" +
                       std::string(baseline::kConfigMapName) + " not found): run kubectl mindie deploy first" +
                       hint_suffix(did_you_mean(client, ns)));
  return std::move(*cm);
}

std::string did_you_mean(kube::Client& client, const std::string& ns) {
  std::vector<std::string> others;
  try {
    for (auto& n : deployment_namespaces(client))
      if (n != ns) others.push_back(std::move(n));
  } catch (const std::exception&) {
    return "";  // a hint only: the error it ends stays as it is
  }
  if (others.empty()) return "";
  std::string hint = "did you mean";
  for (std::size_t i = 0; i < others.size() && i < 3; ++i) hint += (i ? " or -n " : " -n ") + others[i];
  return hint + (others.size() > 3 ? " (list -A shows all " + std::to_string(others.size()) + ")?" : "?");
}

}  // namespace mindie::cmd
