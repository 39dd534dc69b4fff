#include "aibrix/storm_status.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "aibrix/storm_render.h"
#include "util/json_path.h"
#include "util/table.h"
#include "util/time.h"

namespace mindie::aibrix {

namespace json = boost::json;

namespace {

using util::find;
using util::num;
using util::str;

}  // namespace

json::object StormStatus::to_json() const {
  json::array roles_out;
  for (const auto& r : roles) {
    json::array groups_out;
    for (const auto& g : r.groups) {
      json::array pods_out;
      for (const auto& p : g.pods)
        pods_out.push_back({{"name", p.state.name},
                            {"podGroupIndex", util::or_null(p.pod_group_index)},
                            {"phase", p.state.phase},
                            {"status", p.state.status},
                            {"ready", p.ready},
                            {"restarts", p.state.restarts},
                            {"createdAt", p.state.created_at},
                            {"ageSeconds", util::or_null(p.state.age_seconds)},
                            {"node", p.state.node},
                            {"reason", p.state.reason},
                            {"recreated", p.earlier_pods > 0},
                            {"recreatedAfterTemplateChange", p.after_template_change},
                            {"earlierPods", p.earlier_pods},
                            {"lastEvent", util::or_null(p.last_event)}});
      groups_out.push_back({{"replica", g.replica}, {"ready", g.ready}, {"pods", std::move(pods_out)}});
    }
    roles_out.push_back({{"name", r.name},
                         {"replicas", r.replicas},
                         {"podGroupSize", r.pod_group_size},
                         {"minAvailable", util::or_null(r.min_available)},
                         {"statusReplicas", util::or_null(r.status_replicas)},
                         {"statusReadyReplicas", util::or_null(r.status_ready_replicas)},
                         {"readyReplicas", r.ready_replicas},
                         {"desiredPods", r.replicas * r.pod_group_size},
                         {"pods", r.pods},
                         {"readyPods", r.ready_pods},
                         {"restarts", r.restarts},
                         {"recreatedPods", r.recreated_pods},
                         {"groups", std::move(groups_out)}});
  }
  return {{"apiVersion", "kubectl-mindie/v1"},
          {"kind", "StormServiceStatus"},
          {"namespace", ns},
          {"stormService", name},
          {"generation", generation},
          {"observedGeneration", util::or_null(observed_generation)},
          {"ready", ready},
          {"roles", std::move(roles_out)},
          {"services",
           {{"expected", util::string_array(expected_services)},
            {"missing", util::string_array(missing_services)},
            {"extra", util::string_array(extra_services)}}},
          {"rescheduling", util::string_array(rescheduling)},
          {"unready", util::string_array(unready)}};
}

namespace {

/// What the pod events say about the live pods (by name): earlier pods of the name (uids other than the live one)
/// and the latest event about them, and the latest warning about the live pod.
struct PodEvidence {
  std::map<std::string, std::set<std::string>> earlier;                       ///< pod name -> earlier uids
  std::map<std::string, std::pair<std::int64_t, std::string>> earlier_event;  ///< pod name -> (time, text)
  std::map<std::string, std::pair<std::int64_t, std::string>> warning;        ///< live pod -> latest warning
  std::optional<TemplateChange> template_change;                              ///< the latest scale recorded
};

/// Earlier pods per name, from events about a pod of that name with another uid than the live one.
PodEvidence read_evidence(const StormStatusInputs& inputs) {
  PodEvidence ev;
  ev.template_change = read_template_change(inputs.storm_service);
  std::map<std::string, std::string> live_uid;
  for (const auto& p : inputs.pods) live_uid[str(find(&p, {"metadata", "name"}))] = str(find(&p, {"metadata", "uid"}));
  for (const auto& e : inputs.events) {
    if (str(find(&e, {"involvedObject", "kind"})) != "Pod") continue;
    const std::string name = str(find(&e, {"involvedObject", "name"})), uid = str(find(&e, {"involvedObject", "uid"}));
    const auto live = live_uid.find(name);
    if (live == live_uid.end()) continue;
    std::string when = str(find(&e, {"lastTimestamp"}));
    if (when.empty()) when = str(find(&e, {"eventTime"}));
    const std::int64_t t = util::parse_rfc3339(when).value_or(0);
    const std::string source = str(find(&e, {"source", "component"})).empty() ? str(find(&e, {"reportingComponent"}))
                                                                              : str(find(&e, {"source", "component"}));
    const std::string text = (source.empty() ? "" : source + " ") + str(find(&e, {"reason"})) + ": " +
                             str(find(&e, {"message"}));
    if (!uid.empty() && uid != live->second) {
      ev.earlier[name].insert(uid);
      if (t >= ev.earlier_event[name].first) ev.earlier_event[name] = {t, text};
    } else if (str(find(&e, {"type"})) == "Warning" && t >= ev.warning[name].first) {
      ev.warning[name] = {t, text};
    }
  }
  return ev;
}

/// Role `name`'s pods by replica, by AIBrix's labels (-1: unreadable index), every wanted replica listed, each
/// replica's pods by pod-group-index, then name.
std::map<std::int64_t, std::vector<const json::value*>> pods_by_replica(const json::array& pods,
                                                                        const std::string& name,
                                                                        std::int64_t replicas) {
  std::map<std::int64_t, std::vector<const json::value*>> by_replica;
  for (const auto& p : pods) {
    const json::value* labels = find(&p, {"metadata", "labels"});
    if (str(find(labels, {kRoleNameLabel})) != name) continue;
    const std::string idx = str(find(labels, {kRoleReplicaIndexLabel}));
    std::int64_t r = -1;
    if (!idx.empty() && idx.size() < 6 && std::all_of(idx.begin(), idx.end(), ::isdigit)) r = std::stoll(idx);
    by_replica[r].push_back(&p);
  }
  for (std::int64_t r = 0; r < replicas; ++r) by_replica[r];  // every wanted replica is listed
  for (auto& [r, members] : by_replica)
    std::sort(members.begin(), members.end(), [](const json::value* a, const json::value* b) {
      const std::string ga = str(find(a, {"metadata", "labels", kPodGroupIndexLabel}));
      const std::string gb = str(find(b, {"metadata", "labels", kPodGroupIndexLabel}));
      if (ga.size() != gb.size()) return ga.size() < gb.size();
      return ga != gb ? ga < gb : str(find(a, {"metadata", "name"})) < str(find(b, {"metadata", "name"}));
    });
  return by_replica;
}

/// Pod `p` of replica `r` of `role`: its state and evidence, its rescheduling and unready lines into `report`, its
/// counts into `role`.
StormPod read_storm_pod(const json::value& p, std::int64_t now, std::int64_t r, const PodEvidence& ev, StormRole& role,
                        StormStatus& report) {
  StormPod pod;
  pod.state = kube::read_pod_state(p, now);
  // A pod being deleted counts as gone: its replica is not ready.
  pod.ready = pod.state.ready && !pod.state.terminating;
  const std::string& pod_name = pod.state.name;
  const std::string gidx = str(find(&p, {"metadata", "labels", kPodGroupIndexLabel}));
  if (!gidx.empty() && gidx.size() < 10 && std::all_of(gidx.begin(), gidx.end(), ::isdigit))
    pod.pod_group_index = std::stoll(gidx);
  const std::string where = "pod " + pod_name + " (role " + role.name + ", replica " + std::to_string(r) +
                            (gidx.empty() ? "" : ", pod " + gidx) + ")";
  const auto e = ev.earlier.find(pod_name);
  pod.earlier_pods = e == ev.earlier.end() ? 0 : static_cast<std::int64_t>(e->second.size());
  if (pod.earlier_pods) {
    ++role.recreated_pods;
    // Made since its role's template changed: AIBrix replaced the earlier pod for it (issue 33's words).
    const auto& change = ev.template_change;
    pod.after_template_change =
        change && std::find(change->roles.begin(), change->roles.end(), role.name) != change->roles.end() &&
        util::parse_rfc3339(pod.state.created_at).value_or(0) >= change->at;
    const std::string& last = ev.earlier_event.at(pod_name).second;
    report.rescheduling.push_back(
        where + (pod.after_template_change ? ": recreated after a template change: " : ": recreated: ") +
        std::to_string(pod.earlier_pods) + " earlier pod" + (pod.earlier_pods > 1 ? "s" : "") + " of this name (" +
        last + ")");
    pod.last_event = last;
  } else if (const auto w = ev.warning.find(pod_name); w != ev.warning.end()) {
    pod.last_event = w->second.second;
  }
  if (pod.state.restarts)
    report.rescheduling.push_back(where + ": " + std::to_string(pod.state.restarts) + " restarts" +
                                  (pod.state.last_exit().empty() ? "" : ", last exit " + pod.state.last_exit()));
  if (!pod.ready) {
    std::string line = where + ": " + pod.state.reason;
    if (auto w = ev.warning.find(pod_name); w != ev.warning.end()) line += " [" + w->second.second + "]";
    report.unready.push_back(line);
  }
  ++role.pods;
  role.ready_pods += pod.ready;
  role.restarts += pod.state.restarts;
  return pod;
}

/// Replica `r` of `role` with pods `members`: ready when wanted with podGroupSize pods, all ready; the unready line
/// of a replica short of pods or beyond the spec (which also clears `ready`).
StormGroup judge_group(std::int64_t r, const std::vector<const json::value*>& members, std::int64_t now,
                       const PodEvidence& ev, StormRole& role, StormStatus& report, bool& ready) {
  const std::int64_t replicas = role.replicas, group = role.pod_group_size;
  StormGroup g;
  g.replica = r;
  std::int64_t group_ready = 0;
  for (const json::value* p : members) {
    g.pods.push_back(read_storm_pod(*p, now, r, ev, role, report));
    group_ready += g.pods.back().ready;
  }
  const bool wanted = r >= 0 && r < replicas;
  g.ready = wanted && static_cast<std::int64_t>(members.size()) == group && group_ready == group;
  role.ready_replicas += g.ready;
  const std::string prefix = "role " + role.name + " replica " + std::to_string(r) + ": ";
  if (!wanted && !members.empty()) {
    ready = false;
    report.unready.push_back(prefix + std::to_string(members.size()) + " pod(s) beyond the spec's " +
                             std::to_string(replicas) + " replicas (being removed)");
  } else if (wanted && static_cast<std::int64_t>(members.size()) != group) {
    report.unready.push_back(prefix + std::to_string(members.size()) + " of " + std::to_string(group) + " pods");
  }
  return g;
}

/// The role of spec `role_spec`, its replicas judged, the controller's roleStatuses entry (`status`, may be null).
StormRole judge_role(const json::value& role_spec, const json::value* status, const StormStatusInputs& inputs,
                     std::int64_t now, const PodEvidence& ev, StormStatus& report, bool& ready) {
  StormRole role;
  role.name = str(find(&role_spec, {"name"}));
  role.replicas = num(find(&role_spec, {"replicas"}), 1);
  role.pod_group_size = std::max<std::int64_t>(1, num(find(&role_spec, {"podGroupSize"}), 1));
  if (const std::string m =
          str(find(&role_spec, {"template", "metadata", "annotations", mindcluster::kMinAvailableAnnotation}));
      !m.empty())
    role.min_available = m;
  for (const auto& [r, members] : pods_by_replica(inputs.pods, role.name, role.replicas))
    role.groups.push_back(judge_group(r, members, now, ev, role, report, ready));
  if (role.ready_replicas != role.replicas) ready = false;
  if (status) {
    role.status_replicas = num(find(status, {"replicas"}));
    role.status_ready_replicas = num(find(status, {"readyReplicas"}));
  }
  return role;
}

/// Services: what render_services wants for the live object against what exists.
void judge_services(const StormStatusInputs& inputs, StormStatus& report) {
  std::set<std::string> present, wanted;
  for (const auto& s : inputs.services) present.insert(str(find(&s, {"metadata", "name"})));
  try {
    for (const auto& s : render_services(inputs.storm_service)) wanted.insert(str(find(&s.at("metadata"), {"name"})));
  } catch (const std::invalid_argument&) {  // a StormService not shaped as rendered: no Services expected
  }
  for (const auto& n : wanted) {
    report.expected_services.push_back(n);
    if (!present.count(n)) report.missing_services.push_back(n);
  }
  for (const auto& n : present)
    if (!wanted.count(n)) report.extra_services.push_back(n);
}

}  // namespace

StormStatus build_storm_status(const std::string& ns, const StormStatusInputs& inputs,
                               std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::value ssv = inputs.storm_service;
  StormStatus report;
  report.ns = ns;
  report.name = str(find(&ssv, {"metadata", "name"}));
  report.generation = num(find(&ssv, {"metadata", "generation"}), 1);
  if (const json::value* observed = find(&ssv, {"status", "observedGeneration"}))
    report.observed_generation = num(observed);
  bool ready = report.observed_generation && *report.observed_generation >= report.generation;
  const PodEvidence ev = read_evidence(inputs);
  std::map<std::string, const json::value*> role_status;
  if (const auto* rs = find(&ssv, {"status", "roleStatuses"}); rs && rs->is_array())
    for (const auto& r : rs->as_array()) role_status[str(find(&r, {"name"}))] = &r;
  std::set<std::string> role_names;
  if (const json::value* roles = find(&ssv, {"spec", "template", "spec", "roles"}); roles && roles->is_array())
    for (const auto& role_spec : roles->as_array()) {
      const std::string name = str(find(&role_spec, {"name"}));
      role_names.insert(name);
      const auto st = role_status.find(name);
      report.roles.push_back(
          judge_role(role_spec, st == role_status.end() ? nullptr : st->second, inputs, now, ev, report, ready));
    }
  // Pods of a role the spec no longer has.
  for (const auto& p : inputs.pods) {
    const std::string role = str(find(&p, {"metadata", "labels", kRoleNameLabel}));
    if (!role_names.count(role)) {
      ready = false;
      report.unready.push_back("pod " + str(find(&p, {"metadata", "name"})) + " of role " + role +
                               ", which the spec no longer has");
    }
  }
  judge_services(inputs, report);
  report.ready = ready;
  return report;
}

std::string render_storm_status(const StormStatus& report, bool wide) {
  std::ostringstream out;
  const auto n = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  out << "StormService " << report.name << " in namespace " << report.ns << ": "
      << (report.ready ? "ready" : "not ready") << " (generation " << report.generation << ", observed "
      << n(report.observed_generation) << ")\n\n";
  util::Table roles(
      {{"ROLE"}, {"REPLICAS"}, {"READY"}, {"GROUPSIZE"}, {"PODS"}, {"RESTARTS"}, {"RECREATED"}, {"MINAVAILABLE"}},
      wide);
  for (const auto& r : report.roles)
    roles.add({r.name, std::to_string(r.replicas), std::to_string(r.ready_replicas), std::to_string(r.pod_group_size),
               std::to_string(r.ready_pods) + "/" + std::to_string(r.replicas * r.pod_group_size),
               std::to_string(r.restarts), std::to_string(r.recreated_pods), r.min_available.value_or("-")});
  out << roles.str() << '\n';
  // role -> replica (pod group) -> pods, pod cells aligned as kubectl get pods draws them (`wide`: NODE too).
  util::Table tree({{""}, {"READY"}, {"STATUS"}, {"RESTARTS"}, {"AGE"}, {"RECREATED"}, {"NODE", true}}, wide);
  for (const auto& r : report.roles) {
    tree.add({"role " + r.name});
    for (const auto& g : r.groups) {
      tree.add({"  replica " + std::to_string(g.replica) + (g.ready ? "  ready" : "  not ready")});
      for (const auto& p : g.pods)
        tree.add({"    " + p.state.name,
                  std::to_string(p.state.ready_containers) + "/" + std::to_string(p.state.containers), p.state.status,
                  std::to_string(p.state.restarts),
                  p.state.age_seconds ? util::human_duration(*p.state.age_seconds) : std::string("-"),
                  std::to_string(p.earlier_pods), p.state.node.empty() ? "<none>" : p.state.node});
    }
  }
  out << tree.str();
  out << "\nServices: " << report.expected_services.size() << " expected";
  for (const auto& [label, list] :
       {std::pair{"missing", &report.missing_services}, std::pair{"extra", &report.extra_services}}) {
    if (list->empty()) continue;
    out << ", " << label << ":";
    for (const auto& v : *list) out << ' ' << v;
  }
  out << '\n';
  for (const auto& line : report.rescheduling) out << "rescheduling: " << line << '\n';
  for (const auto& line : report.unready) out << "not ready: " << line << '\n';
  return out.str();
}

std::string storm_progress_line(const StormStatus& report) {
  std::string line = "waiting for " + report.name + ":";
  for (const auto& r : report.roles)
    line += " " + r.name + " " + std::to_string(r.ready_replicas) + "/" + std::to_string(r.replicas);
  return line;
}

}  // namespace mindie::aibrix
