#include "cmd/rollout.h"

#include <iostream>

#include "cmd/wait.h"
#include "mindie/rollout_status.h"

namespace mindie::cmd {

namespace po = boost::program_options;

void add_rollout_flags(po::options_description& desc, RolloutFlags& flags) {
  desc.add_options()("watch,w", po::value(&flags.watch)->default_value(true, "true")->implicit_value(true, "true"),
                     "Watch the rollout until it is done; --watch=false shows it once")(
      "timeout", po::value(&flags.timeout)->default_value("0s"),
      "How long to watch before giving up (a duration: 30s, 10m, 1h); 0 means never");
  flags.output.bind(desc);
}

RolloutOptions::RolloutOptions(RolloutFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void RolloutOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

namespace {

/// Refuses an action rollout does not have, as Cobra refuses an unknown subcommand: before anything else.
void check_action(const std::string& action) {
  if (action.empty()) throw UsageError("an action is required: kubectl mindie rollout status");
  if (action != "status")
    throw UsageError("unknown action \"" + action + "\" for \"kubectl mindie rollout\" (the action is status)");
}

}  // namespace

void RolloutOptions::validate() {
  check_action(flags_.action);
  check_namespace_syntax(namespace_flag_);
  timeout_ = parse_duration(flags_.timeout, "--timeout");
  flags_.output.validate();
}

void RolloutOptions::run(kube::Client& client, Printer& printer,
                         const kube::Informer::TransportFactory& new_transport) {
  // As kubectl rollout status: the status on each change, until done; --watch=false shows it once and exits 0.
  const auto deadline = timeout_.count() == 0 ? std::chrono::steady_clock::time_point::max()
                                              : std::chrono::steady_clock::now() + timeout_;
  std::string shown;  // the last document printed: the status is printed again only when it changes
  const auto show = [&](const status::Report& report) {
    const rollout::RolloutStatus s = rollout::summarize(report, workload_subject(report));
    std::string doc = boost::json::serialize(s.to_json());
    if (doc != shown) {
      printer.view(std::vector<std::pair<kube::GVR, std::string>>{}, s.to_json(), [&s](bool) { return s.text(); });
      printer.flush();
      printer.out() << std::flush;  // a watching reader (jq, a pipe) needs each document whole, when it is printed
      shown = std::move(doc);
    }
    return s.done || !flags_.watch;
  };
  const Watched w = watch_reports(client, new_transport, namespace_, deadline, show);
  if (!w.accepted)
    throw CommandError("timed out waiting for the rollout of " + workload_subject(w.report) + " (--timeout " +
                       flags_.timeout + ")");
}

namespace {

class RolloutInvocation : public Invocation {
 public:
  explicit RolloutInvocation(po::options_description& desc) { add_rollout_flags(desc, flags_); }
  std::string output() const override { return flags_.output.format(); }
  std::string argument_name() const override { return "ACTION"; }
  void take_argument(std::string value) override { flags_.action = std::move(value); }
  void run(const GlobalFlags& global, Printer& printer) override {
    check_action(flags_.action);
    // Then the kubeconfig: complete() takes its namespace (loading it sends nothing).
    Session session(global, std::cerr);
    RolloutOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  RolloutFlags flags_;
};

}  // namespace

Command rollout_command() {
  return {"rollout",
          "Show how far instances are on their current pod template (rollout status)",
          "kubectl mindie rollout status [-n NS] [--watch=false] [--timeout 10m] [-o json|yaml]",
          "status: per role, how many instances run the role's current pod template, how many are ready, and\n"
          "which are still on an earlier one and why (status's verdicts). Watches until every instance is current\n"
          "and ready and the operator has observed the change, printing on each change, then prints\n"
          "\"SUBJECT successfully rolled out\"; --watch=false shows it once, as kubectl rollout status does.",
          "  # Watch until the deployment in mindie-demo runs its current templates everywhere\n"
          "  kubectl mindie rollout status -n mindie-demo\n\n"
          "  # Give up after 10 minutes (exit 1)\n"
          "  kubectl mindie rollout status -n mindie-demo --timeout 10m\n\n"
          "  # Once, machine-readable\n"
          "  kubectl mindie rollout status -n mindie-demo --watch=false -o json\n",
          RolloutFlags().output.formats(),
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<RolloutInvocation>(desc);
          },
          {{"0", "rolled out (every instance current and ready); with --watch=false, the status was shown"},
           {"1",
            "--timeout passed before the rollout was done, a bad action or flag, no deployment in the namespace, "
            "an API or connection error"}}};
}

}  // namespace mindie::cmd
