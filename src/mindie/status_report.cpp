#include "mindie/status_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "mindie/baseline.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::status {

namespace json = boost::json;

namespace {

using util::find;
using util::num;
using util::str;

/// util::find from an object: the value at `path` below `obj`, or nullptr.
const json::value* find(const json::object& obj, std::initializer_list<std::string_view> path) {
  if (path.size() == 0) return nullptr;
  const json::value* v = obj.if_contains(*path.begin());
  for (auto key = path.begin() + 1; key != path.end(); ++key) {
    if (!v || !v->is_object()) return nullptr;
    v = v->as_object().if_contains(*key);
  }
  return v;
}

/// The condition of `type` in status.conditions of `status` (an object's status), nullptr when there is none.
const json::value* condition_of(const json::value* status, std::string_view type) {
  if (const auto* conds = find(status, {"conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == type) return &c;
  }
  return nullptr;
}

std::string condition_status(const json::value* status, std::string_view type) {
  return str(find(condition_of(status, type), {"status"}));
}

/// The time of an event: `field` (firstTimestamp or lastTimestamp), else eventTime, else its creation; 0 when none
/// is readable.
std::int64_t event_time(const json::value& e, std::string_view field) {
  std::string when = str(find(&e, {field}));
  if (when.empty()) when = str(find(&e, {"eventTime"}));
  if (when.empty()) when = str(find(&e, {"metadata", "creationTimestamp"}));
  return util::parse_rfc3339(when).value_or(0);
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

/// Warning events about the object of `kind` named `name` (and, when `uid` is given, that uid), newest first, at
/// most `limit` (the latest say the most).
std::vector<Event> warning_events(const json::array& events, std::string_view kind, const std::string& name,
                                  std::size_t limit, const std::string& uid = "") {
  std::vector<std::pair<std::int64_t, const json::value*>> found;
  for (const auto& e : events) {
    if (str(find(&e, {"involvedObject", "kind"})) != kind || str(find(&e, {"involvedObject", "name"})) != name)
      continue;
    // An event about an earlier object of the same name (deleted and made again) says nothing about this one.
    if (const std::string about = str(find(&e, {"involvedObject", "uid"})); !uid.empty() && !about.empty() && about != uid)
      continue;
    if (str(find(&e, {"type"})) != "Warning") continue;
    found.emplace_back(event_time(e, "lastTimestamp"), &e);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Event> out;
  for (std::size_t i = 0; i < found.size() && i < limit; ++i) {
    const json::value& e = *found[i].second;
    Event ev;
    ev.reason = str(find(&e, {"reason"}));
    ev.message = str(find(&e, {"message"}));
    // events.k8s.io writers (the default scheduler) count repeats in series.count.
    ev.count = num(find(&e, {"count"}), num(find(&e, {"series", "count"}), 1));
    if (found[i].first) ev.last_seen = found[i].first;
    out.push_back(std::move(ev));
  }
  return out;
}

/// A Warning event of infer-operator about `object` ("instanceset/X") in plain words, with its reason and message.
/// The reasons are the operator's (instanceset_controller.go; infer-operator-rules.md A1-A3).
std::string operator_event_text(const std::string& object, const Event& event) {
  std::string what;
  if (event.reason == "ValidateError")
    what = "infer-operator refuses " + object + " and creates nothing for it";
  else if (event.reason == "ServiceCreateError")
    what = "infer-operator could not create a Service of " + object + ", so it creates none of its workloads";
  else
    what = "infer-operator reports a problem with " + object;
  return what + " (" + event.reason + (event.count > 1 ? ", " + std::to_string(event.count) + " times" : "") +
         "): " + event.message;
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

bool is_control_role(const std::string& role) { return role == "controller" || role == "coordinator"; }

/// Each incarnation of workload `name` of `kind` (StatefulSet, Deployment) since `since` (seconds since the epoch;
/// 0: all): its uid -> when it began. From the controllers' events about it, and from the live workload (`live`, may
/// be null) whose events may not be written yet.
std::map<std::string, std::int64_t> workload_incarnations(const json::array& events, const std::string& kind,
                                                          const std::string& name, const json::value* live,
                                                          std::int64_t since) {
  std::map<std::string, std::int64_t> began;
  for (const auto& e : events) {
    if (str(find(&e, {"involvedObject", "kind"})) != kind || str(find(&e, {"involvedObject", "name"})) != name)
      continue;
    const std::string uid = str(find(&e, {"involvedObject", "uid"}));
    if (uid.empty()) continue;
    const std::int64_t t = event_time(e, "firstTimestamp");
    if (t < since) continue;
    const auto [it, added] = began.try_emplace(uid, t);
    if (!added && t != 0 && (it->second == 0 || t < it->second)) it->second = t;
  }
  if (live) {
    const std::string uid = str(find(live, {"metadata", "uid"}));
    const auto created = util::parse_rfc3339(str(find(live, {"metadata", "creationTimestamp"})));
    if (!uid.empty() && created) began[uid] = *created;
  }
  return began;
}

/// Whether infer-operator has made instance workload `name` more than once since its InstanceSet was made
/// (`instance_set_created`, seconds since the epoch: the workloads of an earlier deployment of the same name, whose
/// events outlive it by an hour, are not this one's), and whether it still is at it (see Rebuild). `live` is the current workload (null when there is none right now: deleted, about
/// to be made again).
std::optional<Rebuild> judge_rebuild(const json::array& events, const std::string& kind, const std::string& name,
                                     const json::value* live, std::int64_t instance_set_created,
                                     std::int64_t terminating_pods, std::int64_t now) {
  const auto began = workload_incarnations(events, kind, name, live, instance_set_created);
  // Made twice with nothing going is a re-creation (a scale-in and out, a deliberate delete), not a rebuild; a loop
  // has its first incarnation's pods terminating while the second runs, and a third incarnation soon after.
  if (began.size() < 2 || (began.size() == 2 && terminating_pods == 0 && live != nullptr)) return std::nullopt;
  Rebuild r;
  r.workloads = static_cast<std::int64_t>(began.size());
  r.since = began.begin()->second;
  for (const auto& [uid, t] : began) {
    r.since = std::min(r.since, t);
    r.latest = std::max(r.latest, t);
  }
  r.ongoing = live == nullptr || terminating_pods > 0 || now - r.latest < kRebuildQuietSeconds;
  return r;
}

/// The unready line of an instance infer-operator is rebuilding, with what ends it (operator_rules::gang_ways_out).
std::string rebuild_text(const std::string& ns, const std::string& role, std::int64_t k, const std::string& workload,
                         const Rebuild& r) {
  return "role " + role + " instance " + std::to_string(k) + ": infer-operator is rebuilding it: " + workload +
         " was made " + std::to_string(r.workloads) + " times since " + util::utc_text(r.since, "%H:%M:%S UTC") +
         ", last at " + util::utc_text(r.latest, "%H:%M:%S UTC") +
         " (its rescheduler deletes a gang instance's workload whenever one of its pods is deleted, and the pods of "
         "the deleted workload, going away, count as the next deletion, so it may never stop); to end it, " +
         operator_rules::gang_ways_out(ns, role, k);
}

/// The Ready condition of `obj` ("True", "False", "" when it has none) and its "reason: message".
std::pair<std::string, std::string> ready_condition(const json::value& obj) {
  const json::value* c = condition_of(find(&obj, {"status"}), "Ready");
  if (c == nullptr) return {"", ""};
  return {str(find(c, {"status"})), str(find(c, {"reason"})) + ": " + str(find(c, {"message"}))};
}

/// infer-operator's API group (its InstanceSets), for the kubectl commands the report suggests.
constexpr const char* kInstanceSetsGroup = "mindcluster.huawei.com";

/// The most instances of one role the report lists (kubectl-mindie deploys at most 16).
constexpr std::int64_t kMaxListedInstances = 1024;

json::object event_json(const Event& e) {
  json::object o{{"reason", e.reason}, {"message", e.message}, {"count", e.count}, {"lastSeen", util::or_null(e.last_seen)}};
  if (!e.instance_set.empty()) o["instanceSet"] = e.instance_set;
  return o;
}

json::array events_json(const std::vector<Event>& events) {
  json::array out;
  for (const auto& e : events) out.push_back(event_json(e));
  return out;
}

json::object pod_json(const Pod& p) {
  const kube::PodState& s = p.state;
  return {{"name", s.name},
          {"phase", s.phase},
          {"status", s.status},
          {"ready", s.ready},
          {"readyContainers", s.ready_containers},
          {"containers", s.containers},
          {"restarts", s.restarts},
          {"createdAt", s.created_at},
          {"ageSeconds", util::or_null(s.age_seconds)},
          {"node", s.node},
          {"npus", p.npus},
          {"reason", p.reason},
          {"events", events_json(p.events)}};
}


/// Whether the report may agree with infer-operator's verdict on each InferService of `names` (`infer_services`, the
/// listed objects): an InferService it does not call Ready keeps the report not ready, unless the only InstanceSets
/// of it that are not Ready are master/standby roles the report finds healthy (the standby never passes readiness,
/// so the operator never calls them Ready: infer-operator-rules.md C2). Why not goes to `unready`.
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
    std::vector<std::string> causes;
    bool standby_only = false;  // an InstanceSet not Ready is a healthy master/standby pair
    for (const auto& ist : instance_sets) {
      if (str(find(&ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"})) != service.name) continue;
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

bool pod_ready(const json::value& pod) { return condition_status(find(&pod, {"status"}), "Ready") == "True"; }

bool Role::unused() const {
  return baseline_instances.value_or(0) == 0 && spec_instances.value_or(0) == 0 && pods == 0;
}

bool Report::multi() const { return baseline::runs_deployments(deploy_mode); }

json::object Report::to_json() const {
  json::object report{{"apiVersion", "kubectl-mindie/v1"}, {"kind", "Status"},          {"namespace", ns},
                      {"inferServiceSet", name},           {"deployMode", deploy_mode}, {"found", found},
                      {"baselineUsable", baseline_usable}, {"generation", util::or_null(generation)},
                      {"observedGeneration", util::or_null(observed_generation)}};
  if (multi()) {
    json::array listed;
    for (const auto& d : deployments)
      listed.push_back({{"name", d.name},
                        {"role", d.role},
                        {"index", d.index},
                        {"replicas", d.replicas},
                        {"readyReplicas", d.ready_replicas},
                        {"updatedReplicas", d.updated_replicas},
                        {"generation", d.generation},
                        {"observedGeneration", d.observed_generation}});
    report["deployments"] = std::move(listed);
  }
  json::array services;
  for (const auto& s : infer_services)
    services.push_back({{"name", s.name}, {"index", s.index}, {"ready", s.ready}, {"events", events_json(s.events)}});
  report["inferServices"] = std::move(services);
  report["ready"] = ready;
  json::array roles_out;
  for (const auto& r : roles) {
    json::array instances;
    for (const auto& inst : r.instances) {
      json::array pods;
      for (const auto& p : inst.pods) pods.push_back(pod_json(p));
      json::object o{{"inferService", inst.infer_service},
                     {"index", inst.index},
                     {"healthy", inst.healthy},
                     {"readyPods", inst.ready_pods},
                     {"terminatingPods", inst.terminating_pods},
                     {"pods", std::move(pods)},
                     {"wanted", inst.wanted}};
      json::value rebuild = nullptr;
      if (inst.rebuild)
        rebuild = {{"workloads", inst.rebuild->workloads},
                   {"since", util::utc_text(inst.rebuild->since, "%Y-%m-%dT%H:%M:%SZ")},
                   {"latest", util::utc_text(inst.rebuild->latest, "%Y-%m-%dT%H:%M:%SZ")},
                   {"ongoing", inst.rebuild->ongoing}};
      o["rebuild"] = std::move(rebuild);
      if (multi()) o["deployment"] = util::or_null(inst.deployment);
      else o["templateHash"] = util::or_null(inst.template_hash);
      instances.push_back(std::move(o));
    }
    json::value hpa = nullptr;
    if (r.hpa) hpa = {{"name", r.hpa->name}, {"ready", r.hpa->ready}, {"message", r.hpa->message}};
    roles_out.push_back({{"name", r.name},
                         {"baselineInstances", util::or_null(r.baseline_instances)},
                         {"specInstances", util::or_null(r.spec_instances)},
                         {"observedInstances", util::or_null(r.observed_instances)},
                         {"podsPerInstance", r.pods_per_instance},
                         {"wantedInstances", util::or_null(r.wanted_instances)},
                         {"desiredPods", r.desired_pods},
                         {"readyPods", r.ready_pods},
                         {"pods", r.pods},
                         {"terminatingPods", r.terminating_pods},
                         {"restarts", r.restarts},
                         {"readyInstances", r.ready_instances},
                         {"healthy", r.healthy},
                         {"masterStandby", r.master_standby},
                         {"gang", r.gang},
                         {"replicasOwner", r.hpa_owned ? "HPA" : "spec"},
                         {"hpa", std::move(hpa)},
                         {"templateHash", util::or_null(r.template_hash)},
                         {"instancesOnCurrentTemplate", r.instances_on_current_template},
                         {"instancesOnOtherTemplates", r.instances_on_other_templates},
                         {"otherImages", util::string_array(r.other_images)},
                         {"operatorEvents", events_json(r.operator_events)},
                         {"instanceSetsWithoutStrategy", util::string_array(r.instance_sets_without_strategy)},
                         {"instances", std::move(instances)}});
  }
  report["roles"] = std::move(roles_out);
  json::array services_out;
  for (const ServiceStatus& svc : this->services)  // `services` below is the InferServices' array
    services_out.push_back(
        {{"name", svc.name}, {"type", svc.type}, {"clusterIP", svc.cluster_ip}, {"ports", svc.ports}});
  report["services"] = std::move(services_out);
  report["drift"] = util::string_array(drift);
  report["converging"] = util::string_array(converging);
  report["warnings"] = util::string_array(warnings);
  report["unready"] = util::string_array(unready);
  return report;
}

std::string service_selector(const std::string& name, std::int64_t services) {
  std::string selector = "infer.huawei.com/inferservice-name in (";
  for (std::int64_t i = 0; i < std::max<std::int64_t>(1, services); ++i)
    selector += (i ? "," : "") + name + "-" + std::to_string(i);
  return selector + ")";
}

std::int64_t service_count(const std::optional<json::object>& iss) {
  return iss ? std::clamp<std::int64_t>(num(find(*iss, {"spec", "replicas"}), 1), 1, kMaxServices) : 1;
}

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

json::object slim_workload(const json::object& w, const std::string& kind) {
  json::object metadata;
  for (const char* key : {"name", "uid", "creationTimestamp", "labels"})
    if (const auto* v = find(w, {"metadata", key})) metadata[key] = *v;
  json::object spec;
  if (const auto* v = find(w, {"spec", "replicas"})) spec["replicas"] = *v;
  if (const auto* h = find(w, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}))
    spec["template"] = {{"metadata", {{"annotations", {{render::kTemplateHashAnnotation, *h}}}}}};
  return {{"kind", kind}, {"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
}

std::int64_t desired_pods(const json::object& iss) {
  std::int64_t per_service = 0;
  if (const auto* roles = find(iss, {"spec", "template", "roles"}); roles && roles->is_array())
    for (const auto& r : roles->as_array())
      // Clamped: a hand-edited count must not overflow (only a comparison with the pods listed needs it).
      per_service += std::clamp<std::int64_t>(num(find(&r, {"replicas"}), 0), 0, 1 << 20) *
                     std::clamp<std::int64_t>(num(find(&r, {"spec", "replicas"}), 0), 0, 1 << 20);
  return per_service * service_count(iss);
}

Report build_report(const std::string& ns, const StatusInputs& in, std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::object* iss = in.service_set ? &*in.service_set : nullptr;
  // A broken baseline (hand-edited) must not hide what runs: show the live state with the problem as drift.
  const baseline::Baseline stored = baseline::read_baseline(in.config_map, ns);
  const std::optional<config::UserConfig>& baseline_config = stored.config;
  Report report;
  report.ns = ns;
  report.name = stored.workload_name();
  report.deploy_mode = stored.deploy_mode_if_known();
  report.baseline_usable = baseline_config.has_value();
  const std::string& iss_name = report.name;
  // multi_deployment: no InferServiceSet; the live spec is the set of Deployments (one per instance), grouped by
  // the component and instance-index labels kubectl-mindie puts on them and their pods.
  const bool multi = report.multi();
  report.found = multi ? !in.deployments.empty() : iss != nullptr;
  auto& drift = report.drift;
  // Not a disagreement but work in flight: a controller or the operator has not yet caught up with the spec it was
  // given (found against the real control plane, where that takes a moment after every write). Not ready either.
  auto& converging = report.converging;
  auto& unready = report.unready;
  bool ready = report.found;
  if (!baseline_config) drift.push_back(stored.problem);
  // role -> instance -> its Deployment (multi_deployment).
  std::map<std::string, std::map<std::int64_t, const json::value*>> deployments;
  if (multi) {
    if (!report.found) drift.push_back("no Deployment of " + iss_name + " exists");
    for (const auto& d : in.deployments) {
      const json::value* labels = find(&d, {"metadata", "labels"});
      DeploymentStatus listed;
      listed.role = str(find(labels, {render::kComponentLabel}));
      listed.index = 0;  // controller, coordinator, kv-pool, kv-conductor: one instance
      if (render::is_instance_engine_role(listed.role)) {
        try {
          listed.index = std::stoll(str(find(labels, {render::kInstanceIndexLabel})));
        } catch (const std::exception&) {
          listed.index = -1;
        }
      }
      if (!listed.role.empty()) deployments[listed.role][listed.index] = &d;
      listed.generation = num(find(&d, {"metadata", "generation"}));
      listed.observed_generation = num(find(&d, {"status", "observedGeneration"}));
      listed.replicas = num(find(&d, {"spec", "replicas"}), 1);
      listed.ready_replicas = num(find(&d, {"status", "readyReplicas"}));
      listed.updated_replicas = num(find(&d, {"status", "updatedReplicas"}));
      listed.name = str(find(&d, {"metadata", "name"}));
      if (listed.observed_generation < listed.generation) {
        ready = false;
        converging.push_back("the deployment controller has not observed generation " +
                             std::to_string(listed.generation) + " of deployment " + listed.name + " yet");
      }
      report.deployments.push_back(std::move(listed));
    }
  } else if (iss) {
    const std::int64_t generation = num(find(*iss, {"metadata", "generation"}));
    const std::int64_t observed = num(find(*iss, {"status", "observedGeneration"}));
    report.generation = generation;
    report.observed_generation = observed;
    if (observed != generation) {
      ready = false;
      // No status at all: the operator never acted on it, which usually means it is not running (or not watching
      // this namespace). A refusal comes with its ValidateError events, listed apart.
      const bool never = find(*iss, {"status"}) == nullptr;
      converging.push_back("the operator has not observed generation " + std::to_string(generation) + " yet (" +
                           (never ? "no status at all: is infer-operator running and watching namespace " + ns + "?"
                                  : "status.observedGeneration " + std::to_string(observed)) +
                           ")");
    }
  } else {
    drift.push_back("inferserviceset " + iss_name + " does not exist");
  }
  // multi_deployment has no InferServices: its instances are listed as of one (index 0, name ""), so the role
  // and instance logic below is the same for both modes.
  const std::int64_t services = multi ? 1 : iss ? service_count(in.service_set) : 0;
  if (const std::int64_t asked = iss ? num(find(*iss, {"spec", "replicas"}), 1) : 1; !multi && asked > kMaxServices)
    drift.push_back("inferserviceset " + iss_name + " asks for " + std::to_string(asked) + " InferServices "
                    "(spec.replicas), beyond what kubectl-mindie deploys (1); only the first " +
                    std::to_string(kMaxServices) + " are shown");

  for (std::int64_t i = 0; i < (multi ? 0 : services); ++i) {
    InferService service;
    service.name = iss_name + "-" + std::to_string(i);
    service.index = i;
    for (const auto& s : in.infer_services)
      if (str(find(&s, {"metadata", "name"})) == service.name)
        service.ready = condition_status(find(&s, {"status"}), "Ready") == "True";
    service.events = warning_events(in.events, "InferService", service.name, 3);
    if (!service.ready)
      for (const auto& e : service.events) unready.push_back(operator_event_text("inferservice/" + service.name, e));
    report.infer_services.push_back(std::move(service));
  }

  // role -> (service, instance) -> pods, from the operator's labels.
  std::map<std::string, std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const json::value*>>> grouped;
  for (const auto& pod : in.pods) {
    const json::value* labels = find(&pod, {"metadata", "labels"});
    if (multi) {
      const std::string role = str(find(labels, {render::kComponentLabel}));
      if (role.empty()) continue;
      std::int64_t k = 0;
      if (render::is_instance_engine_role(role)) {
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
  for (const auto& name : render::role_names()) {
    Role role;
    role.name = name;
    const std::int64_t base = desired.count(name) ? desired.at(name) : 0;
    if (baseline_config) role.baseline_instances = base;
    std::int64_t spec = -1;
    std::int64_t pods_per_instance = 0;
    std::size_t index = 0;
    bool hpa = false;
    const json::value* live_role = nullptr;
    if (live_roles) {
      for (std::size_t i = 0; i < live_roles->size(); ++i) {
        const json::value& r = (*live_roles)[i];
        if (str(find(&r, {"name"})) != name) continue;
        spec = num(find(&r, {"replicas"}), 1);
        pods_per_instance = num(find(&r, {"spec", "replicas"}), 1);
        hpa = str(find(&r, {"scalingPolicy", "type"})) == "HPA";
        index = i;
        live_role = &r;
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
      if (n > kMaxInstancesPerRole)
        drift.push_back("role " + name + ": " + std::to_string(n) + " instances wanted, beyond kubectl-mindie's "
                        "limit of " + std::to_string(kMaxInstancesPerRole) + " per role" +
                        (n > kMaxListedInstances ? "; only the first " + std::to_string(kMaxListedInstances) +
                                                       " are shown"
                                                 : std::string()));
    }
    const auto& role_deployments = deployments[name];
    if (multi) {
      // The live spec: which instances have a Deployment, and pods per instance from their replicas.
      spec = static_cast<std::int64_t>(role_deployments.size());
      for (const auto& [k, d] : role_deployments)
        pods_per_instance = std::max(pods_per_instance, num(find(d, {"spec", "replicas"}), 1));
      // Every live Deployment is a wanted instance (there are no InferServices to count per).
      wanted_total = spec;
    }
    if (pods_per_instance > kMaxPodsPerInstance)
      drift.push_back("role " + name + ": " + std::to_string(pods_per_instance) + " pods per instance wanted, beyond "
                      "kubectl-mindie's limit of " + std::to_string(kMaxPodsPerInstance));
    // Only the master of a master/standby pair passes readiness (infer-operator behaviour).
    const bool master_standby = is_control_role(name) && pods_per_instance == 2;
    const std::int64_t needed_ready = master_standby ? 1 : pods_per_instance;

    std::optional<std::int64_t> observed;
    if (multi && !role_deployments.empty()) {
      // Instances whose Deployment the deployment controller has observed in its current generation.
      observed = 0;
      for (const auto& [k, d] : role_deployments)
        if (num(find(d, {"status", "observedGeneration"})) >= num(find(d, {"metadata", "generation"}))) ++*observed;
    }
    for (const auto* s : instance_sets[name]) {
      observed = observed.value_or(0) + num(find(s, {"status", "replicas"}));
      if (const auto* scaling = find(s, {"status", "scalingResourceStatus"}); scaling && scaling->is_object()) {
        const auto* r = find(scaling, {"ready"});
        role.hpa = Hpa{str(find(scaling, {"name"})), r && r->is_bool() && r->as_bool(), str(find(scaling, {"message"}))};
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
    std::vector<std::string> old_workloads;  // "statefulset/NAME" of wanted instances on an earlier template
    // infer-operator decides gang scheduling from the InstanceSet's label, fixed at its creation (rules D3); before
    // the InstanceSet exists, the live role's label is what it will copy.
    bool gang = str(find(live_role, {"metadata", "labels", render::kGangScheduleLabel})) == "true";
    for (const auto* ist : instance_sets[name])
      if (const auto* v = find(ist, {"metadata", "labels", render::kGangScheduleLabel})) gang = str(v) == "true";
    role.gang = gang;
    // InferService -> when this role's InstanceSet in it was made (server time, as the events' times).
    std::map<std::string, std::int64_t> instance_set_created;
    for (const auto* ist : instance_sets[name])
      instance_set_created[str(find(ist, {"metadata", "labels", "infer.huawei.com/inferservice-name"}))] =
          util::parse_rfc3339(str(find(ist, {"metadata", "creationTimestamp"}))).value_or(0);
    // A role absent from the live set is healthy only when the baseline has none of it either (union without
    // PD-hybrid, mf-store without sglang).
    bool role_healthy = multi || spec >= 0 || !iss || base == 0;
    bool operator_missed = false;  // a wanted instance lacks pods: the operator's events may say why
    for (auto& [key, pod_list] : by_instance) {
      const auto [service, k] = key;
      Instance inst;
      inst.index = k;
      inst.infer_service = multi ? std::string() : iss_name + "-" + std::to_string(service);
      inst.wanted = multi ? role_deployments.count(k) > 0
                          : k >= 0 && wanted_of.count(service) && k < wanted_of.at(service);
      // An instance's pods are what its workload asks for: the operator never updates a workload, so one made before
      // a change of pods per instance keeps its count (reported as an earlier template, not as missing pods).
      const auto workload = multi ? workloads[name].end() : workloads[name].find(key);
      const bool has_workload = !multi && workload != workloads[name].end();
      const std::int64_t inst_pods =
          has_workload ? num(find(workload->second, {"spec", "replicas"}), pods_per_instance) : pods_per_instance;
      for (const auto* p : pod_list) {
        if (const auto* cs = find(p, {"spec", "containers"}); cs && cs->is_array() && !spec_images.empty())
          for (const auto& c : cs->as_array()) {
            const auto it = spec_images.find(str(find(&c, {"name"})));
            const std::string image = str(find(&c, {"image"}));
            if (it != spec_images.end() && !image.empty() && image != it->second) other_images.insert(image);
          }
        Pod pod{kube::read_pod_state(*p, now), pod_npus(*p), "", {}};
        pod.reason = pod.state.reason;
        // A pod being deleted is going, whatever its Ready condition still says.
        inst.terminating_pods += pod.state.terminating ? 1 : 0;
        inst.ready_pods += pod.state.ready && !pod.state.terminating ? 1 : 0;
        role.restarts += pod.state.restarts;
        inst.pods.push_back(std::move(pod));
      }
      const std::int64_t inst_needed_ready = master_standby ? needed_ready : inst_pods;
      const auto present = static_cast<std::int64_t>(pod_list.size());
      const std::int64_t staying = present - inst.terminating_pods;
      inst.healthy = inst.wanted && inst.ready_pods >= inst_needed_ready && inst.terminating_pods == 0 &&
                     staying >= (master_standby ? 1 : inst_pods);
      if (gang && inst.wanted) {
        const std::string workload_name = inst.infer_service + "-" + name + "-" + std::to_string(k);
        const json::value* live = has_workload ? workload->second : nullptr;
        const std::string kind = has_workload ? str(find(live, {"kind"})) : str(find(live_role, {"workload", "kind"}));
        // Without its InstanceSet (not made yet, the operator not running) there is nothing to count from.
        const auto created = instance_set_created.find(inst.infer_service);
        if (created != instance_set_created.end())
          inst.rebuild = judge_rebuild(in.workload_events, kind, workload_name, live, created->second,
                                       inst.terminating_pods, now);
        if (inst.rebuild && inst.rebuild->ongoing) {
          inst.healthy = false;
          unready.push_back(rebuild_text(ns, name, k, (kind == "Deployment" ? "deployment/" : "statefulset/") +
                                                          workload_name, *inst.rebuild));
          const std::int64_t quiet_at = inst.rebuild->latest + kRebuildQuietSeconds;
          if (quiet_at > now) report.recheck_at = std::min(report.recheck_at.value_or(quiet_at), quiet_at);
        }
      }
      for (auto& pod : inst.pods) {
        if (pod.state.ready && !pod.state.terminating) continue;
        // A removed instance's pods going away are what a scale-in looks like: its one line below says so.
        if (!inst.wanted && pod.state.terminating) continue;
        // The standby of a healthy pair is not ready by design: not a problem to report.
        if (master_standby && inst.healthy && pod.reason.starts_with("running, but not ready")) {
          pod.reason = "standby (only the master passes readiness)";
          continue;
        }
        pod.events = warning_events(in.events, "Pod", pod.state.name, 3);
        std::string line = "pod " + pod.state.name + " (role " + name + ", instance " + std::to_string(k) + "): " +
                           pod.reason;
        // The latest event says the most; the rest are in the report.
        if (!pod.events.empty()) line += "; event " + pod.events.front().reason + ": " + pod.events.front().message;
        unready.push_back(line);
      }
      if (inst.wanted && staying < inst_pods && !(master_standby && inst.healthy)) {
        operator_missed = true;
        unready.push_back("role " + name + " instance " + std::to_string(k) + ": " + std::to_string(staying) +
                          " of " + std::to_string(inst_pods) + " pods exist" +
                          (inst.terminating_pods ? " (+" + std::to_string(inst.terminating_pods) + " terminating)"
                                                 : std::string()));
      }
      if (!inst.wanted && present > 0) {
        role_healthy = false;
        unready.push_back("role " + name + " instance " + std::to_string(k) + ": " + std::to_string(present) +
                          " pods of a removed instance still exist");
      }
      if (inst.wanted) {
        if (inst.healthy) ++role.ready_instances;
        else role_healthy = false;
      }
      role.ready_pods += inst.ready_pods;
      role.pods += present;
      role.terminating_pods += inst.terminating_pods;
      // multi_deployment: the instance's Deployment (none: pods of a Deployment that is gone).
      if (multi && inst.wanted) inst.deployment = str(find(role_deployments.at(k), {"metadata", "name"}));
      if (!multi) {
        // The template its workload was made from (none: no workload yet, or no hash recorded on it).
        const std::string hash = has_workload ? operator_rules::workload_template_hash(*workload->second) : "";
        if (!hash.empty()) inst.template_hash = hash;
        if (inst.wanted && has_workload && !role_hash.empty()) {
          if (hash == role_hash) {
            ++role.instances_on_current_template;
          } else {
            old_workloads.push_back(operator_rules::workload_ref(*workload->second));
          }
        }
      }
      role.instances.push_back(std::move(inst));
    }
    if (!role_healthy) ready = false;
    // What the operator said about this role's InstanceSets: a refusal (ValidateError), a Service it could not
    // create, ... Shown as the reason when the role is not healthy (old events of a healthy role say nothing now).
    for (std::int64_t sv = 0; sv < (multi ? 0 : services); ++sv) {
      const std::string ist = iss_name + "-" + std::to_string(sv) + "-" + name;
      std::string uid;  // events about an earlier InstanceSet of the same name are not about this one
      for (const auto* s : instance_sets[name])
        if (str(find(s, {"metadata", "name"})) == ist) uid = str(find(s, {"metadata", "uid"}));
      for (auto& e : warning_events(in.events, "InstanceSet", ist, 3, uid)) {
        e.instance_set = ist;
        // They explain what the operator did not create; pods that exist explain themselves.
        if (!role_healthy && operator_missed)
          unready.push_back("role " + name + ": " + operator_event_text("instanceset/" + ist, e));
        role.operator_events.push_back(std::move(e));
      }
    }
    for (const auto* ist : instance_sets[name])
      if (!find(ist, {"metadata", "labels", render::kPrioritySchedulingLabel})) {
        const std::string ist_name = str(find(ist, {"metadata", "name"}));
        role.instance_sets_without_strategy.push_back(ist_name);
        const std::string line =
            "role " + name + ": instanceset/" + ist_name + " has no " + render::kPrioritySchedulingLabel +
            " label (an older infer-operator created it), so a current operator creates no new workloads for it "
            "and scale-out does nothing; add it: kubectl label instancesets." + std::string(kInstanceSetsGroup) +
            " -n " + ns + " " + ist_name + " " + render::kPrioritySchedulingLabel + "=Parallel";
        drift.push_back(line);
        if (!role_healthy) unready.push_back(line);  // why wait never sees the new instances
      }
    if (!old_workloads.empty()) {
      const auto on_other = static_cast<std::int64_t>(old_workloads.size());
      drift.push_back("role " + name + ": " + std::to_string(on_other) + " of " +
                      std::to_string(role.instances_on_current_template + on_other) +
                      " instances run an earlier pod template than spec.template.roles[" + std::to_string(index) +
                      "]: infer-operator never updates an existing instance's workload; " +
                      operator_rules::recreate_advice(ns, name, gang, old_workloads));
    }
    if (!other_images.empty()) {
      std::string images, wanted_images;
      for (const auto& i : other_images) images += (images.empty() ? "" : ", ") + i;
      for (const auto& [c, i] : spec_images) wanted_images += (wanted_images.empty() ? "" : ", ") + i;
      drift.push_back("role " + name + ": pods run image " + images + ", spec.template.roles[" +
                      std::to_string(index) + "] says " + wanted_images);
    }
    if (!baseline_config) {
      // Nothing to compare with; the baseline problem is already reported.
    } else if (iss && spec < 0) {
      if (base > 0) {
        ready = false;
        drift.push_back("role " + name + ": in the baseline but not in the live InferServiceSet");
      }
    } else if (multi && spec != base) {
      if (base > 0 || spec > 0) {
        if (spec < base) ready = false;
        drift.push_back("role " + name + ": baseline " + std::to_string(base) + " instances, " +
                        std::to_string(spec) + " Deployments live");
      }
    } else if (iss && spec != base && !hpa) {
      drift.push_back("role " + name + ": baseline " + std::to_string(base) + " instances, spec.template.roles[" +
                      std::to_string(index) + "].replicas " + std::to_string(spec));
    }
    if (!multi && observed && spec >= 0 && *observed != spec * services && !hpa) {
      ready = false;
      converging.push_back("role " + name + ": spec asks for " + std::to_string(spec * services) +
                           " instances, the operator's InstanceSets report " + std::to_string(*observed));
    }
    if (spec >= 0) {
      role.spec_instances = spec;
      role.wanted_instances = wanted_total;
      role.desired_pods = wanted_total * pods_per_instance;
    }
    role.observed_instances = observed;
    role.pods_per_instance = pods_per_instance;
    role.healthy = role_healthy;
    role.master_standby = master_standby;
    role.hpa_owned = hpa;
    if (!role_hash.empty()) role.template_hash = role_hash;
    role.instances_on_other_templates = static_cast<std::int64_t>(old_workloads.size());
    role.other_images.assign(other_images.begin(), other_images.end());
    report.roles.push_back(std::move(role));
  }
  if (!multi && !operator_agrees(report.infer_services, in.infer_services, in.instance_sets, report.roles, unready))
    ready = false;
  report.ready = ready;
  if (!in.workloads_unknown.empty()) report.warnings.push_back(in.workloads_unknown);
  if (!in.workload_events_unknown.empty()) report.warnings.push_back(in.workload_events_unknown);
  for (const auto& svc : in.services) {
    if (!svc.is_object()) continue;
    const json::value* spec = find(&svc, {"spec"});
    ServiceStatus row;
    row.cluster_ip = str(find(spec, {"clusterIP"}));
    if (row.cluster_ip == "None") continue;
    row.name = str(find(&svc, {"metadata", "name"}));
    row.type = str(find(spec, {"type"}));
    if (row.type.empty()) row.type = "ClusterIP";
    if (const auto* ports = find(spec, {"ports"}); ports && ports->is_array())
      for (const auto& p : ports->as_array()) {
        json::object port{{"name", str(find(&p, {"name"}))}, {"port", num(find(&p, {"port"}))}};
        if (const auto n = num(find(&p, {"nodePort"})); n > 0) port["nodePort"] = n;
        const std::string protocol = str(find(&p, {"protocol"}));
        port["protocol"] = protocol.empty() ? "TCP" : protocol;
        row.ports.push_back(std::move(port));
      }
    report.services.push_back(std::move(row));
  }
  std::sort(report.services.begin(), report.services.end(),
            [](const ServiceStatus& a, const ServiceStatus& b) { return a.name < b.name; });
  if (!in.services_unknown.empty()) report.warnings.push_back(in.services_unknown);
  return report;
}
}  // namespace mindie::status
