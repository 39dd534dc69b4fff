// kubectl-mindie: deploy, scale, update-config and status of MindIE PyMotor services on Kubernetes.
// Entry point: picks the subcommand, binds its flags, runs complete() -> validate() -> run(), and maps errors to
// kubectl's output conventions (stderr, exit 1).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "cmd/update_config.h"
#include "cmd/wait.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "mindie/config.h"

namespace po = boost::program_options;
using namespace mindie;

namespace {

constexpr const char* kUsage =
    "kubectl mindie deploys, scales and watches MindIE PyMotor inference services on Ascend clusters.\n"
    "\n"
    "Usage:\n"
    "  kubectl mindie COMMAND [flags]\n"
    "\n"
    "Commands:\n"
    "  deploy         Validate user_config.json and deploy it (motor-config baseline, RBAC, InferServiceSet)\n"
    "  scale          Change prefill/decode instance counts of a running deployment\n"
    "  update-config  Refresh settings in the motor-config baseline (log levels, timeouts, north config)\n"
    "  status         Show roles, instances and pods, why pods are not ready, and drift from the baseline\n"
    "  wait           Wait until every role has its instances ready\n"
    "  version        Print the version\n"
    "\n"
    "Use \"kubectl mindie COMMAND --help\" for more information about a command.\n";

struct CommandHelp {
  const char* synopsis;
  const char* description;
  const char* examples;
};

const std::map<std::string, CommandHelp>& command_help() {
  static const std::map<std::string, CommandHelp> help = {
      {"deploy",
       {"kubectl mindie deploy (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
        "Validate the config completely, then write the motor-config ConfigMap (the baseline), the controller's\n"
        "RBAC and the InferServiceSet by server-side apply. The namespace is motor_deploy_config.job_id.",
        "  # Deploy from a folder holding user_config.json and env.json\n"
        "  kubectl mindie deploy --config-dir ./conf\n\n"
        "  # Print the objects without contacting the cluster\n"
        "  kubectl mindie deploy -f user_config.json --dry-run=client -o yaml\n"}},
      {"scale",
       {"kubectl mindie scale [-n NS] (--prefill N | --decode M | -f user_config.json) [flags]",
        "Change instance counts only: JSON-patch spec.template.roles[i].replicas of the live InferServiceSet\n"
        "(guarded by test ops), then the baseline. If the baseline cannot be updated, the patch is undone.",
        "  # Three prefill instances, two decode instances\n"
        "  kubectl mindie scale -n mindie-demo --prefill 3 --decode 2\n\n"
        "  # Take the counts from an edited config (nothing else may differ)\n"
        "  kubectl mindie scale -f user_config.json\n"}},
      {"update-config",
       {"kubectl mindie update-config (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
        "Refresh the motor-config ConfigMap. Only the deployer's whitelisted paths may change (log levels,\n"
        "observability, coordinator exception/timeout settings, north_config, north TLS files); instance counts\n"
        "and deploy_mode must equal the baseline.",
        "  # Raise the coordinator's log level\n"
        "  kubectl mindie update-config -f user_config.json\n"}},
      {"status",
       {"kubectl mindie status [-n NS] [-o wide|json|yaml] [-w]",
        "Show, per role, the baseline's instances, the live spec and what the operator has observed; the tree\n"
        "InferServiceSet -> InferService -> role -> instance -> pods with ready containers, status, restarts and\n"
        "age; why pods are not ready (unschedulable, image pulls, crash loops, OOM kills, stuck terminating) with\n"
        "their latest warning events; and drift between the baseline and the live InferServiceSet.",
        "  # The deployment in namespace mindie-demo\n"
        "  kubectl mindie status -n mindie-demo\n\n"
        "  # With nodes and NPUs per pod\n"
        "  kubectl mindie status -n mindie-demo -o wide\n\n"
        "  # Keep watching (redrawn on a terminal, one line per change in a pipe)\n"
        "  kubectl mindie status -n mindie-demo --watch\n\n"
        "  # Machine-readable\n"
        "  kubectl mindie status -n mindie-demo -o json\n"}},
      {"wait",
       {"kubectl mindie wait [-n NS] --for=ready [--timeout 10m]",
        "Wait until every role has its instances ready and the operator has observed the latest change. Exits 0\n"
        "once ready; on timeout exits 1 naming every pod that is not ready and why.",
        "  # Wait up to 15 minutes for the deployment in mindie-demo\n"
        "  kubectl mindie wait -n mindie-demo --for=ready --timeout 15m\n"}},
  };
  return help;
}

/// kubectl accepts "-n=ns" and "-v=8"; Boost reads a short option's value only as "-nns" or "-n ns".
std::vector<std::string> normalize_args(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 3 && a[0] == '-' && a[1] != '-' && a[2] == '=') {
      out.push_back(a.substr(0, 2));
      out.push_back(a.substr(3));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

/// Index of the subcommand: the first argument that is neither a flag nor the value of a global flag.
std::ptrdiff_t find_command(const std::vector<std::string>& args) {
  static const std::set<std::string> takes_value = {
      "--kubeconfig", "--context", "--cluster", "--user", "-n", "--namespace", "-s", "--server", "--token",
      "--tls-server-name", "--request-timeout", "-v", "--v"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] != '-') return static_cast<std::ptrdiff_t>(i);
    if (takes_value.count(args[i])) ++i;
  }
  return -1;
}

void print_help(const std::string& name, const po::options_description& desc) {
  const auto& h = command_help().at(name);
  std::cout << h.description << "\n\nExamples:\n" << h.examples << "\nOptions:\n" << desc << "\nUsage:\n  "
            << h.synopsis << "\n";
}

/// Prints `e` the way kubectl does and returns the exit code.
int report(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const kube::ApiError& e) {
    std::cerr << e.render() << '\n';
  } catch (const cmd::PartialFailure& e) {
    report(e.cause());
    std::cerr << e.what() << '\n';
  } catch (const kube::TransportError& e) {
    std::cerr << "error: " << e.what() << '\n';  // the message already says "Unable to connect to the server"
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
  }
  return 1;
}

int run(const std::vector<std::string>& all_args) {
  const std::ptrdiff_t at = find_command(all_args);
  if (at < 0) {
    if (!all_args.empty() && all_args[0] == "--version") {
      std::cout << "kubectl-mindie " << MINDIE_VERSION << '\n';
      return 0;
    }
    const bool asked = all_args.empty() || all_args[0] == "--help" || all_args[0] == "-h";
    if (!asked) std::cerr << "error: a command is required\n";
    (asked ? std::cout : std::cerr) << kUsage;
    return asked ? 0 : 1;
  }
  const std::string name = all_args[static_cast<std::size_t>(at)];
  std::vector<std::string> args = all_args;
  args.erase(args.begin() + at);

  if (name == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (name == "version") {
    std::cout << "kubectl-mindie " << MINDIE_VERSION << '\n';
    return 0;
  }
  if (!command_help().count(name)) {
    std::cerr << "error: unknown command \"" << name << "\" for \"kubectl mindie\"\n"
              << "Run 'kubectl mindie --help' for usage.\n";
    return 1;
  }

  cmd::GlobalFlags global;
  bool help = false;
  po::options_description desc;
  desc.add_options()("help,h", po::bool_switch(&help), "Help for this command");

  cmd::DeployFlags deploy_flags;
  cmd::ScaleFlags scale_flags;
  cmd::UpdateConfigFlags update_flags;
  cmd::StatusFlags status_flags;
  cmd::WaitFlags wait_flags;
  if (name == "deploy") cmd::add_deploy_flags(desc, deploy_flags);
  if (name == "scale") cmd::add_scale_flags(desc, scale_flags);
  if (name == "update-config") cmd::add_update_config_flags(desc, update_flags);
  if (name == "status") cmd::add_status_flags(desc, status_flags);
  if (name == "wait") cmd::add_wait_flags(desc, wait_flags);
  po::options_description globals("Global flags");
  cmd::add_global_flags(globals, global);
  desc.add(globals);

  try {
    po::variables_map vm;
    // kubectl accepts no abbreviated flags: "--pre 4" must not silently mean --prefill. An empty positional
    // description makes any stray argument an error instead of being ignored.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).positional({}).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "error: " << e.what() << "\nSee 'kubectl mindie " << name << " --help' for usage.\n";
    return 1;
  }
  if (help) {
    print_help(name, desc);
    return 0;
  }

  const std::string& ns_flag = global.kube.namespace_;
  const std::string output = name == "deploy" ? deploy_flags.output
                             : name == "scale" ? scale_flags.output
                             : name == "status" ? status_flags.output
                                                : std::string();
  cmd::Printer printer(std::cout, std::cerr, output);
  // --wait after deploy/scale: the changes are printed first, progress goes to a terminal's stderr.
  const auto wait_after = [&](cmd::Session& session, const cmd::WaitAfterFlags& flags, const std::string& ns) {
    if (!flags.wait) return;
    printer.flush();
    std::cout << std::flush;  // what changed is visible before the wait begins
    std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
    const std::string iss = cmd::wait_until_ready(session.client(), [&session] { return session.new_transport(); },
                                                  ns, cmd::parse_duration(flags.timeout, "--timeout"), progress);
    if (output.empty()) std::cout << kube::gvr::kInferServiceSets.kind_dot_group() << "/" << iss << " ready\n";
  };
  try {
    if (name == "deploy") {
      cmd::DeployOptions o(deploy_flags, ns_flag);
      o.validate();
      o.complete();
      if (!o.needs_server()) {
        cmd::OfflineTransport offline;
        kube::Client client(offline);
        o.run(client, printer);
      } else {
        cmd::Session session(global, std::cerr);
        o.run(session.client(), printer);
        wait_after(session, deploy_flags.wait, o.target_namespace());
      }
    } else if (name == "scale") {
      cmd::ScaleOptions o(scale_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer);
      wait_after(session, scale_flags.wait, o.target_namespace());
    } else if (name == "update-config") {
      cmd::UpdateConfigOptions o(update_flags, ns_flag);
      o.validate();
      o.complete();
      cmd::Session session(global, std::cerr);
      o.run(session.client(), printer);
    } else if (name == "status") {
      cmd::StatusOptions o(status_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
    } else if (name == "wait") {
      cmd::WaitOptions o(wait_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
    }
    printer.flush();
  } catch (...) {
    // What succeeded before the failure is still shown, as kubectl does.
    try {
      printer.flush();
    } catch (const std::exception&) {  // the original error matters more than a failed print
    }
    return report(std::current_exception());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(normalize_args(argc, argv));
  } catch (...) {
    return report(std::current_exception());
  }
}
