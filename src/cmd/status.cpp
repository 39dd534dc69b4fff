#include "cmd/status.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "mindie/render.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_status_flags(po::options_description& desc, StatusFlags& flags) {
  desc.add_options()("output,o", po::value(&flags.output), "Output format: json or yaml (default: a table)");
}

StatusOptions::StatusOptions(StatusFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StatusOptions::validate() const {
  if (!flags_.output.empty() && flags_.output != "json" && flags_.output != "yaml")
    throw UsageError("unable to match a printer suitable for the output format \"" + flags_.output +
                     "\", allowed formats are: json,yaml");
}

void StatusOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

namespace {

const json::value* find(const json::value* v, std::initializer_list<std::string_view> path) {
  for (auto key : path) {
    if (!v || !v->is_object()) return nullptr;
    v = v->as_object().if_contains(key);
  }
  return v;
}

/// As above, starting at an object (avoids copying it into a value).
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

std::string str(const json::value* v) { return v && v->is_string() ? std::string(v->as_string()) : std::string(); }

std::int64_t num(const json::value* v, std::int64_t fallback = 0) {
  if (v && (v->is_int64() || v->is_uint64())) return v->to_number<std::int64_t>();
  return fallback;
}

/// A pod's readiness, restarts and the most telling reason it is not running (waiting/terminated reason).
json::object pod_summary(const json::value& pod) {
  const json::value* status = find(&pod, {"status"});
  bool ready = false;
  if (const auto* conds = find(status, {"conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == "Ready") ready = str(find(&c, {"status"})) == "True";
  }
  std::int64_t restarts = 0;
  std::string reason;
  if (const auto* cs = find(status, {"containerStatuses"}); cs && cs->is_array()) {
    for (const auto& c : cs->as_array()) {
      restarts += num(find(&c, {"restartCount"}));
      if (reason.empty()) reason = str(find(&c, {"state", "waiting", "reason"}));
      if (reason.empty()) reason = str(find(&c, {"state", "terminated", "reason"}));
    }
  }
  if (find(&pod, {"metadata", "deletionTimestamp"})) reason = "Terminating";
  return {{"name", str(find(&pod, {"metadata", "name"}))},
          {"phase", str(find(status, {"phase"}))},
          {"ready", ready},
          {"restarts", restarts},
          {"node", str(find(&pod, {"spec", "nodeName"}))},
          {"reason", reason}};
}

}  // namespace

json::object build_status_report(const std::string& ns, const json::object& config_map, const json::object* iss,
                                 const json::array& pods) {
  const config::UserConfig baseline = parse_baseline(config_map, ns);
  std::string iss_name = annotation(config_map, render::kWorkloadNameAnnotation);
  if (iss_name.empty()) iss_name = render::default_service_set_name(baseline);
  std::string mode = annotation(config_map, render::kDeployModeAnnotation);
  if (mode.empty()) mode = std::string(config::to_string(baseline.deploy_mode));

  json::object report{{"namespace", ns}, {"inferServiceSet", iss_name}, {"deployMode", mode},
                      {"found", iss != nullptr}};
  json::array drift;
  if (iss) {
    report["generation"] = num(find(*iss, {"metadata", "generation"}));
    report["observedGeneration"] = num(find(*iss, {"status", "observedGeneration"}));
    if (report["observedGeneration"] != report["generation"]) {
      drift.push_back(json::string("the operator has not observed generation " +
                                   std::to_string(report["generation"].as_int64()) + " yet (status.observedGeneration " +
                                   std::to_string(report["observedGeneration"].as_int64()) + ")"));
    }
  } else {
    drift.push_back(json::string("inferserviceset " + iss_name + " does not exist"));
  }

  // role -> instance index -> pods, from the operator's labels.
  std::map<std::string, std::map<std::int64_t, json::array>> grouped;
  for (const auto& pod : pods) {
    const json::value* labels = find(&pod, {"metadata", "labels"});
    const std::string role = str(find(labels, {"infer.huawei.com/instanceset-name"}));
    const std::string index = str(find(labels, {"infer.huawei.com/instanceset-index"}));
    if (role.empty()) continue;
    std::int64_t k = -1;
    try {
      k = std::stoll(index);
    } catch (const std::exception&) {  // a label we cannot read still shows the pod, under instance -1
    }
    grouped[role][k].push_back(pod_summary(pod));
  }

  const auto desired = render::desired_role_replicas(baseline);
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
    if (live_roles) {
      for (std::size_t i = 0; i < live_roles->size(); ++i) {
        const json::value& role = (*live_roles)[i];
        if (str(find(&role, {"name"})) != name) continue;
        spec = num(find(&role, {"replicas"}), 1);
        pods_per_instance = num(find(&role, {"spec", "replicas"}), 1);
        index = i;
      }
    }
    json::array instances;
    std::int64_t ready = 0, total = 0, restarts = 0;
    for (auto& [k, pod_list] : grouped[name]) {
      std::int64_t inst_ready = 0;
      for (const auto& p : pod_list) {
        inst_ready += p.at("ready").as_bool() ? 1 : 0;
        restarts += p.at("restarts").as_int64();
      }
      ready += inst_ready;
      total += static_cast<std::int64_t>(pod_list.size());
      instances.push_back({{"index", k}, {"readyPods", inst_ready}, {"pods", pod_list}});
    }
    if (iss && spec < 0) {
      drift.push_back(json::string("role " + name + ": in the baseline but not in the live InferServiceSet"));
    } else if (iss && spec != base) {
      drift.push_back(json::string("role " + name + ": baseline " + std::to_string(base) +
                                   " instances, spec.template.roles[" + std::to_string(index) + "].replicas " +
                                   std::to_string(spec)));
    }
    roles.push_back({{"name", name},
                     {"baselineInstances", base},
                     {"specInstances", spec < 0 ? json::value(nullptr) : json::value(spec)},
                     {"podsPerInstance", pods_per_instance},
                     {"readyPods", ready},
                     {"pods", total},
                     {"restarts", restarts},
                     {"instances", std::move(instances)}});
  }
  report["roles"] = std::move(roles);
  report["drift"] = std::move(drift);
  return report;
}

std::string render_status_table(const json::object& report) {
  std::ostringstream out;
  const auto text = [&](const char* key) { return std::string_view(report.at(key).as_string()); };
  out << "NAMESPACE: " << text("namespace") << "   INFERSERVICESET: " << text("inferServiceSet")
      << "   DEPLOY MODE: " << text("deployMode") << "\n\n";
  const auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                       const std::string& e, const std::string& f) {
    out << std::left << std::setw(14) << a << std::setw(10) << b << std::setw(6) << c << std::setw(15) << d
        << std::setw(10) << e << f << '\n';
  };
  row("ROLE", "BASELINE", "SPEC", "PODS/INSTANCE", "READY", "RESTARTS");
  for (const auto& r : report.at("roles").as_array()) {
    const auto& role = r.as_object();
    const auto& spec = role.at("specInstances");
    row(std::string(role.at("name").as_string()), std::to_string(role.at("baselineInstances").as_int64()),
        spec.is_null() ? "-" : std::to_string(spec.as_int64()), std::to_string(role.at("podsPerInstance").as_int64()),
        std::to_string(role.at("readyPods").as_int64()) + "/" + std::to_string(role.at("pods").as_int64()),
        std::to_string(role.at("restarts").as_int64()));
  }
  bool header = false;
  for (const auto& r : report.at("roles").as_array()) {
    for (const auto& inst : r.at("instances").as_array()) {
      for (const auto& p : inst.at("pods").as_array()) {
        if (!header) {
          out << "\nPODS\n";
          row("ROLE", "INSTANCE", "READY", "STATUS", "RESTARTS", "NAME");
          header = true;
        }
        const auto& pod = p.as_object();
        std::string state(pod.at("reason").as_string());
        if (state.empty()) state = std::string(pod.at("phase").as_string());
        row(std::string(r.at("name").as_string()), std::to_string(inst.at("index").as_int64()),
            pod.at("ready").as_bool() ? "yes" : "no", state, std::to_string(pod.at("restarts").as_int64()),
            std::string(pod.at("name").as_string()));
      }
    }
  }
  const auto& drift = report.at("drift").as_array();
  if (drift.empty()) {
    out << "\nlive state matches the baseline\n";
  } else {
    out << '\n';
    for (const auto& d : drift) out << "drift: " << std::string_view(d.as_string()) << '\n';
  }
  return out.str();
}

void StatusOptions::run(kube::Client& client, Printer& printer) {
  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, namespace_, render::kConfigMapName);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + namespace_ + " (configmap/" +
                       std::string(render::kConfigMapName) + " not found): run kubectl mindie deploy first");
  }
  std::string iss_name = annotation(*cm, render::kWorkloadNameAnnotation);
  if (iss_name.empty()) iss_name = render::default_service_set_name(parse_baseline(*cm, namespace_));
  const auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, namespace_, iss_name);
  json::array pods;
  if (iss) {
    // The operator labels pods with their InferService (X-<i>), not the set: select all of this set's
    // InferServices in one LIST.
    const std::int64_t services = std::max<std::int64_t>(1, num(find(*iss, {"spec", "replicas"}), 1));
    std::string selector = "infer.huawei.com/inferservice-name in (";
    for (std::int64_t i = 0; i < services; ++i) selector += (i ? "," : "") + iss_name + "-" + std::to_string(i);
    selector += ")";
    auto list = client.list(kube::gvr::kPods, namespace_, selector);
    pods = std::move(list["items"].as_array());
  }
  const json::object report = build_status_report(namespace_, *cm, iss ? &*iss : nullptr, pods);
  if (flags_.output.empty()) {
    printer.out() << render_status_table(report);
  } else {
    printer.object(report);
  }
}

}  // namespace mindie::cmd
