// The command table: each subcommand registers what kubectl's cobra.Command holds (name, synopsis, description,
// examples, the -o formats it prints) and how its flags bind and run, in its own file. plugin/commands.cpp lists
// them; the entry point, --help, the command list and shell completion all read that one table.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cmd/common.h"

namespace mindie::cmd {

/// One invocation of a subcommand, its flags bound by Command::bind and filled by the parser.
class Invocation {
 public:
  virtual ~Invocation() = default;
  /// The -o value given ("" when none, or when the command has no -o): the Printer's format.
  virtual std::string output() const { return ""; }
  /// The name of the command's one positional argument, as kubectl rollout takes its subcommand ("ACTION"); ""
  /// (the default): none, a stray argument is an error.
  virtual std::string argument_name() const { return ""; }
  /// The argument's value, given before run() when argument_name() is not "" and the argument was given.
  virtual void take_argument(std::string /*value*/) {}
  /// complete() → validate() → run() of the command's Options, kubectl's order (o.Complete, o.Validate, o.Run in
  /// k8s.io/kubectl pkg/cmd/scale/scale.go and the others): complete() derives values from the flags and, where the
  /// command falls back to it, the kubeconfig's namespace; validate() checks the completed Options without I/O;
  /// the input files (config, env, overrides, scripts) are read and validated before the first request: by
  /// read_inputs() right after validate() where a command has one (deploy, update-config: a bad file is reported
  /// whatever the kubeconfig holds), else at the start of run(). The kubeconfig (per `global`; loading it sends
  /// nothing) is loaded before complete() when complete() takes its namespace (scale, status, wait: a broken
  /// kubeconfig is then reported before a bad flag, as kubectl scale reports it), otherwise after the inputs are
  /// read and only when the command needs the server (not deploy --dry-run=client). Output goes to `printer`.
  /// Throws what the Options throw.
  virtual void run(const GlobalFlags& global, Printer& printer) = 0;
  /// The exit status after run() returned: 0, or what the command found (diff: 1 for differences).
  virtual int exit_status() const { return 0; }
};

/// One exit status of a command and when it is returned: --help lists them and docs/exit-codes.md is generated from
/// that (scripts/update-docs.sh). plugin/main.cpp returns cmd::exit_code_of (cmd/interrupt.h) for an error.
struct ExitCode {
  std::string code;  ///< "0", or several with one meaning ("129, 130, 143")
  std::string when;
};

/// The exit statuses of a command that changes a deployment under the namespace lock (deploy, scale,
/// update-config, delete): 0; 1 with `errors` (what fails it, beyond the usual: flags, input, the lock held, the
/// lock taken over, API and connection errors); 128 + a signal noted at a safe point.
std::vector<ExitCode> changing_exit_codes(const std::string& errors);

/// A subcommand as the table lists it.
struct Command {
  std::string name;
  std::string summary;      ///< one line: `kubectl mindie --help` and completion list it
  std::string synopsis;     ///< the Usage line of --help
  std::string description;  ///< --help's text above the examples
  std::string examples;     ///< --help's Examples block
  /// The -o values it accepts, taken from its OutputFlags (cmd/output_flags.h), whose validation and help line
  /// read the same list; completion offers them. Empty: no -o.
  std::vector<std::string> outputs;
  bool global_flags = true;  ///< takes the connection flags (--kubeconfig, -n, ...); version does not
  /// Adds the command's own flags to `desc` (not --help, not the global flags) and returns the invocation they are
  /// bound to.
  std::function<std::unique_ptr<Invocation>(boost::program_options::options_description& desc)> bind;
  std::vector<ExitCode> exit_codes;  ///< every status it returns, in --help's "Exit codes:" block
  /// The status of an error that would be 1 (a bad flag, an API error): diff's 2, since 1 means differences there
  /// (k8s.io/kubectl pkg/cmd/util/helpers.go, CheckDiffErr).
  int error_exit_status = 1;
};

}  // namespace mindie::cmd
