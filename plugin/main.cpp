// kubectl-mindie: deploy, scale, update-config and status of MindIE PyMotor services on Kubernetes.
// Entry point: finds the subcommand in the command table (commands.h), binds its flags and the global ones, runs
// the invocation (complete() -> validate() -> run() of its Options, kubectl's order), and maps errors to kubectl's
// output conventions (stderr, exit 1).
#include <malloc.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "cmd/interrupt.h"
#include "commands.h"
#include "completion.h"
#include "help.h"
#include "kube/client.h"
#include "kube/logging_transport.h"
#include "util/terminal.h"

namespace po = boost::program_options;
using namespace mindie;

namespace {

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
      "--kubeconfig", "--context",         "--cluster",         "--user", "-n", "--namespace", "-s", "--server",
      "--token",      "--tls-server-name", "--request-timeout", "-v",     "--v"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] != '-') return static_cast<std::ptrdiff_t>(i);
    if (takes_value.count(args[i])) ++i;
  }
  return -1;
}

/// The "Exit codes:" block of --help: each code in a column of 17, its meaning wrapped at 110 columns beside it
/// (scripts/update-docs.sh joins the lines back into docs/exit-codes.md).
std::string exit_codes_block(const std::vector<cmd::ExitCode>& codes) {
  std::string out = "\nExit codes:\n";
  for (const auto& [code, when] : codes) {
    std::string line = "  " + code;
    line.resize(std::max<std::size_t>(line.size() + 2, 17), ' ');
    const std::size_t column = line.size();
    out += wrap_words(when, std::move(line), column, std::string(17, ' '), 17, 110) + "\n";
  }
  return out;
}

/// The flags every command takes, bound to `global`.
po::options_description global_flags(cmd::GlobalFlags& global) {
  po::options_description globals;
  cmd::add_global_flags(globals, global);
  return globals;
}

/// A flag parse error in kubectl's words ("unknown flag: --decod") where kubectl has them, else Boost's.
std::string flag_error(const po::error& e) {
  if (const auto* unknown = dynamic_cast<const po::unknown_option*>(&e)) {
    const std::string flag = unknown->get_option_name();
    if (flag.size() == 2 && flag[0] == '-') return "unknown shorthand flag: '" + flag.substr(1) + "' in " + flag;
    return "unknown flag: " + flag;
  }
  return e.what();
}

/// "unknown command" as Cobra words it, with its suggestions.
int unknown_command(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& c : commands()) names.push_back(c.name);
  names.push_back("options");
  std::cerr << "error: unknown command \"" << util::escape_terminal(name) << "\" for \"kubectl mindie\"\n";
  if (const auto near = suggestions(name, names); !near.empty()) {
    std::cerr << "\nDid you mean this?\n";
    for (const auto& n : near) std::cerr << "\t" << n << "\n";
  }
  std::cerr << "\nRun 'kubectl mindie --help' for usage.\n";
  return 1;
}

/// An error's text as printed: names in it (files, objects, the server's words) cannot drive the terminal, and a
/// password in a URL (the server's, a proxy's) is masked wherever the message took it from.
std::string shown(std::string_view text) { return util::escape_terminal(kube::redact_url_passwords(text)); }

/// Prints `e` the way kubectl does and returns the exit code: 1, or 128 + the signal of an interrupted command.
int report(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const kube::ApiError& e) {
    std::cerr << shown(e.render()) << '\n';
  } catch (const cmd::PartialFailure& e) {
    report(e.cause());
    std::cerr << shown(e.what()) << '\n';
  } catch (const kube::TransportError& e) {
    std::cerr << "error: " << shown(e.what()) << '\n';  // the message already says "Unable to connect to the server"
  } catch (const std::exception& e) {
    std::cerr << "error: " << shown(e.what()) << '\n';
  }
  return cmd::exit_code_of(error);
}

int run(const std::vector<std::string>& all_args) {
  const std::ptrdiff_t at = find_command(all_args);
  if (at < 0) {
    if (!all_args.empty() && all_args[0] == "--version") return run({"version"});
    const bool asked = all_args.empty() || all_args[0] == "--help" || all_args[0] == "-h";
    if (!asked) std::cerr << "error: a command is required\n";
    (asked ? std::cout : std::cerr) << usage();
    return asked ? 0 : 1;
  }
  const std::string name = all_args[static_cast<std::size_t>(at)];
  std::vector<std::string> args = all_args;
  args.erase(args.begin() + at);

  cmd::GlobalFlags global;
  if (name == "options") {
    std::cout << options_help(global_flags(global));
    return 0;
  }
  if (name == "help" && !args.empty()) return run({args[0], "--help"});  // kubectl help COMMAND
  if (name == "help") {
    std::cout << usage();
    return 0;
  }
  const cmd::Command* command = mindie::find_command(name);
  if (!command) return unknown_command(name);

  bool help = false;
  po::options_description own;
  own.add_options()("help,h", po::bool_switch(&help), "Help for this command");
  const std::unique_ptr<cmd::Invocation> invocation = command->bind(own);
  po::options_description desc;
  desc.add(own);
  if (command->global_flags) desc.add(global_flags(global));
  // The command's argument, if it takes one, as a positional option --help does not list; any other stray
  // argument is an error instead of being ignored.
  std::string argument;
  po::positional_options_description positional;
  if (!invocation->argument_name().empty()) {
    desc.add_options()("argument", po::value(&argument));
    positional.add("argument", 1);
  }
  try {
    po::variables_map vm;
    // kubectl accepts no abbreviated flags: "--pre 4" must not silently mean --prefill.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "error: " << shown(flag_error(e)) << "\nSee 'kubectl mindie " << name << " --help' for usage.\n";
    return command->error_exit_status;
  }
  if (help) {
    std::cout << command_help(*command, own) << exit_codes_block(command->exit_codes);
    return 0;
  }

  if (!argument.empty()) invocation->take_argument(argument);
  cmd::Printer printer(std::cout, std::cerr, invocation->output());
  try {
    invocation->run(global, printer);
    printer.flush();
  } catch (...) {
    // What succeeded before the failure is still shown, as kubectl does.
    try {
      printer.flush();
    } catch (const std::exception&) {  // the original error matters more than a failed print
    }
    const int code = report(std::current_exception());
    return code == 1 ? command->error_exit_status : code;
  }
  return invocation->exit_status();
}

}  // namespace

int main(int argc, char** argv) {
  // status on a large fleet parses megabytes of list pages into arenas freed page by page; glibc would hand each
  // large block back to the kernel and fault fresh pages in for the next one. Keeping freed memory for reuse cut
  // status's CPU time by about a fifth (BENCHMARKS.md); this process is short-lived or (--watch) bounded by a page.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Completion: `kubectl-mindie __complete WORDS...` (Cobra's hidden command), or this binary run under the name
  // kubectl_complete-mindie (a symlink); the words are taken as typed.
  const std::string self = argc > 0 ? argv[0] : "";
  const bool as_completer = self.substr(self.rfind('/') + 1) == "kubectl_complete-mindie";
  const std::string first = argc > 1 ? argv[1] : "";
  if (as_completer || first == "__complete" || first == "__completeNoDesc") {
    const int skip = as_completer ? 1 : 2;
    return mindie::complete(std::vector<std::string>(argv + skip, argv + argc), first != "__completeNoDesc", std::cout);
  }
  try {
    return run(normalize_args(argc, argv));
  } catch (...) {
    return report(std::current_exception());
  }
}
