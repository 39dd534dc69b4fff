#include "cmd/status.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "cmd/multi_deployment.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "kube/pod_state.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_status_flags(po::options_description& desc, StatusFlags& flags) {
  desc.add_options()("output,o", po::value(&flags.output), "Output format: wide, json or yaml (default: a tree)")(
      "watch,w", po::bool_switch(&flags.watch),
      "After showing the status, watch for changes (redrawn in place on a terminal, one line per change otherwise)");
}

StatusOptions::StatusOptions(StatusFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StatusOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  const auto& o = flags_.output;
  if (!o.empty() && o != "wide" && o != "json" && o != "yaml")
    throw UsageError("unable to match a printer suitable for the output format \"" + o +
                     "\", allowed formats are: json,wide,yaml");
}

void StatusOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

namespace {

using util::find;
using util::num;
using util::str;

const json::value* find(const json::object& obj, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  bool first = true;
  for (auto key : path) {
    if (first) {
      v = obj.if_contains(key);
      first = false;
    } else if (!v || !v->is_object()) {
      return nullptr;
    } else {
      v = v->as_object().if_contains(key);
    }
  }
  return v;
}

std::string condition_status(const json::value* status, std::string_view type) {
  if (const auto* conds = find(status, {"conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == type) return str(find(&c, {"status"}));
  }
  return "";
}

/// NPUs a pod asks for: the sum over its containers of every huawei.com/ resource (the Ascend device plugin's
/// resource names), from limits (extended resources must have requests = limits).
std::int64_t pod_npus(const json::value& pod) {
  std::int64_t n = 0;
  if (const auto* cs = find(&pod, {"spec", "containers"}); cs && cs->is_array()) {
    for (const auto& c : cs->as_array()) {
      const auto* limits = find(&c, {"resources", "limits"});
      if (!limits || !limits->is_object()) continue;
      for (const auto& [k, v] : limits->as_object()) {
        if (!k.starts_with("huawei.com/")) continue;
        if (v.is_string()) {
          try {
            n += std::stoll(std::string(v.as_string()));
          } catch (const std::exception&) {  // a quantity we cannot read counts as none
          }
        } else {
          n += num(&v);
        }
      }
    }
  }
  return n;
}

/// One pod as the report shows it (kube::read_pod_state) with the NPUs it asks for.
json::object pod_summary(const json::value& pod, std::int64_t now) {
  const kube::PodState p = kube::read_pod_state(pod, now);
  return {{"name", p.name},
          {"phase", p.phase},
          {"status", p.status},
          {"ready", p.ready},
          {"readyContainers", p.ready_containers},
          {"containers", p.containers},
          {"restarts", p.restarts},
          {"createdAt", p.created_at},
          {"ageSeconds", p.age_seconds ? json::value(*p.age_seconds) : json::value(nullptr)},
          {"node", p.node},
          {"npus", pod_npus(pod)},
          {"reason", p.reason},
          {"events", json::array()}};
}

/// Warning events about the object of `kind` named `name` (and, when `uid` is given, that uid), newest first, at
/// most `limit` (the latest say the most).
json::array warning_events(const json::array& events, std::string_view kind, const std::string& name,
                           std::size_t limit, const std::string& uid = "") {
  std::vector<std::pair<std::int64_t, const json::value*>> found;
  for (const auto& e : events) {
    if (str(find(&e, {"involvedObject", "kind"})) != kind || str(find(&e, {"involvedObject", "name"})) != name)
      continue;
    // An event about an earlier object of the same name (deleted and made again) says nothing about this one.
    if (const std::string about = str(find(&e, {"involvedObject", "uid"})); !uid.empty() && !about.empty() && about != uid)
      continue;
    if (str(find(&e, {"type"})) != "Warning") continue;
    std::string when = str(find(&e, {"lastTimestamp"}));
    if (when.empty()) when = str(find(&e, {"eventTime"}));
    if (when.empty()) when = str(find(&e, {"metadata", "creationTimestamp"}));
    found.emplace_back(util::parse_rfc3339(when).value_or(0), &e);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  json::array out;
  for (std::size_t i = 0; i < found.size() && i < limit; ++i) {
    const json::value& e = *found[i].second;
    out.push_back({{"reason", str(find(&e, {"reason"}))},
                   {"message", str(find(&e, {"message"}))},
                   // events.k8s.io writers (the default scheduler) count repeats in series.count.
                   {"count", num(find(&e, {"count"}), num(find(&e, {"series", "count"}), 1))},
                   {"lastSeen", found[i].first ? json::value(found[i].first) : json::value(nullptr)}});
  }
  return out;
}

/// A Warning event of infer-operator about `object` ("instanceset/X") in plain words, with its reason and message.
/// The reasons are the operator's (instanceset_controller.go; infer-operator-rules.md A1-A3).
std::string operator_event_text(const std::string& object, const json::value& event) {
  const std::string reason = str(find(&event, {"reason"}));
  std::string what;
  if (reason == "ValidateError")
    what = "infer-operator refuses " + object + " and creates nothing for it";
  else if (reason == "ServiceCreateError")
    what = "infer-operator could not create a Service of " + object + ", so it creates none of its workloads";
  else
    what = "infer-operator reports a problem with " + object;
  const std::int64_t count = num(find(&event, {"count"}), 1);
  return what + " (" + reason + (count > 1 ? ", " + std::to_string(count) + " times" : "") +
         "): " + str(find(&event, {"message"}));
}

/// "X-<i>" -> i when `value` is exactly the name of one of set `name`'s InferServices; else -1.
std::int64_t service_index(const std::string& value, const std::string& name) {
  if (value.size() <= name.size() + 1 || value.compare(0, name.size(), name) != 0 || value[name.size()] != '-')
    return -1;
  const std::string digits = value.substr(name.size() + 1);
  if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  if (digits.size() > 1 && digits[0] == '0') return -1;
  return std::stoll(digits);
}

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

/// The deploy mode motor-config records, "" when neither the annotation nor a usable baseline says it.
std::string mode_of(const baseline::Baseline& b) { return b.recorded_mode.empty() && !b.config ? "" : b.deploy_mode(); }

bool is_control_role(const std::string& role) { return role == "controller" || role == "coordinator"; }

/// The most instances of one role the report lists (kubectl-mindie deploys at most 16).
constexpr std::int64_t kMaxListedInstances = 1024;

}  // namespace

std::string service_selector(const std::string& name, std::int64_t services) {
  std::string selector = "infer.huawei.com/inferservice-name in (";
  for (std::int64_t i = 0; i < std::max<std::int64_t>(1, services); ++i)
    selector += (i ? "," : "") + name + "-" + std::to_string(i);
  return selector + ")";
}

std::int64_t service_count(const std::optional<json::object>& iss) {
  return iss ? std::max<std::int64_t>(1, num(find(*iss, {"spec", "replicas"}), 1)) : 1;
}

namespace {

/// The part of a pod build_status_report reads: name, labels, timestamps, node, container limits and the status.
json::object slim_pod(const json::object& pod) {
  json::object metadata;
  if (const auto* md = pod.if_contains("metadata"); md && md->is_object()) {
    for (const char* key : {"name", "labels", "creationTimestamp", "deletionTimestamp"})
      if (const auto* v = md->as_object().if_contains(key)) metadata[key] = *v;
  }
  json::object spec;
  if (const auto* node = find(pod, {"spec", "nodeName"})) spec["nodeName"] = *node;
  if (const auto* cs = find(pod, {"spec", "containers"}); cs && cs->is_array()) {
    json::array containers;
    for (const auto& c : cs->as_array()) {
      json::object slim;
      for (const char* key : {"name", "image"})
        if (const auto* v = find(&c, {key})) slim[key] = *v;
      if (const auto* limits = find(&c, {"resources", "limits"})) slim["resources"] = {{"limits", *limits}};
      containers.push_back(std::move(slim));
    }
    spec["containers"] = std::move(containers);
  }
  json::object out{{"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
  if (const auto* status = pod.if_contains("status")) out["status"] = *status;
  return out;
}

/// The part of a workload build_status_report reads: kind, name, labels, replicas and the template hash.
json::object slim_workload(const json::object& w, const std::string& kind) {
  json::object metadata;
  for (const char* key : {"name", "labels"})
    if (const auto* v = find(w, {"metadata", key})) metadata[key] = *v;
  json::object spec;
  if (const auto* v = find(w, {"spec", "replicas"})) spec["replicas"] = *v;
  if (const auto* h = find(w, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}))
    spec["template"] = {{"metadata", {{"annotations", {{render::kTemplateHashAnnotation, *h}}}}}};
  return {{"kind", kind}, {"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
}

/// Pods InferServiceSet `iss` asks for: InferServices × the roles' instances × pods per instance (HPA-owned roles
/// count their role.replicas; the operator's events are read when fewer exist).
std::int64_t desired_pods(const json::object& iss) {
  std::int64_t per_service = 0;
  if (const auto* roles = find(iss, {"spec", "template", "roles"}); roles && roles->is_array())
    for (const auto& r : roles->as_array())
      // Clamped: a hand-edited count must not overflow (only a comparison with the pods listed needs it).
      per_service += std::clamp<std::int64_t>(num(find(&r, {"replicas"}), 0), 0, 1 << 20) *
                     std::clamp<std::int64_t>(num(find(&r, {"spec", "replicas"}), 0), 0, 1 << 20);
  return per_service * std::min<std::int64_t>(service_count(iss), 1 << 10);
}

}  // namespace

StatusInputs read_status_inputs(kube::Client& client, const std::string& ns) {
  auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + ns + " (configmap/" +
                       std::string(baseline::kConfigMapName) + " not found): run kubectl mindie deploy first");
  }
  const baseline::Baseline stored = baseline::read_baseline(*cm, ns);
  const std::string name = stored.workload_name();
  if (baseline::runs_deployments(mode_of(stored))) {
    // Deployments and pods by the labels kubectl-mindie put on them: one LIST each (events only on trouble).
    const std::string selector = multi_selector(name);
    auto take = [](json::object list) -> json::array { return std::move(list["items"].as_array()); };
    StatusInputs in{std::move(*cm), std::nullopt, {}, {}, {}, {}, {}, {}, {}};
    in.deployments = take(client.list(kube::gvr::kDeployments, ns, selector));
    client.list_each(kube::gvr::kPods, ns, selector, 500, "", [&](json::object& pod) { in.pods.push_back(slim_pod(pod)); });
    const bool trouble = std::any_of(in.pods.begin(), in.pods.end(), [](const json::value& p) {
      return condition_status(find(&p, {"status"}), "Ready") != "True";
    });
    if (trouble) in.events = take(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning"));
    return in;
  }
  auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, name);
  if (!iss) return StatusInputs{std::move(*cm), std::nullopt, {}, {}, {}, {}, {}, {}, {}};
  // Lists arrive in their own arenas (Client::list); the arrays are move-constructed into StatusInputs, never
  // assigned, because assigning between different memory resources would copy every pod.
  const std::string selector = service_selector(name, service_count(iss));
  auto take = [](json::object list) -> json::array { return std::move(list["items"].as_array()); };
  json::array services =
      take(client.list(kube::gvr::kInferServices, ns, "infer.huawei.com/inferserviceset-name=" + name));
  json::array sets = take(client.list(kube::gvr::kInstanceSets, ns, selector));
  // Which template each instance runs; a user who may not list workloads still gets the rest of the report.
  json::array workloads;
  std::string workloads_unknown;
  for (const kube::GVR* r : {&kube::gvr::kStatefulSets, &kube::gvr::kDeployments}) {
    try {
      // Only what the report reads of each (pod templates are large): page by page, as the pods.
      client.list_each(*r, ns, selector, 500, "", [&](json::object& w) { workloads.push_back(slim_workload(w, r->kind)); });
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      workloads_unknown = "cannot list " + r->resource + " in namespace " + ns + " (" + e.status_message() +
                          "): which pod template each instance runs is unknown";
      workloads.clear();
      break;
    }
  }
  // Pods are most of the bytes (env, volumes, probes): keep only what the report reads, page by page.
  json::array pods;
  client.list_each(kube::gvr::kPods, ns, selector, 500, "", [&](json::object& pod) { pods.push_back(slim_pod(pod)); });
  // Events only explain trouble: skip the request when every pod the set asks for exists and is ready.
  const bool trouble = static_cast<std::int64_t>(pods.size()) < desired_pods(*iss) ||
                       std::any_of(pods.begin(), pods.end(), [](const json::value& p) {
                         return condition_status(find(&p, {"status"}), "Ready") != "True";
                       });
  json::array events = trouble ? take(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning")) : json::array();
  return StatusInputs{std::move(*cm),    std::move(iss),    std::move(services), std::move(sets),
                      std::move(pods),   std::move(events), {},                  std::move(workloads),
                      std::move(workloads_unknown)};
}

std::vector<kube::WatchTarget> status_watch_targets(const std::string& ns, const std::string& name,
                                                    std::int64_t services) {
  const std::string selector = service_selector(name, services);
  return {
      {kube::gvr::kConfigMaps, ns, "", std::string("metadata.name=") + baseline::kConfigMapName},
      {kube::gvr::kInferServiceSets, ns, "", "metadata.name=" + name},
      {kube::gvr::kInferServices, ns, "infer.huawei.com/inferserviceset-name=" + name, ""},
      {kube::gvr::kInstanceSets, ns, selector, ""},
      {kube::gvr::kPods, ns, selector, ""},
      {kube::gvr::kEvents, ns, "", "type=Warning"},
      {kube::gvr::kStatefulSets, ns, selector, ""},
      {kube::gvr::kDeployments, ns, selector, ""},
  };
}

std::vector<kube::WatchTarget> multi_status_watch_targets(const std::string& ns, const std::string& name) {
  const std::string selector = multi_selector(name);
  return {
      {kube::gvr::kConfigMaps, ns, "", std::string("metadata.name=") + baseline::kConfigMapName},
      {kube::gvr::kDeployments, ns, selector, ""},
      {kube::gvr::kPods, ns, selector, ""},
      {kube::gvr::kEvents, ns, "", "type=Warning"},
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

StatusInputs inputs_from_multi_informer(const kube::Informer& informer) {
  StatusInputs in;
  in.config_map = config_map_from_informer(informer);
  const auto array = [&](std::size_t target) { return informer_array(informer, target); };
  in.deployments = array(1);
  in.pods = array(2);
  in.events = array(3);
  return in;
}

StatusInputs inputs_from_informer(const kube::Informer& informer) {
  StatusInputs in;
  in.config_map = config_map_from_informer(informer);
  const auto array = [&](std::size_t target) { return informer_array(informer, target); };
  if (auto sets = informer.objects(1); !sets.empty()) in.service_set = std::move(sets.front());
  in.infer_services = array(2);
  in.instance_sets = array(3);
  in.pods = array(4);
  in.events = array(5);
  append_with_kind(in.workloads, array(6), kube::gvr::kStatefulSets.kind);
  append_with_kind(in.workloads, array(7), kube::gvr::kDeployments.kind);
  return in;
}

json::object build_status_report(const std::string& ns, const StatusInputs& in,
                                 std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::object& config_map = in.config_map;
  const json::object* iss = in.service_set ? &*in.service_set : nullptr;
  // A broken baseline (hand-edited) must not hide what runs: show the live state with the problem as drift.
  const baseline::Baseline stored = baseline::read_baseline(config_map, ns);
  const std::optional<config::UserConfig>& baseline_config = stored.config;
  const std::string iss_name = stored.workload_name();
  const std::string mode = mode_of(stored);
  // multi_deployment: no InferServiceSet; the live spec is the set of Deployments (one per instance), grouped by
  // the component and instance-index labels kubectl-mindie puts on them and their pods.
  const bool multi = baseline::runs_deployments(mode);
  const bool found = multi ? !in.deployments.empty() : iss != nullptr;

  json::object report{{"apiVersion", "kubectl-mindie/v1"}, {"kind", "Status"},   {"namespace", ns},
                      {"inferServiceSet", iss_name},       {"deployMode", mode}, {"found", found},
                      {"baselineUsable", baseline_config.has_value()}};
  json::array drift;
  // Not a disagreement but work in flight: a controller or the operator has not yet caught up with the spec it was
  // given (found against the real control plane, where that takes a moment after every write). Not ready either.
  json::array converging;
  json::array unready;
  bool ready = found;
  if (!baseline_config) drift.push_back(json::string(stored.problem));
  // role -> instance -> its Deployment (multi_deployment).
  std::map<std::string, std::map<std::int64_t, const json::value*>> deployments;
  if (multi) {
    report["generation"] = nullptr;
    report["observedGeneration"] = nullptr;
    if (!found) drift.push_back(json::string("no Deployment of " + iss_name + " exists"));
    json::array listed;
    for (const auto& d : in.deployments) {
      const json::value* labels = find(&d, {"metadata", "labels"});
      const std::string role = str(find(labels, {render::kComponentLabel}));
      std::int64_t k = 0;  // controller, coordinator, kv-pool, kv-conductor: one instance
      if (role == "prefill" || role == "decode") {
        try {
          k = std::stoll(str(find(labels, {render::kInstanceIndexLabel})));
        } catch (const std::exception&) {
          k = -1;
        }
      }
      if (!role.empty()) deployments[role][k] = &d;
      const std::int64_t generation = num(find(&d, {"metadata", "generation"}));
      const std::int64_t observed = num(find(&d, {"status", "observedGeneration"}));
      const std::int64_t replicas = num(find(&d, {"spec", "replicas"}), 1);
      const std::int64_t ready_replicas = num(find(&d, {"status", "readyReplicas"}));
      const std::string name = str(find(&d, {"metadata", "name"}));
      if (observed < generation) {
        ready = false;
        converging.push_back(json::string("the deployment controller has not observed generation " +
                                     std::to_string(generation) + " of deployment " + name + " yet"));
      }
      listed.push_back({{"name", name},
                        {"role", role},
                        {"index", k},
                        {"replicas", replicas},
                        {"readyReplicas", ready_replicas},
                        {"updatedReplicas", num(find(&d, {"status", "updatedReplicas"}))},
                        {"generation", generation},
                        {"observedGeneration", observed}});
    }
    report["deployments"] = std::move(listed);
  } else if (iss) {
    const std::int64_t generation = num(find(*iss, {"metadata", "generation"}));
    const std::int64_t observed = num(find(*iss, {"status", "observedGeneration"}));
    report["generation"] = generation;
    report["observedGeneration"] = observed;
    if (observed != generation) {
      ready = false;
      converging.push_back(json::string("the operator has not observed generation " + std::to_string(generation) +
                                   " yet (status.observedGeneration " + std::to_string(observed) + ")"));
    }
  } else {
    report["generation"] = nullptr;
    report["observedGeneration"] = nullptr;
    drift.push_back(json::string("inferserviceset " + iss_name + " does not exist"));
  }
  // multi_deployment has no InferServices: its instances are listed as of one (index 0, name ""), so the role
  // and instance logic below is the same for both modes.
  const std::int64_t services = multi ? 1 : iss ? service_count(in.service_set) : 0;

  json::array infer_services;
  for (std::int64_t i = 0; i < (multi ? 0 : services); ++i) {
    const std::string name = iss_name + "-" + std::to_string(i);
    bool service_ready = false;
    for (const auto& s : in.infer_services)
      if (str(find(&s, {"metadata", "name"})) == name)
        service_ready = condition_status(find(&s, {"status"}), "Ready") == "True";
    json::array events = warning_events(in.events, "InferService", name, 3);
    if (!service_ready)
      for (const auto& e : events) unready.push_back(json::string(operator_event_text("inferservice/" + name, e)));
    infer_services.push_back({{"name", name}, {"index", i}, {"ready", service_ready}, {"events", std::move(events)}});
  }
  report["inferServices"] = std::move(infer_services);

  // role -> (service, instance) -> pods, from the operator's labels.
  std::map<std::string, std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const json::value*>>> grouped;
  for (const auto& pod : in.pods) {
    const json::value* labels = find(&pod, {"metadata", "labels"});
    if (multi) {
      const std::string role = str(find(labels, {render::kComponentLabel}));
      if (role.empty()) continue;
      std::int64_t k = 0;
      if (role == "prefill" || role == "decode") {
        try {
          k = std::stoll(str(find(labels, {render::kInstanceIndexLabel})));
        } catch (const std::exception&) {  // shown under instance -1, as for the operator's pods
          k = -1;
        }
      }
      grouped[role][{0, k}].push_back(&pod);
      continue;
    }
    // A label we cannot read still shows the pod, under instance -1.
    const auto [role, service, k] = operator_instance(labels, iss_name);
    if (role.empty() || service < 0) continue;
    grouped[role][{service, k}].push_back(&pod);
  }
  // InstanceSets by role: what the operator has observed.
  std::map<std::string, std::vector<const json::value*>> instance_sets;
  for (const auto& s : in.instance_sets) {
    const std::string role = str(find(&s, {"metadata", "labels", "infer.huawei.com/instanceset-name"}));
    if (!role.empty()) instance_sets[role].push_back(&s);
  }

  // The operator's workloads by role and (InferService, instance): each one's pod template is what that instance
  // runs, since the operator never updates a workload (infer-operator-rules.md D3).
  std::map<std::string, std::map<std::pair<std::int64_t, std::int64_t>, const json::value*>> workloads;
  for (const auto& w : in.workloads) {
    const auto [role, service, k] = operator_instance(find(&w, {"metadata", "labels"}), iss_name);
    if (!role.empty() && service >= 0 && k >= 0) workloads[role][{service, k}] = &w;
  }

  const auto desired = baseline_config ? render::desired_role_replicas(*baseline_config) : std::map<std::string, int>{};
  const json::array* live_roles = nullptr;
  if (iss) {
    if (const auto* r = find(*iss, {"spec", "template", "roles"}); r && r->is_array()) live_roles = &r->as_array();
  }
  json::array roles;
  for (const auto& name : render::role_names()) {
    const std::int64_t base = desired.count(name) ? desired.at(name) : 0;
    std::int64_t spec = -1;
    std::int64_t pods_per_instance = 0;
    std::size_t index = 0;
    bool hpa = false;
    const json::value* live_role = nullptr;
    if (live_roles) {
      for (std::size_t i = 0; i < live_roles->size(); ++i) {
        const json::value& role = (*live_roles)[i];
        if (str(find(&role, {"name"})) != name) continue;
        spec = num(find(&role, {"replicas"}), 1);
        pods_per_instance = num(find(&role, {"spec", "replicas"}), 1);
        hpa = str(find(&role, {"scalingPolicy", "type"})) == "HPA";
        index = i;
        live_role = &role;
      }
    }
    // Instances wanted per InferService: the role's replicas, or for an HPA-owned role what the HPA set on the
    // InstanceSet (infer-operator-rules.md C4: the role's count is only where the HPA started).
    std::map<std::int64_t, std::int64_t> wanted_of;
    for (std::int64_t sv = 0; sv < services && spec >= 0; ++sv) wanted_of[sv] = spec;
    if (hpa)
      for (const auto* ist : instance_sets[name]) {
        const std::int64_t sv =
            service_index(str(find(ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"})), iss_name);
        if (wanted_of.count(sv)) wanted_of[sv] = std::max<std::int64_t>(0, num(find(ist, {"spec", "replicas"}), spec));
      }
    std::int64_t wanted_total = 0;
    for (const auto& [sv, n] : wanted_of) {
      wanted_total += n;
      if (n > kMaxListedInstances)
        drift.push_back(json::string("role " + name + ": " + std::to_string(n) + " instances wanted, far beyond "
                                     "kubectl-mindie's limit of 16; only the first " +
                                     std::to_string(kMaxListedInstances) + " are shown"));
    }
    const auto& role_deployments = deployments[name];
    if (multi) {
      // The live spec: which instances have a Deployment, and pods per instance from their replicas.
      spec = static_cast<std::int64_t>(role_deployments.size());
      for (const auto& [k, d] : role_deployments)
        pods_per_instance = std::max(pods_per_instance, num(find(d, {"spec", "replicas"}), 1));
    }
    // Only the master of a master/standby pair passes readiness (infer-operator behaviour).
    const bool master_standby = is_control_role(name) && pods_per_instance == 2;
    const std::int64_t needed_ready = master_standby ? 1 : pods_per_instance;

    std::optional<std::int64_t> observed;
    json::value hpa_status = nullptr;
    if (multi && !role_deployments.empty()) {
      // Instances whose Deployment the deployment controller has observed in its current generation.
      observed = 0;
      for (const auto& [k, d] : role_deployments)
        if (num(find(d, {"status", "observedGeneration"})) >= num(find(d, {"metadata", "generation"}))) ++*observed;
    }
    for (const auto* s : instance_sets[name]) {
      observed = observed.value_or(0) + num(find(s, {"status", "replicas"}));
      if (const auto* scaling = find(s, {"status", "scalingResourceStatus"}); scaling && scaling->is_object()) {
        hpa_status = {{"name", str(find(scaling, {"name"}))},
                      {"ready", find(scaling, {"ready"}) && find(scaling, {"ready"})->is_bool() &&
                                    find(scaling, {"ready"})->as_bool()},
                      {"message", str(find(scaling, {"message"}))}};
      }
    }

    // Every instance the live spec asks for is listed, with or without pods, so a missing pod or instance
    // shows up instead of vanishing; pods of instances beyond the spec (being scaled in) are listed too.
    auto& by_instance = grouped[name];
    if (multi) {
      for (const auto& [k, d] : role_deployments) by_instance.try_emplace({0, k});
    } else {
      for (const auto& [sv, n] : wanted_of)
        // Listed up to a bound: a hand-edited count of millions must not allocate millions of rows.
        for (std::int64_t k = 0; k < std::min(n, kMaxListedInstances); ++k) by_instance.try_emplace({sv, k});
    }
    // The pod template the role asks for (its hash and container images), to tell which instances run another.
    const std::string role_hash =
        str(find(live_role, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}));
    std::map<std::string, std::string> spec_images;  // container -> image
    if (const auto* cs = find(live_role, {"spec", "template", "spec", "containers"}); cs && cs->is_array())
      for (const auto& c : cs->as_array()) spec_images[str(find(&c, {"name"}))] = str(find(&c, {"image"}));
    std::set<std::string> other_images;
    std::int64_t on_current = 0;
    std::vector<std::string> old_workloads;  // "statefulset/NAME" of wanted instances on an earlier template
    json::array instances;
    std::int64_t ready_pods = 0, total = 0, restarts = 0, healthy_instances = 0;
    // A role absent from the live set is healthy only when the baseline has none of it either (union without
    // PD-hybrid, mf-store without sglang).
    bool role_healthy = multi || spec >= 0 || !iss || base == 0;
    bool operator_missed = false;  // a wanted instance lacks pods: the operator's events may say why
    for (auto& [key, pod_list] : by_instance) {
      const auto [service, k] = key;
      const bool wanted = multi ? role_deployments.count(k) > 0 : k >= 0 && wanted_of.count(service) &&
                                                                    k < wanted_of.at(service);
      // An instance's pods are what its workload asks for: the operator never updates a workload, so one made before
      // a change of pods per instance keeps its count (reported as an earlier template, not as missing pods).
      const auto workload = multi ? workloads[name].end() : workloads[name].find(key);
      const bool has_workload = !multi && workload != workloads[name].end();
      const std::int64_t inst_pods =
          has_workload ? num(find(workload->second, {"spec", "replicas"}), pods_per_instance) : pods_per_instance;
      json::array pods;
      std::int64_t inst_ready = 0;
      for (const auto* p : pod_list) {
        if (const auto* cs = find(p, {"spec", "containers"}); cs && cs->is_array() && !spec_images.empty())
          for (const auto& c : cs->as_array()) {
            const auto it = spec_images.find(str(find(&c, {"name"})));
            const std::string image = str(find(&c, {"image"}));
            if (it != spec_images.end() && !image.empty() && image != it->second) other_images.insert(image);
          }
        json::object pod = pod_summary(*p, now);
        const bool pod_ready = pod.at("ready").as_bool();
        inst_ready += pod_ready ? 1 : 0;
        restarts += pod.at("restarts").as_int64();
        pods.push_back(std::move(pod));
      }
      const std::int64_t inst_needed_ready = master_standby ? needed_ready : inst_pods;
      const bool healthy = wanted && inst_ready >= inst_needed_ready &&
                           static_cast<std::int64_t>(pod_list.size()) >= (master_standby ? 1 : inst_pods);
      for (auto& pv : pods) {
        auto& pod = pv.as_object();
        if (pod.at("ready").as_bool()) continue;
        std::string why(pod.at("reason").as_string());
        // The standby of a healthy pair is not ready by design: not a problem to report.
        if (master_standby && healthy && why.starts_with("running, but not ready")) {
          pod["reason"] = "standby (only the master passes readiness)";
          continue;
        }
        pod["events"] = warning_events(in.events, "Pod", std::string(pod.at("name").as_string()), 3);
        std::string line = "pod " + std::string(pod.at("name").as_string()) + " (role " + name + ", instance " +
                           std::to_string(k) + "): " + why;
        for (const auto& e : pod.at("events").as_array()) {
          line += "; event " + std::string(e.at("reason").as_string()) + ": " +
                  std::string(e.at("message").as_string());
          break;  // the latest says the most; the rest are in the report
        }
        unready.push_back(json::string(line));
      }
      const auto present = static_cast<std::int64_t>(pod_list.size());
      if (wanted && present < inst_pods && !(master_standby && healthy)) {
        operator_missed = true;
        unready.push_back(json::string("role " + name + " instance " + std::to_string(k) + ": " +
                                       std::to_string(present) + " of " + std::to_string(inst_pods) +
                                       " pods exist"));
      }
      if (!wanted && present > 0) {
        role_healthy = false;
        unready.push_back(json::string("role " + name + " instance " + std::to_string(k) + ": " +
                                       std::to_string(present) + " pods of a removed instance still exist"));
      }
      if (wanted) {
        if (healthy) ++healthy_instances;
        else role_healthy = false;
      }
      ready_pods += inst_ready;
      total += present;
      json::object instance{{"inferService", multi ? std::string() : iss_name + "-" + std::to_string(service)},
                            {"index", k},
                            {"healthy", healthy},
                            {"readyPods", inst_ready},
                            {"pods", std::move(pods)}};
      instance["wanted"] = wanted;
      // multi_deployment: the instance's Deployment (null: pods of a Deployment that is gone).
      if (multi)
        instance["deployment"] = wanted ? json::value(str(find(role_deployments.at(k), {"metadata", "name"})))
                                        : json::value(nullptr);
      if (!multi) {
        // The template its workload was made from (null: no workload yet, or no hash recorded on it).
        const std::string hash = has_workload ? operator_rules::workload_template_hash(*workload->second) : "";
        instance["templateHash"] = hash.empty() ? json::value(nullptr) : json::value(hash);
        if (wanted && has_workload && !role_hash.empty()) {
          if (hash == role_hash) {
            ++on_current;
          } else {
            old_workloads.push_back(operator_rules::workload_ref(*workload->second));
          }
        }
      }
      instances.push_back(std::move(instance));
    }
    if (!role_healthy) ready = false;
    // What the operator said about this role's InstanceSets: a refusal (ValidateError), a Service it could not
    // create, ... Shown as the reason when the role is not healthy (old events of a healthy role say nothing now).
    json::array operator_events;
    for (std::int64_t sv = 0; sv < (multi ? 0 : services); ++sv) {
      const std::string ist = iss_name + "-" + std::to_string(sv) + "-" + name;
      std::string uid;  // events about an earlier InstanceSet of the same name are not about this one
      for (const auto* s : instance_sets[name])
        if (str(find(s, {"metadata", "name"})) == ist) uid = str(find(s, {"metadata", "uid"}));
      for (auto& e : warning_events(in.events, "InstanceSet", ist, 3, uid)) {
        e.as_object()["instanceSet"] = ist;
        // They explain what the operator did not create; pods that exist explain themselves.
        if (!role_healthy && operator_missed)
          unready.push_back(json::string("role " + name + ": " + operator_event_text("instanceset/" + ist, e)));
        operator_events.push_back(std::move(e));
      }
    }
    json::array without_strategy;
    for (const auto* ist : instance_sets[name])
      if (!find(ist, {"metadata", "labels", render::kPrioritySchedulingLabel})) {
        const std::string ist_name = str(find(ist, {"metadata", "name"}));
        without_strategy.push_back(json::string(ist_name));
        const std::string line =
            "role " + name + ": instanceset/" + ist_name + " has no " + render::kPrioritySchedulingLabel +
            " label (an older infer-operator created it), so a current operator creates no new workloads for it "
            "and scale-out does nothing; add it: kubectl label instancesets." + kube::gvr::kInstanceSets.group +
            " -n " + ns + " " + ist_name + " " + render::kPrioritySchedulingLabel + "=Parallel";
        drift.push_back(json::string(line));
        if (!role_healthy) unready.push_back(json::string(line));  // why wait never sees the new instances
      }
    if (!old_workloads.empty()) {
      std::string names;
      for (const auto& w : old_workloads) names += " " + w;
      const auto on_other = static_cast<std::int64_t>(old_workloads.size());
      drift.push_back(json::string(
          "role " + name + ": " + std::to_string(on_other) + " of " + std::to_string(on_current + on_other) +
          " instances run an earlier pod template than spec.template.roles[" + std::to_string(index) +
          "]: infer-operator never updates an existing instance's workload; delete it and the operator makes it "
          "again from the current one: kubectl delete -n " + ns + names));
    }
    if (!other_images.empty()) {
      std::string images, wanted_images;
      for (const auto& i : other_images) images += (images.empty() ? "" : ", ") + i;
      for (const auto& [c, i] : spec_images) wanted_images += (wanted_images.empty() ? "" : ", ") + i;
      drift.push_back(json::string("role " + name + ": pods run image " + images + ", spec.template.roles[" +
                                   std::to_string(index) + "] says " + wanted_images));
    }
    if (!baseline_config) {
      // Nothing to compare with; the baseline problem is already reported.
    } else if (iss && spec < 0) {
      if (base > 0) {
        ready = false;
        drift.push_back(json::string("role " + name + ": in the baseline but not in the live InferServiceSet"));
      }
    } else if (multi && spec != base) {
      if (base > 0 || spec > 0) {
        if (spec < base) ready = false;
        drift.push_back(json::string("role " + name + ": baseline " + std::to_string(base) + " instances, " +
                                     std::to_string(spec) + " Deployments live"));
      }
    } else if (iss && spec != base && !hpa) {
      drift.push_back(json::string("role " + name + ": baseline " + std::to_string(base) +
                                   " instances, spec.template.roles[" + std::to_string(index) + "].replicas " +
                                   std::to_string(spec)));
    }
    if (!multi && observed && spec >= 0 && *observed != spec * services && !hpa) {
      ready = false;
      converging.push_back(json::string("role " + name + ": spec asks for " + std::to_string(spec * services) +
                                   " instances, the operator's InstanceSets report " + std::to_string(*observed)));
    }
    roles.push_back({{"name", name},
                     {"baselineInstances", baseline_config ? json::value(base) : json::value(nullptr)},
                     {"specInstances", spec < 0 ? json::value(nullptr) : json::value(spec)},
                     {"observedInstances", observed ? json::value(*observed) : json::value(nullptr)},
                     {"podsPerInstance", pods_per_instance},
                     {"wantedInstances", spec < 0 ? json::value(nullptr) : json::value(wanted_total)},
                     {"desiredPods", spec < 0 ? 0 : wanted_total * pods_per_instance},
                     {"readyPods", ready_pods},
                     {"pods", total},
                     {"restarts", restarts},
                     {"readyInstances", healthy_instances},
                     {"healthy", role_healthy},
                     {"masterStandby", master_standby},
                     {"replicasOwner", hpa ? "HPA" : "spec"},
                     {"hpa", hpa_status},
                     {"templateHash", role_hash.empty() ? json::value(nullptr) : json::value(role_hash)},
                     {"instancesOnCurrentTemplate", on_current},
                     {"instancesOnOtherTemplates", static_cast<std::int64_t>(old_workloads.size())},
                     {"otherImages", json::array(other_images.begin(), other_images.end())},
                     {"operatorEvents", std::move(operator_events)},
                     {"instanceSetsWithoutStrategy", std::move(without_strategy)},
                     {"instances", std::move(instances)}});
  }
  report["ready"] = ready;
  report["roles"] = std::move(roles);
  report["drift"] = std::move(drift);
  report["converging"] = std::move(converging);
  json::array warnings;
  if (!in.workloads_unknown.empty()) warnings.push_back(json::string(in.workloads_unknown));
  report["warnings"] = std::move(warnings);
  report["unready"] = std::move(unready);
  return report;
}

namespace {

bool role_unused(const json::object& role) {
  const auto& spec = role.at("specInstances");
  const auto& base = role.at("baselineInstances");
  return (base.is_null() || base.as_int64() == 0) && (spec.is_null() || spec.as_int64() == 0) &&
         role.at("pods").as_int64() == 0;
}

std::string count_or_dash(const json::value& v) { return v.is_null() ? "-" : std::to_string(v.as_int64()); }

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

std::string render_status_table(const json::object& report, bool wide) {
  std::ostringstream out;
  const auto text = [&](const char* key) { return std::string(report.at(key).as_string()); };
  const bool multi = baseline::runs_deployments(text("deployMode"));
  // single_container runs one Deployment: name it rather than the workload label that groups it.
  const auto* listed = report.if_contains("deployments");
  if (text("deployMode") == config::to_string(config::DeployMode::SingleContainer) && listed &&
      listed->is_array() && listed->as_array().size() == 1)
    out << "deployment/" << listed->as_array()[0].at("name").as_string().c_str();
  else
    out << (multi ? "deployments of " : "inferserviceset/") << text("inferServiceSet");
  out << " in namespace " << text("namespace") << " (" << text("deployMode") << "): ";
  if (!report.at("found").as_bool()) {
    out << "not found";
  } else if (multi) {
    out << (report.at("ready").as_bool() ? "Ready" : "Not ready");
  } else {
    out << (report.at("ready").as_bool() ? "Ready" : "Not ready") << ", generation "
        << report.at("generation").as_int64() << " (observed " << report.at("observedGeneration").as_int64() << ")";
  }
  out << "\n\n";

  std::vector<std::vector<std::string>> table{
      {"ROLE", "BASELINE", "SPEC", "OBSERVED", "READY INSTANCES", "PODS READY", "RESTARTS", "REPLICAS SET BY"}};
  for (const auto& r : report.at("roles").as_array()) {
    const auto& role = r.as_object();
    if (role_unused(role)) continue;  // kv-pool / kv-conductor when off everywhere would only add noise
    const auto& spec = role.at("specInstances");
    table.push_back({std::string(role.at("name").as_string()), count_or_dash(role.at("baselineInstances")),
                     count_or_dash(spec), count_or_dash(role.at("observedInstances")),
                     std::to_string(role.at("readyInstances").as_int64()) + "/" +
                         (spec.is_null() ? std::string("0") : count_or_dash(role.at("wantedInstances"))),
                     std::to_string(role.at("readyPods").as_int64()) + "/" +
                         std::to_string(role.at("desiredPods").as_int64()),
                     std::to_string(role.at("restarts").as_int64()), std::string(role.at("replicasOwner").as_string())});
  }
  out << columns(table);

  // The tree: InferServiceSet -> InferService -> role -> instance -> pods, pod cells aligned as a table.
  if (report.at("found").as_bool()) {
    std::vector<std::vector<std::string>> tree;
    std::vector<std::string> header{"", "READY", "STATUS", "RESTARTS", "AGE"};
    if (wide) {
      header.push_back("NODE");
      header.push_back("NPUS");
    }
    tree.push_back(header);
    // multi_deployment: roles hang directly under the deployment, as under one pseudo InferService named "".
    tree.push_back({(multi ? "deployments/" : "inferserviceset/") + text("inferServiceSet")});
    json::array services = report.at("inferServices").as_array();
    if (multi) services = {json::object{{"name", ""}, {"ready", report.at("ready")}}};
    for (std::size_t s = 0; s < services.size(); ++s) {
      const auto& svc = services[s].as_object();
      const bool last_svc = s + 1 == services.size();
      const std::string svc_name(svc.at("name").as_string());
      if (!multi)
        tree.push_back({std::string(last_svc ? "└── " : "├── ") + "inferservice/" + svc_name,
                        svc.at("ready").as_bool() ? "Ready" : "NotReady"});
      const std::string p1 = multi ? "" : last_svc ? "    " : "│   ";
      std::vector<const json::object*> shown;
      for (const auto& r : report.at("roles").as_array())
        if (!role_unused(r.as_object())) shown.push_back(&r.as_object());
      for (std::size_t ri = 0; ri < shown.size(); ++ri) {
        const auto& role = *shown[ri];
        const bool last_role = ri + 1 == shown.size();
        std::vector<const json::object*> insts;
        for (const auto& inst : role.at("instances").as_array())
          if (inst.at("inferService").as_string() == svc_name) insts.push_back(&inst.as_object());
        std::int64_t healthy = 0, wanted = 0;
        for (const auto* inst : insts) {
          if (inst->at("wanted").as_bool()) ++wanted;
          if (inst->at("healthy").as_bool()) ++healthy;
        }
        std::string label = std::string(role.at("name").as_string());
        if (role.at("masterStandby").as_bool()) label += " (master/standby)";
        if (role.at("replicasOwner").as_string() == "HPA") label += " (replicas owned by HPA)";
        tree.push_back({p1 + (last_role ? "└── " : "├── ") + label,
                        std::to_string(healthy) + "/" + std::to_string(wanted) + " instances"});
        const std::string p2 = p1 + (last_role ? "    " : "│   ");
        for (std::size_t ii = 0; ii < insts.size(); ++ii) {
          const auto& inst = *insts[ii];
          const bool last_inst = ii + 1 == insts.size();
          const auto& pods = inst.at("pods").as_array();
          std::string inst_label = "instance " + std::to_string(inst.at("index").as_int64());
          if (const auto* d = inst.if_contains("deployment"); d && d->is_string())
            inst_label += " (deployment/" + std::string(d->as_string()) + ")";
          tree.push_back({p2 + (last_inst ? "└── " : "├── ") + inst_label,
                          std::to_string(inst.at("readyPods").as_int64()) + "/" +
                              std::to_string(role.at("podsPerInstance").as_int64()) + " pods",
                          inst.at("healthy").as_bool() ? "" : (pods.empty() ? "NoPods" : "Unhealthy")});
          const std::string p3 = p2 + (last_inst ? "    " : "│   ");
          for (std::size_t pi = 0; pi < pods.size(); ++pi) {
            const auto& pod = pods[pi].as_object();
            const auto& age = pod.at("ageSeconds");
            std::vector<std::string> row{
                p3 + (pi + 1 == pods.size() ? "└── " : "├── ") + std::string(pod.at("name").as_string()),
                std::to_string(pod.at("readyContainers").as_int64()) + "/" +
                    std::to_string(pod.at("containers").as_int64()),
                std::string(pod.at("status").as_string()), std::to_string(pod.at("restarts").as_int64()),
                age.is_null() ? "<unknown>" : util::human_duration(age.as_int64())};
            if (wide) {
              const std::string node(pod.at("node").as_string());
              row.push_back(node.empty() ? "<none>" : node);
              row.push_back(std::to_string(pod.at("npus").as_int64()));
            }
            tree.push_back(std::move(row));
          }
        }
      }
    }
    out << '\n' << columns(tree);
  }

  out << '\n';
  const auto& drift = report.at("drift").as_array();
  const auto* warnings = report.if_contains("warnings");
  for (const auto& w : warnings && warnings->is_array() ? warnings->as_array() : json::array())
    out << "warning: " << std::string_view(w.as_string()) << '\n';
  if (drift.empty()) out << "live state matches the baseline\n";
  for (const auto& d : drift) out << "drift: " << std::string_view(d.as_string()) << '\n';
  for (const auto& c : report.at("converging").as_array())
    out << "converging: " << std::string_view(c.as_string()) << '\n';
  const auto& unready = report.at("unready").as_array();
  if (unready.empty() && report.at("found").as_bool()) out << "every desired pod exists and is ready\n";
  for (const auto& u : unready) out << "not ready: " << std::string_view(u.as_string()) << '\n';
  return out.str();
}

namespace {

/// One line per change when not on a terminal, as kubectl get -w prints: the time and what changed.
std::vector<std::string> summary_lines(const json::object& report) {
  std::vector<std::string> lines;
  std::string head = "ready=" + std::string(report.at("ready").as_bool() ? "true" : "false");
  for (const auto& r : report.at("roles").as_array()) {
    const auto& role = r.as_object();
    if (role_unused(role)) continue;
    head += " " + std::string(role.at("name").as_string()) + "=" +
            std::to_string(role.at("readyInstances").as_int64()) + "/" + count_or_dash(role.at("specInstances"));
  }
  lines.push_back(head);
  for (const auto& d : report.at("drift").as_array()) lines.push_back("drift: " + std::string(d.as_string()));
  for (const auto& c : report.at("converging").as_array())
    lines.push_back("converging: " + std::string(c.as_string()));
  for (const auto& u : report.at("unready").as_array()) lines.push_back("not ready: " + std::string(u.as_string()));
  return lines;
}

}  // namespace

void StatusOptions::run(kube::Client& client, Printer& printer,
                        const kube::Informer::TransportFactory& new_transport) {
  const auto print = [&](const json::object& report) {
    if (flags_.output == "json" || flags_.output == "yaml") {
      printer.object(report);
      printer.flush();
      printer.out() << std::flush;  // a watching reader (jq, a pipe) needs each document whole, when it is printed
    } else {
      printer.out() << render_status_table(report, flags_.output == "wide");
    }
  };
  StatusInputs inputs = read_status_inputs(client, namespace_);
  json::object report = build_status_report(namespace_, inputs, std::chrono::system_clock::now());
  if (!flags_.watch) {
    print(report);
    return;
  }
  // Watch: the view is rebuilt from an informer's cache on every change. On a terminal the screen is redrawn in
  // place; otherwise (a pipe, a log) each change prints what it changed, like kubectl get -w.
  const bool terminal = flags_.output.empty() || flags_.output == "wide" ? isatty(STDOUT_FILENO) != 0 : false;
  const std::string name(report.at("inferServiceSet").as_string());
  const bool multi = baseline::runs_deployments(report.at("deployMode").as_string());
  kube::Informer informer(new_transport, multi ? multi_status_watch_targets(namespace_, name)
                                               : status_watch_targets(namespace_, name, service_count(inputs.service_set)));
  informer.start();
  std::vector<std::string> previous;
  bool first = true;
  for (;;) {
    report = build_status_report(namespace_, multi ? inputs_from_multi_informer(informer) : inputs_from_informer(informer),
                                 std::chrono::system_clock::now());
    if (terminal) {
      printer.out() << "\x1b[H\x1b[2J" << render_status_table(report, flags_.output == "wide") << std::flush;
    } else if (flags_.output == "json" || flags_.output == "yaml") {
      const auto lines = summary_lines(report);
      if (first || lines != previous) print(report);
      previous = lines;
    } else {
      const auto lines = summary_lines(report);
      if (first) {
        printer.out() << render_status_table(report, flags_.output == "wide");
      } else {
        // Only what changed: new lines since the last view.
        const std::set<std::string> before(previous.begin(), previous.end());
        std::time_t t = std::time(nullptr);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::gmtime(&t));
        for (const auto& l : lines)
          if (!before.count(l)) printer.out() << stamp << "  " << l << '\n';
        const std::set<std::string> after(lines.begin(), lines.end());
        for (const auto& l : previous)
          if (!after.count(l) &&
              (l.starts_with("drift: ") || l.starts_with("converging: ") || l.starts_with("not ready: ")))
            printer.out() << stamp << "  resolved: " << l << '\n';
      }
      printer.out() << std::flush;
      previous = lines;
    }
    first = false;
    informer.wait_for_change(std::chrono::steady_clock::time_point::max());
  }
}

}  // namespace mindie::cmd
