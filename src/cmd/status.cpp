#include "cmd/status.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <set>

#include "cmd/adopt.h"
#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/list.h"
#include "cmd/lock.h"
#include "cmd/status_inputs.h"
#include "cmd/wait.h"
#include "mindie/baseline.h"
#include "mindie/status_view.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_status_flags(po::options_description& desc, StatusFlags& flags) {
  flags.output.bind(desc);
  desc.add_options()(
      "watch,w", po::bool_switch(&flags.watch),
      "After showing the status, watch for changes (redrawn in place on a terminal, one line per change otherwise)");
  add_all_namespaces_flag(desc, flags.all_namespaces);
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

/// The objects `report` shows, as -o name prints them: the baseline, then the workload (the InferServiceSet, or
/// each Deployment of the other modes).
std::vector<std::pair<kube::GVR, std::string>> shown_objects(const status::Report& report) {
  std::vector<std::pair<kube::GVR, std::string>> names{{kube::gvr::kConfigMaps, baseline::kConfigMapName}};
  if (report.multi()) {
    for (const auto& d : report.deployments) names.emplace_back(kube::gvr::kDeployments, d.name);
  } else if (report.found) {
    names.emplace_back(kube::gvr::kInferServiceSets, report.name);
  }
  return names;
}

/// Prints `report` as the printer's format asks: the report as JSON/YAML (flushed whole, for a watching reader),
/// the objects it covers (-o name), else the table.
void print_report(Printer& printer, const status::Report& report) {
  printer.view(shown_objects(report), report.to_json(),
               [&report](bool wide) { return status::render_table(report, wide); });
  printer.flush();
  printer.out() << std::flush;  // a watching reader (jq, a pipe) needs each document whole, when it is printed
}

/// The change recorded in namespace `ns`'s lock, read now (issue 17: an unfinished one is drift until a command
/// recovers it). A user who may not read Leases gets a warning in `warnings` instead.
LockNotes read_lock_notes(kube::Client& client, const std::string& ns, std::vector<std::string>& warnings) {
  std::optional<json::object> lease;
  try {
    lease = client.get_if_exists(kube::gvr::kLeases, ns, kLockLeaseName);
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    warnings.push_back("lease/" + std::string(kLockLeaseName) + " could not be read (" + e.status_message() +
                       "): an unfinished change of an interrupted command would not show");
  }
  if (!lease) return {};
  return lock_notes(
      *lease,
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// The report of `inputs`, knowing the scale under way that `notes` (read after `inputs`) records (issue 33: no
/// drift line while a scale runs). A scale records its intent before its workload write and clears it after its
/// baseline write: a workload read changed is explained by that intent or, when `notes` has none, by the baseline
/// read after it, so on drift without one motor-config is read again.
status::Report settled_report(kube::Client& client, const std::string& ns, status::StatusInputs& inputs,
                              const LockNotes& notes) {
  inputs.scaling = notes.scaling;
  if (!notes.scaling_by.empty()) inputs.scaling_by = notes.scaling_by;
  status::Report report = status::build_report(ns, inputs, std::chrono::system_clock::now());
  if (report.drift.empty() || !notes.scaling.empty()) return report;
  auto baseline = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!baseline || *baseline == inputs.config_map) return report;
  inputs.config_map = std::move(*baseline);
  return status::build_report(ns, inputs, std::chrono::system_clock::now());
}

/// Prints, stamped with the time, the summary lines new since `previous` and the problems of `previous` that are
/// gone from `lines` ("resolved: ..."), as kubectl get -w prints one line per change.
void print_changed_lines(std::ostream& out, const std::vector<std::string>& previous,
                         const std::vector<std::string>& lines) {
  const std::set<std::string> before(previous.begin(), previous.end());
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::gmtime(&t));
  for (const auto& l : lines)
    if (!before.count(l)) out << stamp << "  " << l << '\n';
  const std::set<std::string> after(lines.begin(), lines.end());
  for (const auto& l : previous)
    if (!after.count(l) && (l.starts_with("drift: ") || l.starts_with("converging: ") || l.starts_with("not ready: ")))
      out << stamp << "  resolved: " << l << '\n';
}

/// --watch: rebuilds the report of namespace `ns` from an informer's cache on every change, until interrupted. On
/// a terminal the screen is redrawn in place; otherwise (a pipe, a log) each change prints what it changed.
/// `first_report` is the report of `inputs`, read before.
[[noreturn]] void watch_status(kube::Client& client, const std::string& ns, const std::string& format, Printer& printer,
                               const kube::Informer::TransportFactory& new_transport,
                               const status::StatusInputs& inputs, const status::Report& first_report) {
  const bool terminal = format.empty() || format == "wide" ? isatty(STDOUT_FILENO) != 0 : false;
  const std::string name = first_report.name;
  const bool multi = first_report.multi();
  kube::Informer informer(new_transport,
                          multi ? multi_status_watch_targets(ns, name)
                                : status_watch_targets(ns, name, status::service_count(inputs.service_set)));
  informer.start();
  std::vector<std::string> previous;
  bool first = true;
  for (;;) {
    status::StatusInputs in = multi ? inputs_from_multi_informer(informer) : inputs_from_informer(informer);
    status::Report report = status::build_report(ns, in, std::chrono::system_clock::now());
    if (!report.drift.empty()) {        // a change under way, or a baseline the informer has not seen yet?
      std::vector<std::string> unread;  // the lease's 403 was said when the watch started
      report = settled_report(client, ns, in, read_lock_notes(client, ns, unread));
    }
    if (terminal) {
      printer.out() << "\x1b[H\x1b[2J" << status::render_table(report, format == "wide") << std::flush;
    } else if (!format.empty() && format != "wide") {  // json, yaml, name: whole, on each change
      const auto lines = status::summary_lines(report);
      if (first || lines != previous) print_report(printer, report);
      previous = lines;
    } else {
      const auto lines = status::summary_lines(report);
      if (first) {
        printer.out() << status::render_table(report, format == "wide");
      } else {
        print_changed_lines(printer.out(), previous, lines);  // only what changed
      }
      printer.out() << std::flush;
      previous = lines;
    }
    first = false;
    informer.wait_for_change(next_judgement(report, std::chrono::steady_clock::time_point::max()));
  }
}

}  // namespace

void StatusOptions::run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport) {
  const std::string& format = flags_.output.format();
  status::StatusInputs inputs = read_status_inputs(client, namespace_);
  if (!has_our_records(inputs.config_map))
    printer.warning("configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + namespace_ +
                    " was not written by kubectl-mindie (deploy.py?): what lacks kubectl-mindie's labels is not "
                    "shown; take the deployment over with kubectl mindie deploy -f user_config.json --adopt");
  std::vector<std::string> lease_warnings;
  const LockNotes notes = read_lock_notes(client, namespace_, lease_warnings);
  status::Report report = settled_report(client, namespace_, inputs, notes);
  if (flags_.watch) watch_status(client, namespace_, format, printer, new_transport, inputs, report);
  report.warnings.insert(report.warnings.end(), lease_warnings.begin(), lease_warnings.end());
  report.drift.insert(report.drift.end(), notes.drift.begin(), notes.drift.end());
  report.converging.insert(report.converging.end(), notes.converging.begin(), notes.converging.end());
  print_report(printer, report);
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
    if (flags_.all_namespaces) {  // list's alias: every deployment, StormServices included
      if (flags_.watch) throw UsageError("--watch is not supported with -A (kubectl mindie list -A lists once)");
      if (!framework_.app.empty()) throw UsageError("--app is not supported with -A: every StormService is listed");
      Session session(global, std::cerr);
      ListOptions o(ListFlags{flags_.output, true}, global.kube.namespace_);
      o.complete(session.rest_config().namespace_);
      o.validate();
      o.run(session.client(), printer);
      return;
    }
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
          "kubectl mindie status [-n NS | -A] [-o wide|json|yaml] [-w]",
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
          "  # Every deployment in the cluster, one line each (the same as kubectl mindie list -A)\n"
          "  kubectl mindie status -A\n\n"
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
