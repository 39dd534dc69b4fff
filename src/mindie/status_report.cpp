// The status report's shared readers, its JSON form, and build_report putting the parts (status_*.cpp) together.
#include "mindie/status_report.h"

#include <algorithm>

#include "mindie/baseline.h"
#include "mindie/render.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::status {

namespace json = boost::json;

namespace detail {

using util::find;
using util::num;
using util::str;

const json::value* find(const json::object& obj, std::initializer_list<std::string_view> path) {
  if (path.size() == 0) return nullptr;
  const json::value* v = obj.if_contains(*path.begin());
  for (auto key = path.begin() + 1; key != path.end(); ++key) {
    if (!v || !v->is_object()) return nullptr;
    v = v->as_object().if_contains(*key);
  }
  return v;
}

namespace {

/// The condition of `type` in status.conditions of `status` (an object's status), nullptr when there is none.
const json::value* condition_of(const json::value* status, std::string_view type) {
  if (const auto* conds = find(status, {"conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == type) return &c;
  }
  return nullptr;
}

}  // namespace

std::string condition_status(const json::value* status, std::string_view type) {
  return str(find(condition_of(status, type), {"status"}));
}

std::pair<std::string, std::string> ready_condition(const json::value& obj) {
  const json::value* c = condition_of(find(&obj, {"status"}), "Ready");
  if (c == nullptr) return {"", ""};
  return {str(find(c, {"status"})), str(find(c, {"reason"})) + ": " + str(find(c, {"message"}))};
}

/// The time of an event: `field` (firstTimestamp or lastTimestamp), else eventTime, else its creation; 0 when none
/// is readable.
std::int64_t event_time(const json::value& e, std::string_view field) {
  std::string when = str(find(&e, {field}));
  if (when.empty()) when = str(find(&e, {"eventTime"}));
  if (when.empty()) when = str(find(&e, {"metadata", "creationTimestamp"}));
  return util::parse_rfc3339(when).value_or(0);
}

/// Warning events about the object of `kind` named `name` (and, when `uid` is given, that uid), newest first, at
/// most `limit` (the latest say the most).
std::vector<Event> warning_events(const json::array& events, std::string_view kind, const std::string& name,
                                  std::size_t limit, const std::string& uid) {
  std::vector<std::pair<std::int64_t, const json::value*>> found;
  for (const auto& e : events) {
    if (str(find(&e, {"involvedObject", "kind"})) != kind || str(find(&e, {"involvedObject", "name"})) != name)
      continue;
    // An event about an earlier object of the same name (deleted and made again) says nothing about this one.
    if (const std::string about = str(find(&e, {"involvedObject", "uid"}));
        !uid.empty() && !about.empty() && about != uid)
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
/// The reasons are the operator's (Ascend/mind-cluster infer-operator, instanceset_controller.go validate and
/// checkOrCreateService).
std::string operator_event_text(const std::string& object, const Event& event) {
  std::string what;
  if (event.reason == "ValidateError") what = "infer-operator refuses " + object + " and creates nothing for it";
  else if (event.reason == "ServiceCreateError")
    what = "infer-operator could not create a Service of " + object + ", so it creates none of its workloads";
  else what = "infer-operator reports a problem with " + object;
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

}  // namespace detail

namespace {

using detail::condition_status;
using detail::find;
using util::find;
using util::num;
using util::str;

json::object event_json(const Event& e) {
  json::object o{
      {"reason", e.reason}, {"message", e.message}, {"count", e.count}, {"lastSeen", util::or_null(e.last_seen)}};
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

json::object instance_json(const Instance& inst, bool multi) {
  json::array pods;
  for (const auto& p : inst.pods) pods.push_back(pod_json(p));
  json::object o{{"inferService", inst.infer_service},
                 {"index", inst.index},
                 {"healthy", inst.healthy},
                 {"current", inst.current ? json::value(*inst.current) : json::value(nullptr)},
                 {"rollout", inst.rollout},
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
  o["templateHash"] = util::or_null(inst.template_hash);
  if (multi) o["deployment"] = util::or_null(inst.deployment);
  return o;
}

json::object role_json(const Role& r, bool multi) {
  json::array instances;
  for (const auto& inst : r.instances) instances.push_back(instance_json(inst, multi));
  json::value hpa = nullptr;
  if (r.hpa) hpa = {{"name", r.hpa->name}, {"ready", r.hpa->ready}, {"message", r.hpa->message}};
  return {{"name", r.name},
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
          {"rolloutUnschedulable", util::string_array(r.rollout_unschedulable)},
          {"otherImages", util::string_array(r.other_images)},
          {"operatorEvents", events_json(r.operator_events)},
          {"instanceSetsWithoutStrategy", util::string_array(r.instance_sets_without_strategy)},
          {"instances", std::move(instances)}};
}

}  // namespace

bool pod_ready(const json::value& pod) { return condition_status(find(&pod, {"status"}), "Ready") == "True"; }

bool Role::unused() const {
  return baseline_instances.value_or(0) == 0 && spec_instances.value_or(0) == 0 && pods == 0;
}

bool Report::multi() const { return baseline::runs_deployments(deploy_mode); }

json::object Report::to_json() const {
  json::object report{{"apiVersion", "kubectl-mindie/v1"},
                      {"kind", "Status"},
                      {"namespace", ns},
                      {"inferServiceSet", name},
                      {"deployMode", deploy_mode},
                      {"found", found},
                      {"baselineUsable", baseline_usable},
                      {"generation", util::or_null(generation)},
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
                        {"oldReplicas", d.old_replicas},
                        {"generation", d.generation},
                        {"observedGeneration", d.observed_generation},
                        {"rollout", d.rollout}});
    report["deployments"] = std::move(listed);
  }
  json::array services;
  for (const auto& s : infer_services)
    services.push_back({{"name", s.name}, {"index", s.index}, {"ready", s.ready}, {"events", events_json(s.events)}});
  report["inferServices"] = std::move(services);
  report["ready"] = ready;
  json::array roles_out;
  for (const auto& r : roles) roles_out.push_back(role_json(r, multi()));
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
  for (const char* key : {"name", "uid", "generation", "creationTimestamp", "labels"})
    if (const auto* v = find(w, {"metadata", key})) metadata[key] = *v;
  json::object spec;
  if (const auto* v = find(w, {"spec", "replicas"})) spec["replicas"] = *v;
  if (const auto* h = find(w, {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}))
    spec["template"] = {{"metadata", {{"annotations", {{render::kTemplateHashAnnotation, *h}}}}}};
  json::object status;  // what rollout::pending reads
  for (const char* key :
       {"observedGeneration", "replicas", "updatedReplicas", "currentRevision", "updateRevision", "conditions"})
    if (const auto* v = find(w, {"status", key})) status[key] = *v;
  return {{"kind", kind}, {"metadata", std::move(metadata)}, {"spec", std::move(spec)}, {"status", std::move(status)}};
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

namespace {

/// The role's numbers as the report shows them, once its instances are judged.
void fill_role(const detail::LiveRole& lr, const detail::RoleTally& tally, Role& role) {
  if (lr.spec >= 0) {
    role.spec_instances = lr.spec;
    role.wanted_instances = lr.wanted_total;
    role.desired_pods = lr.wanted_total * lr.pods_per_instance;
  }
  role.observed_instances = lr.observed;
  role.pods_per_instance = lr.pods_per_instance;
  role.healthy = tally.healthy;
  role.master_standby = lr.master_standby;
  role.hpa_owned = lr.hpa;
  if (!lr.hash.empty()) role.template_hash = lr.hash;
  role.other_images.assign(tally.other_images.begin(), tally.other_images.end());
}

/// Judges every role of render::role_names() into report.roles: its live spec, instances, drift.
void judge_roles(const detail::Context& ctx, const std::optional<config::UserConfig>& baseline_config) {
  detail::Grouped grouped = detail::group_inputs(ctx);
  const auto desired = baseline_config ? render::desired_role_replicas(*baseline_config) : std::map<std::string, int>{};
  const json::array* live_roles = nullptr;
  if (ctx.in.service_set)
    if (const auto* r = find(*ctx.in.service_set, {"spec", "template", "roles"}); r && r->is_array())
      live_roles = &r->as_array();
  for (const auto& name : render::role_names()) {
    Role role;
    role.name = name;
    const std::int64_t base = desired.count(name) ? desired.at(name) : 0;
    if (baseline_config) role.baseline_instances = base;
    detail::LiveRole lr = detail::read_live_role(ctx, grouped, name, base, live_roles, role);
    const detail::RoleTally tally = detail::judge_instances(ctx, grouped, lr, role);
    if (!tally.healthy) ctx.ready = false;
    detail::judge_instance_sets(ctx, grouped, lr, tally, role);
    detail::current_lines(ctx, lr, tally, role);
    detail::judge_role_drift(ctx, lr, tally, baseline_config.has_value());
    fill_role(lr, tally, role);
    ctx.report.roles.push_back(std::move(role));
  }
}

}  // namespace

Report build_report(const std::string& ns, const StatusInputs& in, std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::object* iss = in.service_set ? &*in.service_set : nullptr;
  // A broken baseline (hand-edited) must not hide what runs: show the live state with the problem as drift.
  const baseline::Baseline stored = baseline::read_baseline(in.config_map, ns);
  Report report;
  report.ns = ns;
  report.name = stored.workload_name();
  report.deploy_mode = stored.deploy_mode_if_known();
  report.baseline_usable = stored.config.has_value();
  // multi_deployment: no InferServiceSet; the live spec is the set of Deployments (one per instance), grouped by
  // the component and instance-index labels kubectl-mindie puts on them and their pods.
  const bool multi = report.multi();
  report.found = multi ? !in.deployments.empty() : iss != nullptr;
  // Not ready either while work is in flight (report.converging): a controller or the operator has not yet caught
  // up with the spec it was given (found against the real control plane, where that takes a moment after every
  // write).
  bool ready = report.found;
  if (!stored.config) report.drift.push_back(stored.problem);
  // multi_deployment has no InferServices: its instances are listed as of one (index 0, name ""), so the role
  // and instance logic is the same for both modes.
  const std::int64_t services = multi ? 1 : iss ? service_count(in.service_set) : 0;
  const detail::Context ctx{ns, in, report.name, multi, now, services, report, ready};
  detail::judge_live_object(ctx, iss);
  detail::list_infer_services(ctx);
  judge_roles(ctx, stored.config);
  detail::final_verdict(ctx);
  report.services = detail::list_services(in.services);
  if (!in.services_unknown.empty()) report.warnings.push_back(in.services_unknown);
  return report;
}

}  // namespace mindie::status
