#include "cmd/status.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <set>

#include "cmd/adopt.h"
#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/lock.h"
#include "cmd/multi_deployment.h"
#include "cmd/wait.h"
#include "mindie/baseline.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "mindie/status_view.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_status_flags(po::options_description& desc, StatusFlags& flags) {
  flags.output.bind(desc);
  desc.add_options()(
      "watch,w", po::bool_switch(&flags.watch),
      "After showing the status, watch for changes (redrawn in place on a terminal, one line per change otherwise)");
}

StatusOptions::StatusOptions(StatusFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StatusOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
}

void StatusOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

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

}  // namespace

status::StatusInputs read_status_inputs(kube::Client& client, const std::string& ns) {
  auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + ns + " (configmap/" +
                       std::string(baseline::kConfigMapName) + " not found): run kubectl mindie deploy first");
  }
  const baseline::Baseline stored = baseline::read_baseline(*cm, ns);
  const std::string name = stored.workload_name();
  if (baseline::runs_deployments(stored.deploy_mode_if_known())) {
    // Deployments and pods by the labels kubectl-mindie put on them: one LIST each (events only on trouble).
    const std::string selector = multi_selector(name);
    auto take = [](json::object list) -> json::array { return std::move(list["items"].as_array()); };
    status::StatusInputs in{std::move(*cm), std::nullopt, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    in.deployments = take(client.list(kube::gvr::kDeployments, ns, selector));
    client.list_each(kube::gvr::kPods, ns, selector, 500, "", [&](json::object& pod) { in.pods.push_back(status::slim_pod(pod)); });
    const bool trouble = std::any_of(in.pods.begin(), in.pods.end(), [](const json::value& p) {
      return !status::pod_ready(p);
    });
    if (trouble) in.events = take(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning"));
    read_services(client, ns, selector, in);
    return in;
  }
  auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, name);
  if (!iss) return status::StatusInputs{std::move(*cm), std::nullopt, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  // Lists arrive in their own arenas (Client::list); the arrays are move-constructed into StatusInputs, never
  // assigned, because assigning between different memory resources would copy every pod.
  const std::string selector = status::service_selector(name, status::service_count(iss));
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
      client.list_each(*r, ns, selector, 500, "", [&](json::object& w) { workloads.push_back(status::slim_workload(w, r->kind)); });
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
  client.list_each(kube::gvr::kPods, ns, selector, 500, "", [&](json::object& pod) { pods.push_back(status::slim_pod(pod)); });
  // Events only explain trouble: skip the request when every pod the set asks for exists and is ready.
  const bool trouble = static_cast<std::int64_t>(pods.size()) < status::desired_pods(*iss) ||
                       std::any_of(pods.begin(), pods.end(), [](const json::value& p) {
                         return !status::pod_ready(p);
                       });
  json::array events = trouble ? take(client.list(kube::gvr::kEvents, ns, "", 500, "type=Warning")) : json::array();
  // A gang role's instance may be rebuilt by the operator again and again (status_report.h, Rebuild): the
  // controllers' events tell each incarnation of its workload apart.
  const bool gang = !operator_rules::gang_roles(*iss).empty() ||
                    std::any_of(sets.begin(), sets.end(), [](const json::value& s) {
                      return util::str(util::find(&s, {"metadata", "labels", render::kGangScheduleLabel})) == "true";
                    });
  std::string events_unknown;
  json::array workload_events = [&]() -> json::array {
    if (!gang) return {};
    try {
      return take(client.list(kube::gvr::kEvents, ns, "", 500, kWorkloadEventsSelector));
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      events_unknown = "cannot list events in namespace " + ns + " (" + e.status_message() +
                       "): whether infer-operator is rebuilding a gang instance is not judged";
      return {};
    }
  }();
  status::StatusInputs in{std::move(*cm),    std::move(iss),    std::move(services), std::move(sets),
                          std::move(pods),   std::move(events), {},                  std::move(workloads),
                          std::move(workloads_unknown), {}, {}, std::move(workload_events), {}};
  in.workload_events_unknown = std::move(events_unknown);
  // The operator's role Services carry the InstanceSet's labels, so the pods' selector finds them
  // (infer-operator-rules.md B4).
  read_services(client, ns, selector, in);
  return in;
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

void StatusOptions::run(kube::Client& client, Printer& printer,
                        const kube::Informer::TransportFactory& new_transport) {
  const std::string& format = flags_.output.format();
  const auto print = [&](const status::Report& report) {
    if (format == "json" || format == "yaml") {
      printer.object(report.to_json());
      printer.flush();
      printer.out() << std::flush;  // a watching reader (jq, a pipe) needs each document whole, when it is printed
    } else {
      printer.out() << status::render_table(report, format == "wide");
    }
  };
  status::StatusInputs inputs = read_status_inputs(client, namespace_);
  if (!has_our_records(inputs.config_map))
    printer.warning("configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + namespace_ +
                    " was not written by kubectl-mindie (deploy.py?): what lacks kubectl-mindie's labels is not "
                    "shown; take the deployment over with kubectl mindie deploy -f user_config.json --adopt");
  status::Report report = status::build_report(namespace_, inputs, std::chrono::system_clock::now());
  if (!flags_.watch) {
    // An unfinished change recorded in the namespace lock (issue 17) is drift until a command recovers it. A user
    // who may not read Leases sees the rest.
    std::optional<json::object> lease;
    try {
      lease = client.get_if_exists(kube::gvr::kLeases, namespace_, kLockLeaseName);
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      report.warnings.push_back("lease/" + std::string(kLockLeaseName) + " could not be read (" + e.status_message() +
                                "): an unfinished change of an interrupted command would not show");
    }
    if (lease) {
      const LockNotes notes = lock_notes(*lease, std::chrono::duration_cast<std::chrono::seconds>(
                                                     std::chrono::system_clock::now().time_since_epoch())
                                                     .count());
      report.drift.insert(report.drift.end(), notes.drift.begin(), notes.drift.end());
      report.converging.insert(report.converging.end(), notes.converging.begin(), notes.converging.end());
    }
    print(report);
    return;
  }
  // Watch: the view is rebuilt from an informer's cache on every change. On a terminal the screen is redrawn in
  // place; otherwise (a pipe, a log) each change prints what it changed, like kubectl get -w.
  const bool terminal = format.empty() || format == "wide" ? isatty(STDOUT_FILENO) != 0 : false;
  const std::string name = report.name;
  const bool multi = report.multi();
  kube::Informer informer(new_transport, multi ? multi_status_watch_targets(namespace_, name)
                                               : status_watch_targets(namespace_, name, status::service_count(inputs.service_set)));
  informer.start();
  std::vector<std::string> previous;
  bool first = true;
  for (;;) {
    report = status::build_report(namespace_, multi ? inputs_from_multi_informer(informer) : inputs_from_informer(informer),
                                 std::chrono::system_clock::now());
    if (terminal) {
      printer.out() << "\x1b[H\x1b[2J" << status::render_table(report, format == "wide") << std::flush;
    } else if (format == "json" || format == "yaml") {
      const auto lines = status::summary_lines(report);
      if (first || lines != previous) print(report);
      previous = lines;
    } else {
      const auto lines = status::summary_lines(report);
      if (first) {
        printer.out() << status::render_table(report, format == "wide");
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
    informer.wait_for_change(next_judgement(report, std::chrono::steady_clock::time_point::max()));
  }
}

namespace {

/// status: StatusOptions, or StormStatusOptions with --framework aibrix.
class StatusInvocation : public Invocation {
 public:
  explicit StatusInvocation(po::options_description& desc) {
    add_status_flags(desc, flags_);
    add_framework_flags(desc, framework_, "status");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      Session session(global, std::cerr);
      StormStatusOptions o(framework_, flags_, global.kube.namespace_);
      o.complete(session.rest_config().namespace_);
      o.validate();
      o.run(session.client(), printer);
      return;
    }
    // The kubeconfig first: complete() takes its namespace (loading it sends nothing).
    Session session(global, std::cerr);
    StatusOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  StatusFlags flags_;
  FrameworkFlags framework_;
};

}  // namespace

Command status_command() {
  return {"status",
          "Show roles, instances and pods, why pods are not ready, and drift from the baseline",
          "kubectl mindie status [-n NS] [-o wide|json|yaml] [-w]",
          "Show, per role, the baseline's instances, the live spec and what the operator has observed; the tree\n"
          "InferServiceSet -> InferService -> role -> instance -> pods (multi_deployment, single_container: role ->\n"
          "instance's Deployment -> pods) with ready containers, status, restarts and age; why pods are not ready\n"
          "(unschedulable, image pulls, crash loops, OOM kills, stuck terminating) with their latest warning events;\n"
          "and drift between the baseline and the live workload.",
          "  # The deployment in namespace mindie-demo\n"
          "  kubectl mindie status -n mindie-demo\n\n"
          "  # With nodes and NPUs per pod\n"
          "  kubectl mindie status -n mindie-demo -o wide\n\n"
          "  # Keep watching (redrawn on a terminal, one line per change in a pipe)\n"
          "  kubectl mindie status -n mindie-demo --watch\n\n"
          "  # Machine-readable\n"
          "  kubectl mindie status -n mindie-demo -o json\n\n"
          "  # An AIBrix StormService: roles, pod groups, pods, restarts and recreated pods\n"
          "  kubectl mindie status --framework aibrix -n vllm-test --app qwen3-pd\n",
          StatusFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<StatusInvocation>(desc);
          },
          {{"0", "the status was shown, ready or not (wait --for=ready is the gate)"},
           {"1", "an error: a bad flag, no deployment in the namespace, an API or connection error"}}};
}

}  // namespace mindie::cmd
