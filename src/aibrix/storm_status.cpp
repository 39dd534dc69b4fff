#include "aibrix/storm_status.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "aibrix/storm_render.h"
#include "util/json_path.h"
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

StormStatus build_storm_status(const std::string& ns, const StormStatusInputs& inputs,
                               std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::value ssv = inputs.storm_service;
  StormStatus report;
  report.ns = ns;
  report.name = str(find(&ssv, {"metadata", "name"}));
  report.generation = num(find(&ssv, {"metadata", "generation"}), 1);
  if (const json::value* observed = find(&ssv, {"status", "observedGeneration"})) report.observed_generation = num(observed);
  bool ready = report.observed_generation && *report.observed_generation >= report.generation;

  // Earlier pods per name, from events about a pod of that name with another uid than the live one.
  std::map<std::string, std::string> live_uid;
  for (const auto& p : inputs.pods) live_uid[str(find(&p, {"metadata", "name"}))] = str(find(&p, {"metadata", "uid"}));
  std::map<std::string, std::set<std::string>> earlier;     // pod name -> earlier uids
  std::map<std::string, std::pair<std::int64_t, std::string>> earlier_event;  // pod name -> (time, text)
  std::map<std::string, std::pair<std::int64_t, std::string>> warning;        // live pod -> latest warning
  for (const auto& e : inputs.events) {
    if (str(find(&e, {"involvedObject", "kind"})) != "Pod") continue;
    const std::string name = str(find(&e, {"involvedObject", "name"})), uid = str(find(&e, {"involvedObject", "uid"}));
    const auto live = live_uid.find(name);
    if (live == live_uid.end()) continue;
    std::string when = str(find(&e, {"lastTimestamp"}));
    if (when.empty()) when = str(find(&e, {"eventTime"}));
    const std::int64_t t = util::parse_rfc3339(when).value_or(0);
    const std::string source = str(find(&e, {"source", "component"})).empty()
                                   ? str(find(&e, {"reportingComponent"}))
                                   : str(find(&e, {"source", "component"}));
    const std::string text = (source.empty() ? "" : source + " ") + str(find(&e, {"reason"})) + ": " +
                             str(find(&e, {"message"}));
    if (!uid.empty() && uid != live->second) {
      earlier[name].insert(uid);
      if (t >= earlier_event[name].first) earlier_event[name] = {t, text};
    } else if (str(find(&e, {"type"})) == "Warning" && t >= warning[name].first) {
      warning[name] = {t, text};
    }
  }

  auto& unready = report.unready;
  const json::value* roles = find(&ssv, {"spec", "template", "spec", "roles"});
  std::map<std::string, const json::value*> role_status;
  if (const auto* rs = find(&ssv, {"status", "roleStatuses"}); rs && rs->is_array())
    for (const auto& r : rs->as_array()) role_status[str(find(&r, {"name"}))] = &r;
  std::set<std::string> role_names;
  if (roles && roles->is_array()) {
    for (const auto& role_spec : roles->as_array()) {
      StormRole role;
      role.name = str(find(&role_spec, {"name"}));
      const std::string& name = role.name;
      role_names.insert(name);
      role.replicas = num(find(&role_spec, {"replicas"}), 1);
      role.pod_group_size = std::max<std::int64_t>(1, num(find(&role_spec, {"podGroupSize"}), 1));
      const std::int64_t replicas = role.replicas, group = role.pod_group_size;
      if (const std::string m = str(find(&role_spec, {"template", "metadata", "annotations", mindcluster::kMinAvailableAnnotation}));
          !m.empty())
        role.min_available = m;
      // replica -> pods, by AIBrix's labels.
      std::map<std::int64_t, std::vector<const json::value*>> by_replica;
      for (const auto& p : inputs.pods) {
        const json::value* labels = find(&p, {"metadata", "labels"});
        if (str(find(labels, {kRoleNameLabel})) != name) continue;
        const std::string idx = str(find(labels, {kRoleReplicaIndexLabel}));
        std::int64_t r = -1;
        if (!idx.empty() && idx.size() < 6 && std::all_of(idx.begin(), idx.end(), ::isdigit)) r = std::stoll(idx);
        by_replica[r].push_back(&p);
      }
      for (std::int64_t r = 0; r < replicas; ++r) by_replica[r];  // every wanted replica is listed
      for (auto& [r, members] : by_replica) {
        std::sort(members.begin(), members.end(), [](const json::value* a, const json::value* b) {
          const std::string ga = str(find(a, {"metadata", "labels", kPodGroupIndexLabel}));
          const std::string gb = str(find(b, {"metadata", "labels", kPodGroupIndexLabel}));
          if (ga.size() != gb.size()) return ga.size() < gb.size();
          return ga != gb ? ga < gb : str(find(a, {"metadata", "name"})) < str(find(b, {"metadata", "name"}));
        });
        StormGroup g;
        g.replica = r;
        std::int64_t group_ready = 0;
        for (const json::value* p : members) {
          StormPod pod;
          pod.state = kube::read_pod_state(*p, now);
          // A pod being deleted counts as gone: its replica is not ready.
          pod.ready = pod.state.ready && !pod.state.terminating;
          const std::string& pod_name = pod.state.name;
          const std::string gidx = str(find(p, {"metadata", "labels", kPodGroupIndexLabel}));
          if (!gidx.empty() && gidx.size() < 10 && std::all_of(gidx.begin(), gidx.end(), ::isdigit))
            pod.pod_group_index = std::stoll(gidx);
          const std::string where = "pod " + pod_name + " (role " + name + ", replica " + std::to_string(r) +
                                    (gidx.empty() ? "" : ", pod " + gidx) + ")";
          const auto e = earlier.find(pod_name);
          pod.earlier_pods = e == earlier.end() ? 0 : static_cast<std::int64_t>(e->second.size());
          if (pod.earlier_pods) {
            ++role.recreated_pods;
            report.rescheduling.push_back(where + ": recreated: " + std::to_string(pod.earlier_pods) + " earlier pod" +
                                          (pod.earlier_pods > 1 ? "s" : "") + " of this name (" +
                                          earlier_event[pod_name].second + ")");
            pod.last_event = earlier_event[pod_name].second;
          } else if (const auto w = warning.find(pod_name); w != warning.end()) {
            pod.last_event = w->second.second;
          }
          if (pod.state.restarts)
            report.rescheduling.push_back(where + ": " + std::to_string(pod.state.restarts) + " restarts" +
                                          (pod.state.last_exit().empty() ? "" : ", last exit " + pod.state.last_exit()));
          if (!pod.ready) {
            std::string line = where + ": " + pod.state.reason;
            if (auto w = warning.find(pod_name); w != warning.end()) line += " [" + w->second.second + "]";
            unready.push_back(line);
          }
          ++role.pods;
          role.ready_pods += pod.ready;
          group_ready += pod.ready;
          role.restarts += pod.state.restarts;
          g.pods.push_back(std::move(pod));
        }
        const bool wanted = r >= 0 && r < replicas;
        g.ready = wanted && static_cast<std::int64_t>(members.size()) == group && group_ready == group;
        role.ready_replicas += g.ready;
        if (!wanted && !members.empty()) {
          ready = false;
          unready.push_back("role " + name + " replica " + std::to_string(r) + ": " + std::to_string(members.size()) +
                            " pod(s) beyond the spec's " + std::to_string(replicas) + " replicas (being removed)");
        } else if (wanted && static_cast<std::int64_t>(members.size()) != group) {
          unready.push_back("role " + name + " replica " + std::to_string(r) + ": " + std::to_string(members.size()) +
                            " of " + std::to_string(group) + " pods");
        }
        role.groups.push_back(std::move(g));
      }
      if (role.ready_replicas != replicas) ready = false;
      if (const auto st = role_status.find(name); st != role_status.end()) {
        role.status_replicas = num(find(st->second, {"replicas"}));
        role.status_ready_replicas = num(find(st->second, {"readyReplicas"}));
      }
      report.roles.push_back(std::move(role));
    }
  }
  // Pods of a role the spec no longer has.
  for (const auto& p : inputs.pods) {
    const std::string role = str(find(&p, {"metadata", "labels", kRoleNameLabel}));
    if (!role_names.count(role)) {
      ready = false;
      unready.push_back("pod " + str(find(&p, {"metadata", "name"})) + " of role " + role +
                        ", which the spec no longer has");
    }
  }

  // Services: what render_services wants for the live object against what exists.
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
  report.ready = ready;
  return report;
}

std::string render_storm_status(const StormStatus& report) {
  std::ostringstream out;
  const auto n = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  out << "StormService " << report.name << " in namespace " << report.ns << ": "
      << (report.ready ? "ready" : "not ready") << " (generation " << report.generation << ", observed "
      << n(report.observed_generation) << ")\n\n";
  out << std::left << std::setw(10) << "ROLE" << std::setw(10) << "REPLICAS" << std::setw(8) << "READY"
      << std::setw(11) << "GROUPSIZE" << std::setw(8) << "PODS" << std::setw(10) << "RESTARTS" << std::setw(11)
      << "RECREATED" << "MINAVAILABLE\n";
  for (const auto& r : report.roles) {
    out << std::setw(10) << r.name << std::setw(10) << r.replicas << std::setw(8) << r.ready_replicas
        << std::setw(11) << r.pod_group_size << std::setw(8)
        << (std::to_string(r.ready_pods) + "/" + std::to_string(r.replicas * r.pod_group_size)) << std::setw(10)
        << r.restarts << std::setw(11) << r.recreated_pods << r.min_available.value_or("-") << '\n';
  }
  out << '\n';
  for (const auto& r : report.roles) {
    out << "role " << r.name << '\n';
    for (const auto& g : r.groups) {
      out << "  replica " << g.replica << (g.ready ? "  ready" : "  not ready") << '\n';
      for (const auto& p : g.pods) {
        out << "    " << std::setw(44) << p.state.name << ' ' << std::setw(18) << p.state.status << " restarts "
            << p.state.restarts << "  age "
            << (p.state.age_seconds ? util::human_duration(*p.state.age_seconds) : std::string("-"))
            << (p.earlier_pods > 0 ? "  recreated" : "") << '\n';
      }
    }
  }
  out << "\nServices: " << report.expected_services.size() << " expected";
  for (const auto& [label, list] : {std::pair{"missing", &report.missing_services},
                                    std::pair{"extra", &report.extra_services}}) {
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
