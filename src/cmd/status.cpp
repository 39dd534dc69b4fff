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
  check_namespace_syntax(namespace_flag_);
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

/// The InferServiceSet to show: as recorded on the ConfigMap, or the baseline's default. With neither (a broken
/// baseline and no annotation) there is nothing to look for: CommandError.
std::string service_set_name_for_status(const json::object& cm, const std::optional<config::UserConfig>& baseline) {
  if (baseline) return recorded_service_set_name(cm, *baseline);
  const std::string name = annotation(cm, render::kWorkloadNameAnnotation);
  if (name.empty() || !config::is_dns1123_label(name)) {
    throw CommandError(std::string("configmap/") + render::kConfigMapName + " holds no usable baseline and no " +
                       "valid " + render::kWorkloadNameAnnotation + " annotation: nothing says which " +
                       "InferServiceSet to show; redeploy with kubectl mindie deploy");
  }
  return name;
}

}  // namespace

json::object build_status_report(const std::string& ns, const json::object& config_map, const json::object* iss,
                                 const json::array& pods) {
  // A broken baseline (hand-edited) must not hide what runs: show the live state with the problem as drift.
  std::optional<config::UserConfig> baseline;
  std::string baseline_problem;
  try {
    baseline = parse_baseline(config_map, ns);
  } catch (const CommandError& e) {
    baseline_problem = e.what();
  }
  const std::string iss_name = service_set_name_for_status(config_map, baseline);
  std::string mode = annotation(config_map, render::kDeployModeAnnotation);
  if (baseline) mode = recorded_deploy_mode(config_map, *baseline);

  json::object report{{"namespace", ns}, {"inferServiceSet", iss_name}, {"deployMode", mode},
                      {"found", iss != nullptr}, {"baselineUsable", baseline.has_value()}};
  json::array drift;
  json::array unready;
  if (!baseline) drift.push_back(json::string(baseline_problem));
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

  const auto desired = baseline ? render::desired_role_replicas(*baseline) : std::map<std::string, int>{};
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
    // Every instance the live spec asks for is listed, with or without pods, so a missing pod or instance
    // shows up instead of vanishing; pods of instances beyond the spec (being scaled in) are listed too.
    auto& by_instance = grouped[name];
    for (std::int64_t k = 0; k < spec; ++k) by_instance.try_emplace(k);
    json::array instances;
    std::int64_t ready = 0, total = 0, restarts = 0;
    for (auto& [k, pod_list] : by_instance) {
      std::int64_t inst_ready = 0;
      for (const auto& p : pod_list) {
        const bool pod_ready = p.at("ready").as_bool();
        inst_ready += pod_ready ? 1 : 0;
        restarts += p.at("restarts").as_int64();
        if (!pod_ready) {
          const auto& pod = p.as_object();
          std::string why(pod.at("reason").as_string());
          if (why.empty()) why = std::string(pod.at("phase").as_string());
          unready.push_back(json::string("pod " + std::string(pod.at("name").as_string()) + " (role " + name +
                                         ", instance " + std::to_string(k) + ") is not ready" +
                                         (why.empty() ? "" : ": " + why)));
        }
      }
      const auto present = static_cast<std::int64_t>(pod_list.size());
      if (k < spec && present < pods_per_instance) {
        unready.push_back(json::string("role " + name + " instance " + std::to_string(k) + ": " +
                                       std::to_string(present) + " of " + std::to_string(pods_per_instance) +
                                       " pods exist"));
      }
      ready += inst_ready;
      total += present;
      instances.push_back({{"index", k}, {"readyPods", inst_ready}, {"pods", pod_list}});
    }
    if (!baseline) {
      // Nothing to compare with; the baseline problem is already reported.
    } else if (iss && spec < 0) {
      drift.push_back(json::string("role " + name + ": in the baseline but not in the live InferServiceSet"));
    } else if (iss && spec != base) {
      drift.push_back(json::string("role " + name + ": baseline " + std::to_string(base) +
                                   " instances, spec.template.roles[" + std::to_string(index) + "].replicas " +
                                   std::to_string(spec)));
    }
    roles.push_back({{"name", name},
                     {"baselineInstances", baseline ? json::value(base) : json::value(nullptr)},
                     {"specInstances", spec < 0 ? json::value(nullptr) : json::value(spec)},
                     {"podsPerInstance", pods_per_instance},
                     {"desiredPods", spec < 0 ? 0 : spec * pods_per_instance},
                     {"readyPods", ready},
                     {"pods", total},
                     {"restarts", restarts},
                     {"instances", std::move(instances)}});
  }
  report["roles"] = std::move(roles);
  report["drift"] = std::move(drift);
  report["unready"] = std::move(unready);
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
    // Optional roles that are off everywhere (kv-pool, kv-conductor) would only add noise.
    const auto& base = role.at("baselineInstances");
    const bool unused = (base.is_null() || base.as_int64() == 0) && (spec.is_null() || spec.as_int64() == 0) &&
                        role.at("pods").as_int64() == 0;
    if (unused) continue;
    row(std::string(role.at("name").as_string()), base.is_null() ? "-" : std::to_string(base.as_int64()),
        spec.is_null() ? "-" : std::to_string(spec.as_int64()), std::to_string(role.at("podsPerInstance").as_int64()),
        std::to_string(role.at("readyPods").as_int64()) + "/" + std::to_string(role.at("desiredPods").as_int64()),
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
  out << '\n';
  const auto& drift = report.at("drift").as_array();
  if (drift.empty()) out << "live state matches the baseline\n";
  for (const auto& d : drift) out << "drift: " << std::string_view(d.as_string()) << '\n';
  const auto& unready = report.at("unready").as_array();
  if (unready.empty() && report.at("found").as_bool()) out << "every desired pod exists and is ready\n";
  for (const auto& u : unready) out << "not ready: " << std::string_view(u.as_string()) << '\n';
  return out.str();
}

void StatusOptions::run(kube::Client& client, Printer& printer) {
  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, namespace_, render::kConfigMapName);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + namespace_ + " (configmap/" +
                       std::string(render::kConfigMapName) + " not found): run kubectl mindie deploy first");
  }
  std::optional<config::UserConfig> baseline;
  try {
    baseline = parse_baseline(*cm, namespace_);
  } catch (const CommandError&) {  // reported by build_status_report; the recorded name may still be known
  }
  const std::string iss_name = service_set_name_for_status(*cm, baseline);
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
