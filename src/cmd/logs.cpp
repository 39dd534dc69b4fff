#include "cmd/logs.h"

#include <iostream>
#include <set>

#include "cmd/list_inputs.h"
#include "cmd/logs_streams.h"
#include "kube/names.h"
#include "mindie/baseline.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

namespace {

void add_logs_flags(po::options_description& desc, LogsFlags& flags) {
  desc.add_options()                                                                                                  //
      ("role", po::value(&flags.role), "Only the pods of this role (controller, coordinator, prefill, decode, ...)")  //
      ("instance", po::value(&flags.instance), "Only the pods of this instance of --role (its index, from 0)")        //
      ("follow,f", po::bool_switch(&flags.follow),
       "Follow the logs, and those of pods that start later, until interrupted")                                      //
      ("since", po::value(&flags.since), "Only lines newer than this duration (5s, 2m, 3h)")                          //
      ("tail", po::value(&flags.tail)->default_value(-1), "Lines of the recent log to show per pod; -1 shows all")    //
      ("previous,p", po::bool_switch(&flags.previous), "The logs of the previous, terminated container of each pod")  //
      ("timestamps", po::bool_switch(&flags.timestamps), "Begin each line with its RFC 3339 timestamp")               //
      ("max-log-requests", po::value(&flags.max_log_requests)->default_value(5),
       "With -f, the most concurrent log streams (one per pod); more pods is an error");
}

/// The pods of `role` (every role: "") and `instance` of the deployment in `ns`, as its baseline says it runs them.
/// Throws CommandError when `ns` holds none.
LogTarget target_in(kube::Client& client, const std::string& ns, const std::string& role, std::int64_t instance) {
  const json::object cm = motor_config_or_fail(client, ns);
  const baseline::Baseline stored = baseline::read_baseline(cm, ns);
  LogTarget target{ns,      stored.workload_name(), baseline::runs_deployments(stored.deploy_mode_if_known()), 1, role,
                   instance};
  if (!target.plain_deployments)
    target.services = status::service_count(client.get_if_exists(kube::gvr::kInferServiceSets, ns, target.workload));
  return target;
}

}  // namespace

std::vector<std::string> deployment_roles(kube::Client& client, const std::string& ns) {
  const LogTarget target = target_in(client, ns, "", -1);
  std::set<std::string> roles;
  const json::object pods = client.list(kube::gvr::kPods, ns, log_selector(target));
  for (const auto& pod : pods.at("items").as_array())
    if (std::string role = log_role(pod.as_object(), target.plain_deployments); !role.empty()) roles.insert(role);
  return {roles.begin(), roles.end()};
}

LogsOptions::LogsOptions(LogsFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void LogsOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
  if (!flags_.since.empty()) {
    const auto since = parse_duration(flags_.since, "--since");
    options_.since_seconds = std::max<std::int64_t>(1, (since.count() + 999) / 1000);  // the API takes seconds
  }
  if (flags_.tail >= 0) options_.tail_lines = flags_.tail;
  options_.previous = flags_.previous;
  options_.timestamps = flags_.timestamps;
}

void LogsOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  if (!flags_.role.empty() && !kube::is_dns1123_label(flags_.role))
    throw UsageError("--role " + flags_.role + " is not a role name (controller, coordinator, prefill, decode, ...)");
  if (flags_.instance >= 0 && flags_.role.empty()) throw UsageError("--instance needs --role (the instance's role)");
  if (flags_.instance < -1) throw UsageError("--instance must be 0 or more");
  if (flags_.tail < -1) throw UsageError("--tail must be -1 (all lines) or more");
  if (flags_.max_log_requests < 1) throw UsageError("--max-log-requests must be 1 or more");
  if (flags_.follow && flags_.previous) throw UsageError("only one of -f and --previous: a previous container ended");
}

void LogsOptions::run(kube::Client& client, const kube::Informer::TransportFactory& new_transport) {
  const LogTarget target = target_in(client, namespace_, flags_.role, flags_.instance);
  json::object list = client.list(kube::gvr::kPods, namespace_, log_selector(target));
  std::vector<json::object> pods;
  for (auto& p : list["items"].as_array()) pods.push_back(std::move(p.as_object()));
  const std::string which = flags_.role.empty() ? "the deployment"
                            : flags_.instance < 0
                                ? "role " + flags_.role
                                : "instance " + std::to_string(flags_.instance) + " of role " + flags_.role;
  if (flags_.follow) {
    // kubectl logs' own limit and words (k8s.io/kubectl pkg/cmd/logs/logs.go, parallelConsumeRequest).
    if (pods.size() > static_cast<std::size_t>(flags_.max_log_requests))
      throw CommandError("you are attempting to follow " + std::to_string(pods.size()) +
                         " log streams, but maximum allowed concurrency is " + std::to_string(flags_.max_log_requests) +
                         ", use --max-log-requests to increase the limit (or --role/--instance to narrow the pods)");
    follow_logs(new_transport, target, options_, static_cast<std::size_t>(flags_.max_log_requests), std::cout,
                std::cerr);
  }
  if (pods.empty()) throw CommandError("no pods of " + which + " in namespace " + namespace_);
  const std::size_t failed = print_logs(new_transport, target, pods, options_, std::cout, std::cerr);
  if (failed)
    throw CommandError(std::to_string(failed) + " of " + std::to_string(pods.size()) +
                       " pods' logs could not be read (named above)");
}

namespace {

/// logs: LogsOptions.
class LogsInvocation : public Invocation {
 public:
  explicit LogsInvocation(po::options_description& desc) { add_logs_flags(desc, flags_); }
  void run(const GlobalFlags& global, Printer&) override {
    Session session(global, std::cerr);  // the kubeconfig first: complete() takes its namespace
    LogsOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), [&session] { return session.new_transport(); });
  }

 private:
  LogsFlags flags_;
};

}  // namespace

Command logs_command() {
  return {
      "logs",
      "Print the logs of every pod of a deployment, a role or an instance",
      "kubectl mindie logs [-n NS] [--role R [--instance K]] [-f] [--since 10m] [--tail N] [-p] [--timestamps]",
      "Print the logs of every pod of the deployment in the namespace (of one role with --role, of one instance\n"
      "with --instance), each line prefixed [role/instance/pod] as kubectl logs --prefix does, one pod after the\n"
      "other. With -f, follow them all at once, lines merged as they come, start following the pods that start\n"
      "later (a watch on the pods) and say when a followed pod goes; at most --max-log-requests streams, as kubectl\n"
      "logs -f limits them. Replaces deploy.py's --auto_log_collect.",
      "  # Every pod of the deployment in mindie-demo\n"
      "  kubectl mindie logs -n mindie-demo\n\n"
      "  # Follow the prefill pods, the last 100 lines of each first\n"
      "  kubectl mindie logs -n mindie-demo --role prefill -f --tail 100\n\n"
      "  # The last 10 minutes of instance 1 of decode, with timestamps\n"
      "  kubectl mindie logs -n mindie-demo --role decode --instance 1 --since 10m --timestamps\n",
      {},
      true,
      [](po::options_description& desc) -> std::unique_ptr<Invocation> {
        return std::make_unique<LogsInvocation>(desc);
      },
      {{"0", "the logs were printed (with -f: never, it runs until interrupted)"},
       {"1", "an error: a bad flag, no deployment or no pods, too many pods for -f, a log that could not be read"},
       {"130, 143", "interrupted by SIGINT or SIGTERM (-f), as a shell reports it"}}};
}

}  // namespace mindie::cmd
