#include "cmd/wait.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <ostream>

#include "cmd/command.h"
#include "cmd/interrupt.h"
#include "cmd/status_inputs.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

std::chrono::steady_clock::time_point next_judgement(const status::Report& report,
                                                     std::chrono::steady_clock::time_point deadline) {
  if (!report.recheck_at) return deadline;
  const auto in = std::chrono::seconds(*report.recheck_at) -
                  std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  return std::min(deadline,
                  std::chrono::steady_clock::now() + std::max<std::chrono::seconds>(in, std::chrono::seconds(1)));
}

namespace {

/// "waiting for NAME: prefill 1/2 decode 2/2 instances ready": the roles status shows (Role::unused leaves the
/// rest out), ready instances of the spec's, and how many are on an earlier template.
std::string progress_line(const status::Report& report) {
  std::string line = "waiting for " + report.name + ":";
  std::int64_t out_of_date = 0;
  for (const auto& role : report.roles) {
    if (role.unused()) continue;
    line += " " + role.name + " " + std::to_string(role.ready_instances) + "/" +
            (role.spec_instances ? std::to_string(*role.spec_instances) : std::string("-"));
    out_of_date += role.instances_on_other_templates;
  }
  if (report.found && report.observed_generation != report.generation)
    line += " (operator has not observed the change yet)";
  line += " instances ready";
  if (out_of_date > 0) line += " (" + std::to_string(out_of_date) + " on an earlier pod template)";
  return line;
}

}  // namespace

namespace {

// --timeout bounds the requests of a wait too (a LIST that hangs); 0 ("check once") leaves them to --request-timeout.
void bound_requests(Session& session, std::chrono::milliseconds timeout, const std::string& text) {
  if (timeout.count() > 0)
    session.set_deadline(std::chrono::steady_clock::now() + timeout,
                         "timed out waiting for the condition (--timeout " + text + ")");
}

// The workload objects of `inputs`, each with apiVersion and kind (a list answer leaves them out of its items).
WaitedFor waited_for(const std::string& subject, bool multi, status::StatusInputs inputs) {
  WaitedFor w{subject, multi ? &kube::gvr::kDeployments : &kube::gvr::kInferServiceSets, {}};
  const auto add = [&](json::object obj) {
    obj["apiVersion"] = w.gvr->api_version();
    obj["kind"] = w.gvr->kind;
    w.objects.push_back(std::move(obj));
  };
  if (!multi && inputs.service_set) add(std::move(*inputs.service_set));
  if (multi)
    for (auto& d : inputs.deployments)
      if (d.is_object()) add(std::move(d.get_object()));
  return w;
}

}  // namespace

std::vector<std::string> WaitedFor::names() const {
  std::vector<std::string> out;
  for (const auto& obj : objects) {
    const json::value v = obj;
    out.push_back(gvr->kind_dot_group() + "/" + util::str(util::find(&v, {"metadata", "name"})));
  }
  return out;
}

Watched watch_reports(kube::Client& client, const kube::Informer::TransportFactory& new_transport,
                      const std::string& ns, std::chrono::steady_clock::time_point deadline,
                      const std::function<bool(const status::Report&)>& judge, const std::function<void()>& check) {
  Watched w;
  w.inputs = read_status_inputs(client, ns);
  w.report = status::build_report(ns, w.inputs, std::chrono::system_clock::now());
  if ((w.accepted = judge(w.report))) return w;
  // multi_deployment has no InferServiceSet to watch: its Deployments and pods instead.
  const bool multi = w.report.multi();
  const std::string name = w.report.name;
  kube::Informer informer(new_transport,
                          multi ? multi_status_watch_targets(ns, name)
                                : status_watch_targets(ns, name, status::service_count(w.inputs.service_set)));
  const auto judge_now = [&] {
    w.inputs = multi ? inputs_from_multi_informer(informer) : inputs_from_informer(informer);
    w.report = status::build_report(ns, w.inputs, std::chrono::system_clock::now());
    return w.accepted = judge(w.report);
  };
  informer.start();
  for (;;) {
    if (judge_now()) return w;
    if (check) check();
    // With a check, woken at least once a second to make it again; and when the report would change by itself
    // (a rebuilt instance's quiet period ends), then.
    const auto wake = next_judgement(
        w.report, check ? std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)) : deadline);
    if (!informer.wait_for_change(wake) && std::chrono::steady_clock::now() >= deadline) {
      judge_now();
      return w;
    }
  }
}

std::string workload_subject(const status::Report& report) {
  return report.multi() ? "the Deployments of " + report.name
                        : kube::gvr::kInferServiceSets.kind_dot_group() + "/" + report.name;
}

WaitedFor wait_until_ready(kube::Client& client, const kube::Informer::TransportFactory& new_transport,
                           const std::string& ns, std::chrono::milliseconds timeout, std::ostream* progress,
                           const std::function<void()>& check) {
  std::string shown;
  const auto show = [&](const status::Report& r) {
    if (!progress) return;
    const std::string line = progress_line(r);
    if (line == shown) return;
    *progress << "\r\x1b[K" << line << std::flush;
    shown = line;
  };
  Watched w = watch_reports(
      client, new_transport, ns, std::chrono::steady_clock::now() + timeout,
      [&](const status::Report& r) {
        if (!r.ready) show(r);
        return r.ready;
      },
      check);
  const std::string subject = workload_subject(w.report);
  if (!w.accepted) {
    if (progress && !shown.empty()) *progress << '\n';
    std::string message = "timed out waiting for the condition on " + subject + " (ready)";
    if (!w.report.found) message += "\n* inferserviceset/" + w.report.name + " does not exist";
    for (const auto& c : w.report.converging) message += "\n* " + c;
    for (const auto& u : w.report.unready) message += "\n* " + u;
    throw CommandError(message);
  }
  if (progress && !shown.empty()) *progress << "\r\x1b[K" << std::flush;
  return waited_for(subject, w.report.multi(), std::move(w.inputs));
}

void add_wait_after_flags(po::options_description& desc, WaitAfterFlags& flags) {
  desc.add_options()("wait", po::bool_switch(&flags.wait),
                     "After the change, wait until every role has its instances ready")(
      "timeout", po::value(&flags.timeout)->default_value("10m"), "How long --wait waits (30s, 10m, 1h)");
}

std::chrono::milliseconds check_wait_after_flags(const WaitAfterFlags& flags, DryRun dry_run) {
  const auto timeout = parse_duration(flags.timeout, "--timeout");
  if (flags.wait && dry_run != DryRun::None) throw UsageError("--wait cannot be used with --dry-run: nothing changes");
  return timeout;
}

void add_wait_flags(po::options_description& desc, WaitFlags& flags) {
  desc.add_options()("for", po::value(&flags.for_condition), "The condition to wait for: ready")(
      "timeout", po::value(&flags.timeout)->default_value("10m"),
      "How long to wait before giving up (a duration: 30s, 10m, 1h); 0 checks once");
  flags.output.bind(desc);
}

WaitOptions::WaitOptions(WaitFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void WaitOptions::validate() {
  check_namespace_syntax(namespace_flag_);
  if (flags_.for_condition.empty()) throw UsageError("--for is required: --for=ready");
  if (flags_.for_condition != "ready" && flags_.for_condition != "condition=Ready")
    throw UsageError("unrecognized condition: \"" + flags_.for_condition + "\" (the supported condition is ready)");
  timeout_ = parse_duration(flags_.timeout, "--timeout");
  flags_.output.validate();
}

void WaitOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void WaitOptions::run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport) {
  std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  WaitedFor waited = wait_until_ready(client, new_transport, namespace_, timeout_, progress);
  for (const auto& n : waited.names()) printer.summary(n + " condition met");
  for (auto& obj : waited.objects) printer.subject(*waited.gvr, std::move(obj));
}

void wait_after(Session& session, const WaitAfterFlags& flags, const std::string& ns, Printer& printer) {
  if (!flags.wait) return;
  InterruptGuard interrupts;  // before what changed is shown: a Ctrl-C from then on is the wait's
  interrupt_while_waiting(true);
  struct Done {
    ~Done() { interrupt_while_waiting(false); }
  } done;
  printer.flush();
  printer.out() << std::flush;  // what changed is visible before the wait begins
  std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  const auto timeout = parse_duration(flags.timeout, "--timeout");
  bound_requests(session, timeout, flags.timeout);
  const auto check = [&] {
    if (progress != nullptr && pending_interrupt() != 0) *progress << '\n';
    check_interrupt("while waiting for the deployment in namespace " + ns +
                    " to be ready: the change itself is done "
                    "(the baseline and the workload agree); only the wait stopped: kubectl mindie wait -n " +
                    ns + " --for=ready");
  };
  const WaitedFor waited = wait_until_ready(
      session.client(), [&session] { return session.new_transport(); }, ns, timeout, progress, check);
  for (const auto& n : waited.names()) printer.summary(n + " ready");  // the other formats showed them as changed
}

namespace {

class WaitInvocation : public Invocation {
 public:
  explicit WaitInvocation(po::options_description& desc) { add_wait_flags(desc, flags_); }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    // The kubeconfig first: complete() takes its namespace (loading it sends nothing).
    Session session(global, std::cerr);
    WaitOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    bound_requests(session, parse_duration(flags_.timeout, "--timeout"), flags_.timeout);
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  WaitFlags flags_;
};

}  // namespace

Command wait_command() {
  return {"wait",
          "Wait until every role has its instances ready",
          "kubectl mindie wait [-n NS] --for=ready [--timeout 10m]",
          "Wait until every role has its instances ready, each on its current pod template and rolled out, and the\n"
          "operator has observed the latest change. Exits 0 once ready; on timeout exits 1 naming every pod that is\n"
          "not ready and why, and each role with instances on an earlier template.",
          "  # Wait up to 15 minutes for the deployment in mindie-demo\n"
          "  kubectl mindie wait -n mindie-demo --for=ready --timeout 15m\n\n"
          "  # Wait, then print the InferServiceSet as it is once ready\n"
          "  kubectl mindie wait -n mindie-demo --for=ready -o yaml\n",
          WaitFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<WaitInvocation>(desc);
          },
          {{"0", "every role has its instances ready"},
           {"1",
            "timed out (naming every pod that is not ready and why), a bad flag, no deployment in the namespace, "
            "an API or connection error"}}};
}

}  // namespace mindie::cmd
