#include "cmd/rollout.h"

#include <iostream>

#include "cmd/rollout_restart.h"
#include "cmd/wait.h"
#include "mindie/rollout_status.h"

namespace mindie::cmd {

namespace po = boost::program_options;

void add_rollout_flags(po::options_description& desc, RolloutFlags& flags) {
  desc.add_options()("watch,w", po::value(&flags.watch)->default_value(true, "true")->implicit_value(true, "true"),
                     "Watch the rollout until it is done; --watch=false shows it once")(
      "timeout", po::value(&flags.timeout)->default_value("0s"),
      "How long to watch (status) or roll (restart, resume) before giving up (a duration: 30s, 10m, 1h); 0 means "
      "never")("role", po::value(&flags.roles)->composing(),
               "restart: only this role's instances (repeat for several: --role prefill --role decode)")(
      "all", po::bool_switch(&flags.all), "restart: every instance, also those on the current pod template")(
      "max-unavailable", po::value(&flags.max_unavailable)->default_value(1),
      "restart: instances of a role that may be unready at once (replacements still go one at a time)")(
      "surge", po::bool_switch(&flags.surge),
      "restart (the default): where replacing an instance would leave its role too few ready, add a temporary one "
      "first (infer_service_set engine roles; a Deployment's own maxSurge otherwise)")(
      "no-surge", po::bool_switch(&flags.no_surge),
      "restart, resume: never add a pod or instance (a full NPU pool): Deployments roll with maxSurge 0, "
      "maxUnavailable 1")("allow-downtime", po::bool_switch(&flags.allow_downtime),
                          "restart, resume: with --no-surge, roll roles of one instance too (they are down while it is "
                          "replaced)")(
      "stop-operator", po::bool_switch(&flags.stop_operator),
      "restart, resume: roll gang-scheduled roles too, by stopping infer-operator (its Deployment "
      "mindx-dl/infer-operator-manager scaled to 0, so every namespace's reconciles wait) while each old instance's "
      "pods go, and starting it again to make the new one");
  add_lock_flags(desc, flags.lock);
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
  if (action.empty())
    throw UsageError("an action is required: kubectl mindie rollout status|restart|pause|resume|abort");
  if (action != "status" && action != "restart" && action != "pause" && action != "resume" && action != "abort")
    throw UsageError("unknown action \"" + action +
                     "\" for \"kubectl mindie rollout\" (the actions are status, restart, pause, resume and abort)");
}

/// Refuses flags the action does not take.
void check_action_flags(const RolloutFlags& f) {
  const auto refuse = [&f](bool given, const std::string& flag, const std::string& actions) {
    if (given) throw UsageError(flag + " applies to rollout " + actions + ", not to rollout " + f.action);
  };
  const bool restart = f.action == "restart", rolls = restart || f.action == "resume";
  refuse(!restart && !f.roles.empty(), "--role", "restart");
  refuse(!restart && f.all, "--all", "restart");
  refuse(!restart && f.surge, "--surge", "restart");
  refuse(!restart && f.max_unavailable != 1, "--max-unavailable", "restart");
  refuse(!rolls && f.no_surge, "--no-surge", "restart and resume");
  refuse(!rolls && f.allow_downtime, "--allow-downtime", "restart and resume");
  refuse(!rolls && f.stop_operator, "--stop-operator", "restart and resume");
  refuse(f.action != "status" && !f.output.format().empty(), "-o", "status");
  if (f.surge && f.no_surge) throw UsageError("--surge and --no-surge cannot be used together");
  if (f.allow_downtime && !f.no_surge)
    throw UsageError("--allow-downtime needs --no-surge: with a surge no role is left without a ready instance");
  if (f.max_unavailable < 1 || f.max_unavailable > 16)
    throw UsageError("--max-unavailable " + std::to_string(f.max_unavailable) + " is out of range: 1..16");
}

}  // namespace

void RolloutOptions::validate() {
  check_action(flags_.action);
  check_namespace_syntax(namespace_flag_);
  check_action_flags(flags_);
  timeout_ = parse_duration(flags_.timeout, "--timeout");
  lock_wait_ = check_lock_flags(flags_.lock);
  flags_.output.validate();
}

void RolloutOptions::run(kube::Client& client, Printer& printer,
                         const kube::Informer::TransportFactory& new_transport) {
  if (flags_.action == "status") return run_status(client, printer, new_transport);
  if (flags_.action == "abort") return run_abort(client, printer);
  if (flags_.action == "pause") {
    request_pause(client, namespace_);
    printer.summary("asked the rollout in namespace " + namespace_ +
                    " to pause: it stops once the instance it is replacing is ready");
    return;
  }
  RolloutRestart(client, printer, new_transport, namespace_, request(client), timeout_, lock_wait_).run();
}

rollout::RestartRequest RolloutOptions::request(kube::Client& client) const {
  rollout::RestartRequest r{flags_.roles,           flags_.all, !flags_.no_surge,    flags_.allow_downtime,
                            flags_.max_unavailable, {},         flags_.stop_operator};
  if (flags_.action == "restart") return r;
  const auto recorded = recorded_rollout(client, namespace_);
  if (!recorded)
    throw CommandError("no interrupted rollout in namespace " + namespace_ +
                       " to resume: kubectl mindie rollout status -n " + namespace_ +
                       " shows how far its instances are, and kubectl mindie rollout restart -n " + namespace_ +
                       " rolls those on an earlier template");
  // As recorded, but the way through a full pool the user may add now.
  return {recorded->roles,
          recorded->all,
          recorded->surge && !flags_.no_surge,
          recorded->allow_downtime || flags_.allow_downtime,
          recorded->max_unavailable,
          recorded->done,
          recorded->stop_operator || flags_.stop_operator};
}

void RolloutOptions::run_abort(kube::Client& client, Printer& printer) {
  const auto recorded = recorded_rollout(client, namespace_);
  if (!recorded) throw CommandError("no interrupted rollout in namespace " + namespace_ + " to abort");
  NamespaceLock lock(client, printer, namespace_, "rollout", lock_wait_);
  lock.recover_first();  // the lock's recovery of a rollout: settle_rollout
  lock.done();
  printer.summary("the rollout in namespace " + namespace_ +
                  " was aborted: instances it did not replace keep their "
                  "pod template");
}

void RolloutOptions::run_status(kube::Client& client, Printer& printer,
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
    // A rollout that changes instances holds the namespace lock: its requests are bounded within the lease.
    Session session(global, std::cerr, flags_.action == "status" ? std::chrono::milliseconds{0} : kLockRequestBound);
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
          "Show or roll out instances onto their current pod template (status, restart, pause, resume, abort)",
          "kubectl mindie rollout status [-n NS] [--watch=false] [--timeout 10m] [-o json|yaml]\n"
          "  kubectl mindie rollout restart [-n NS] [--role R ...] [--all] [--max-unavailable N]\n"
          "      [--surge | --no-surge [--allow-downtime]] [--stop-operator] [--timeout D]\n"
          "  kubectl mindie rollout pause|resume|abort [-n NS]",
          "status: per role, how many instances run the role's current pod template, how many are ready, and\n"
          "which are still on an earlier one and why (status's verdicts). Watches until every instance is current\n"
          "and ready and the operator has observed the change, printing on each change, then prints\n"
          "\"SUBJECT successfully rolled out\"; --watch=false shows it once, as kubectl rollout status does.\n\n"
          "restart: replaces the instances on an earlier pod template (--all: every instance), one at a time per\n"
          "role, each after the role's other instances are ready and until the new one is current and ready. In\n"
          "infer_service_set mode it deletes the instance's workload and infer-operator makes it again from the\n"
          "role's current template. A gang-scheduled role needs --stop-operator: the operator would rebuild an\n"
          "instance whose pods it saw go in a loop, so it is stopped (every namespace waits) while they go.\n"
          "A role of one instance first gets a temporary instance (--surge, the default; its pods must fit the free\n"
          "NPUs), removed at the end; Deployments use their own maxSurge. On a full NPU pool, --no-surge replaces\n"
          "pods in place (maxSurge 0, maxUnavailable 1), and --allow-downtime lets it take a role of one instance\n"
          "down while it is replaced. The rollout holds the namespace lock and records its progress there.\n\n"
          "pause: asks the running rollout to stop once the instance it is replacing is ready; it removes its\n"
          "temporary instances and keeps its progress. resume: continues a rollout that was paused or interrupted\n"
          "(Ctrl-C, a lost connection, a killed process), from any machine. abort: takes back what it changed for\n"
          "the while (its temporary instance, the strategies) and forgets it; any other mutating command does the\n"
          "same first.",
          "  # Watch until the deployment in mindie-demo runs its current templates everywhere\n"
          "  kubectl mindie rollout status -n mindie-demo\n\n"
          "  # Once, machine-readable\n"
          "  kubectl mindie rollout status -n mindie-demo --watch=false -o json\n\n"
          "  # Bring every instance on an earlier template (after a new image) to the current one\n"
          "  kubectl mindie rollout restart -n mindie-demo\n\n"
          "  # On a full NPU pool: replace pods in place, roles of one instance included\n"
          "  kubectl mindie rollout restart -n mindie-demo --no-surge --allow-downtime\n\n"
          "  # Roll gang-scheduled roles too, stopping infer-operator while each old instance goes\n"
          "  kubectl mindie rollout restart -n mindie-demo --stop-operator\n\n"
          "  # Continue a rollout that was interrupted\n"
          "  kubectl mindie rollout resume -n mindie-demo\n",
          RolloutFlags().output.formats(),
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<RolloutInvocation>(desc);
          },
          {{"0",
            "rolled out (every instance current and ready; restart: each replaced); with --watch=false, the status "
            "was shown; abort: the rollout was taken back"},
           {"1",
            "--timeout passed before the rollout was done, a bad action or flag, no deployment in the namespace, "
            "a role restart refuses (nothing written), no rollout to resume or abort, an API or connection error"},
           {"130/143/129", "restart or resume interrupted by SIGINT/SIGTERM/SIGHUP: rollout resume continues it"}}};
}

}  // namespace mindie::cmd
