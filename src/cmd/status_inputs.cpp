#include "cmd/status_inputs.h"

#include <algorithm>
#include <optional>

#include "cmd/common.h"
#include "cmd/list_inputs.h"
#include "cmd/multi_deployment.h"
#include "mindie/baseline.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// The events StatusInputs::workload_events holds: the Normal events of apps/v1 objects (StatefulSet, Deployment,
/// ReplicaSet), whose involvedObject.uid tells each incarnation of a workload apart.
constexpr const char* kWorkloadEventsSelector = "involvedObject.apiVersion=apps/v1,type=Normal";

/// The Services of namespace `ns` matching `selector` into `in`; a 403 is recorded as services_unknown.
void read_services(kube::Client& client, const std::string& ns, const std::string& selector, status::StatusInputs& in) {
  try {
    json::object list = client.list(kube::gvr::kServices, ns, selector);
    in.services = std::move(list["items"].as_array());
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    in.services_unknown = "cannot list services in namespace " + ns + " (" + e.status_message() + ")";
  }
}

/// The items of a LIST answer, moved out of its arena.
json::array items(json::object list) { return std::move(list["items"].as_array()); }

/// The pods of `selector` in `ns`, only what the report reads of each (status::slim_pod), page by page: pods are most
/// of the bytes (env, volumes, probes).
json::array read_slim_pods(kube::Client& client, const std::string& ns, const std::string& selector) {
  json::array pods;
  client.list_each(kube::gvr::kPods, ns, selector, 500, "",
                   [&](json::object& pod) { pods.push_back(status::slim_pod(pod)); });
  return pods;
}

/// multi_deployment: the Deployments, pods and Services by the labels kubectl-mindie put on them, one LIST each;
/// warning events only when a pod is not ready.
status::StatusInputs read_multi_inputs(kube::Client& client, const std::string& ns, const std::string& name,
                                       json::object cm) {
  const std::string selector = multi_selector(name);
  status::StatusInputs in{std::move(cm), std::nullopt, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  in.deployments = items(client.list(kube::gvr::kDeployments, ns, selector));
  in.pods = read_slim_pods(client, ns, selector);
  const bool trouble = std::any_of(in.pods.begin(), in.pods.end(),
                                   [](const json::value& p) { return !status::pod_ready(p); });
  if (trouble) in.events = items(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning"));
  read_services(client, ns, selector, in);
  return in;
}

/// The instances' workloads (StatefulSets and Deployments of `selector`, slimmed), which say which template each
/// instance runs; a 403 leaves them empty and says why in `unknown`, so the user still gets the rest of the report.
json::array read_workloads(kube::Client& client, const std::string& ns, const std::string& selector,
                           std::string& unknown) {
  json::array workloads;
  for (const kube::GVR* r : {&kube::gvr::kStatefulSets, &kube::gvr::kDeployments}) {
    try {
      // Only what the report reads of each (pod templates are large): page by page, as the pods.
      client.list_each(*r, ns, selector, 500, "",
                       [&](json::object& w) { workloads.push_back(status::slim_workload(w, r->kind)); });
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      unknown = "cannot list " + r->resource + " in namespace " + ns + " (" + e.status_message() +
                "): which pod template each instance runs is unknown";
      workloads.clear();
      break;
    }
  }
  return workloads;
}

/// The workload events (kWorkloadEventsSelector) when set `iss` has a gang role: a gang role's instance may be
/// rebuilt by the operator again and again (status_report.h, Rebuild), and the controllers' events tell each
/// incarnation of its workload apart. A 403 leaves them empty and says why in `unknown`.
json::array read_workload_events(kube::Client& client, const std::string& ns, const json::object& iss,
                                 const json::array& sets, std::string& unknown) {
  const bool gang = !operator_rules::gang_roles(iss).empty() ||
                    std::any_of(sets.begin(), sets.end(), [](const json::value& s) {
                      return util::str(util::find(&s, {"metadata", "labels", render::kGangScheduleLabel})) == "true";
                    });
  if (!gang) return {};
  try {
    return items(client.list(kube::gvr::kEvents, ns, "", 500, kWorkloadEventsSelector));
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    unknown = "cannot list events in namespace " + ns + " (" + e.status_message() +
              "): whether infer-operator is rebuilding a gang instance is not judged";
    return {};
  }
}

/// infer_service_set: the InferServices, InstanceSets, workloads, pods and Services of InferServiceSet `iss`, one
/// LIST each; warning events only on trouble, workload events only for gang roles.
status::StatusInputs read_service_set_inputs(kube::Client& client, const std::string& ns, const std::string& name,
                                             json::object cm, std::optional<json::object> iss) {
  // Lists arrive in their own arenas (Client::list); the arrays are move-constructed into StatusInputs, never
  // assigned, because assigning between different memory resources would copy every pod.
  const std::string selector = status::service_selector(name, status::service_count(iss));
  json::array services =
      items(client.list(kube::gvr::kInferServices, ns, "infer.huawei.com/inferserviceset-name=" + name));
  json::array sets = items(client.list(kube::gvr::kInstanceSets, ns, selector));
  std::string workloads_unknown;
  json::array workloads = read_workloads(client, ns, selector, workloads_unknown);
  json::array pods = read_slim_pods(client, ns, selector);
  // Events only explain trouble: skip the request when every pod the set asks for exists and is ready.
  const bool trouble = static_cast<std::int64_t>(pods.size()) < status::desired_pods(*iss) ||
                       std::any_of(pods.begin(), pods.end(),
                                   [](const json::value& p) { return !status::pod_ready(p); });
  json::array events = trouble ? items(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning")) : json::array();
  std::string events_unknown;
  json::array workload_events = read_workload_events(client, ns, *iss, sets, events_unknown);
  status::StatusInputs in{std::move(cm),
                          std::move(iss),
                          std::move(services),
                          std::move(sets),
                          std::move(pods),
                          std::move(events),
                          {},
                          std::move(workloads),
                          std::move(workloads_unknown),
                          {},
                          {},
                          std::move(workload_events),
                          {},
                          {}};
  in.workload_events_unknown = std::move(events_unknown);
  // The operator's role Services carry the InstanceSet's labels, so the pods' selector finds them
  // (Ascend/mind-cluster infer-operator, instanceset_controller.go checkOrCreateService).
  read_services(client, ns, selector, in);
  return in;
}

}  // namespace

status::StatusInputs read_status_inputs(kube::Client& client, const std::string& ns) {
  json::object cm = motor_config_or_fail(client, ns);
  const baseline::Baseline stored = baseline::read_baseline(cm, ns);
  const std::string name = stored.workload_name();
  if (baseline::runs_deployments(stored.deploy_mode_if_known()))
    return read_multi_inputs(client, ns, name, std::move(cm));
  auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, name);
  if (!iss) {
    status::StatusInputs none;  // the baseline alone: status says the InferServiceSet is missing
    none.config_map = std::move(cm);
    return none;
  }
  return read_service_set_inputs(client, ns, name, std::move(cm), std::move(iss));
}

std::vector<kube::WatchTarget> status_watch_targets(const std::string& ns, const std::string& name,
                                                    std::int64_t services) {
  const std::string selector = status::service_selector(name, services);
  return {
      {kube::gvr::kConfigMaps, ns, "", std::string("metadata.name=") + baseline::kConfigMapName},
      {kube::gvr::kInferServiceSets, ns, "", "metadata.name=" + name},
      {kube::gvr::kInferServices, ns, "infer.huawei.com/inferserviceset-name=" + name, ""},
      {kube::gvr::kInstanceSets, ns, selector, ""},
      {kube::gvr::kPods, ns, selector, ""},
      {kube::gvr::kEvents, ns, "", "type=Warning"},
      {kube::gvr::kStatefulSets, ns, selector, ""},
      {kube::gvr::kDeployments, ns, selector, ""},
      {kube::gvr::kServices, ns, selector, ""},
      {kube::gvr::kEvents, ns, "", kWorkloadEventsSelector},
  };
}

std::vector<kube::WatchTarget> multi_status_watch_targets(const std::string& ns, const std::string& name) {
  const std::string selector = multi_selector(name);
  return {
      {kube::gvr::kConfigMaps, ns, "", std::string("metadata.name=") + baseline::kConfigMapName},
      {kube::gvr::kDeployments, ns, selector, ""},
      {kube::gvr::kPods, ns, selector, ""},
      {kube::gvr::kEvents, ns, "", "type=Warning"},
      {kube::gvr::kServices, ns, selector, ""},
  };
}

namespace {

/// Target `target` of `informer` as a JSON array.
json::array informer_array(const kube::Informer& informer, std::size_t target) {
  json::array out;
  for (auto& o : informer.objects(target)) out.emplace_back(std::move(o));
  return out;
}

/// motor-config from target 0 of a status informer; CommandError when it was deleted meanwhile.
json::object config_map_from_informer(const kube::Informer& informer) {
  auto cms = informer.objects(0);
  if (cms.empty()) {
    throw CommandError(std::string("configmap/") + baseline::kConfigMapName +
                       " was deleted: the deployment is gone (kubectl mindie delete or by hand)");
  }
  return std::move(cms.front());
}

}  // namespace

status::StatusInputs inputs_from_multi_informer(const kube::Informer& informer) {
  status::StatusInputs in;
  in.config_map = config_map_from_informer(informer);
  const auto array = [&](std::size_t target) { return informer_array(informer, target); };
  in.deployments = array(1);
  in.pods = array(2);
  in.events = array(3);
  in.services = array(4);
  return in;
}

status::StatusInputs inputs_from_informer(const kube::Informer& informer) {
  status::StatusInputs in;
  in.config_map = config_map_from_informer(informer);
  const auto array = [&](std::size_t target) { return informer_array(informer, target); };
  if (auto sets = informer.objects(1); !sets.empty()) in.service_set = std::move(sets.front());
  in.infer_services = array(2);
  in.instance_sets = array(3);
  in.pods = array(4);
  in.events = array(5);
  append_with_kind(in.workloads, array(6), kube::gvr::kStatefulSets.kind);
  append_with_kind(in.workloads, array(7), kube::gvr::kDeployments.kind);
  in.services = array(8);
  in.workload_events = array(9);
  return in;
}

}  // namespace mindie::cmd
