// kubectl mindie wait --for=ready: block until every role of a deployment has its instances ready, through the
// watch API; also behind deploy --wait and scale --wait.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

/// What wait_until_ready waited for, once ready.
struct WaitedFor {
  /// As messages name it: "inferserviceset.mindcluster.huawei.com/NAME", or for multi_deployment "the Deployments of
  /// NAME" (no object is named NAME).
  std::string subject;
  const kube::GVR* gvr = nullptr;  ///< the kind of `objects`
  /// The workload objects as they are once ready (the InferServiceSet; multi_deployment: its Deployments), each with
  /// apiVersion and kind.
  std::vector<boost::json::object> objects;
  /// "kind.group/name" of each of `objects`, as kubectl wait names what met the condition.
  std::vector<std::string> names() const;
};

/// `deadline`, or sooner the moment `report` would change with nothing else changing (Report::recheck_at), at
/// least a second away: when a watcher of the deployment must judge again.
std::chrono::steady_clock::time_point next_judgement(const status::Report& report,
                                                     std::chrono::steady_clock::time_point deadline);

/// What watch_reports saw last.
struct Watched {
  status::StatusInputs inputs;
  status::Report report;
  bool accepted = false;  ///< `judge` accepted `report` (else the deadline passed)
};

/// Reads the deployment in `ns` once (read_status_inputs) and, until `judge` accepts a report built from what was
/// read, keeps it current through the watch API (status_watch_targets, or multi_status_watch_targets; each watch on
/// a connection from `new_transport`), judging each change, until `deadline`, when it judges once more. `check`
/// (may be empty) is called at least once a second while it waits (to throw Interrupted after a noted Ctrl-C).
/// Throws what read_status_inputs throws.
Watched watch_reports(kube::Client& client, const kube::Informer::TransportFactory& new_transport,
                      const std::string& ns, std::chrono::steady_clock::time_point deadline,
                      const std::function<bool(const status::Report&)>& judge, const std::function<void()>& check = {});

/// How messages name the workload of `report`: "inferserviceset.mindcluster.huawei.com/NAME", or for
/// multi_deployment "the Deployments of NAME" (no object is named NAME).
std::string workload_subject(const status::Report& report);

/// Waits until the deployment in `ns` is ready as status defines it (status::Report::ready: every role's instances
/// healthy, the operator has observed the current generation, removed instances' pods gone). Reads once; when not
/// ready, watches (each watch on a connection from `new_transport`) until ready or `timeout` passes. `progress` (may
/// be null) gets "ready instances x/y per role" lines redrawn in place (a terminal). Returns what was waited for
/// (WaitedFor). Throws CommandError on timeout, naming every pod that is
/// not ready and why, and the errors of read_status_inputs. `check` (may be empty) is called at least once a
/// second while it waits, e.g. to throw Interrupted after a noted Ctrl-C. The caller bounds its requests by the
/// same timeout (Session::set_deadline), so that a request that hangs cannot outlast it.
WaitedFor wait_until_ready(kube::Client& client, const kube::Informer::TransportFactory& new_transport,
                           const std::string& ns, std::chrono::milliseconds timeout, std::ostream* progress,
                           const std::function<void()>& check = {});

/// --wait and --timeout of commands that change a deployment (deploy, scale), as kubectl apply names them.
struct WaitAfterFlags {
  bool wait = false;            ///< --wait: after the change, wait until ready
  std::string timeout = "10m";  ///< --timeout, a Go duration
};

/// Binds WaitAfterFlags to `desc`.
void add_wait_after_flags(boost::program_options::options_description& desc, WaitAfterFlags& flags);

/// Checks the flags against the command's --dry-run (nothing to wait for in a dry run) and returns the timeout.
/// No I/O. Throws UsageError.
std::chrono::milliseconds check_wait_after_flags(const WaitAfterFlags& flags, DryRun dry_run);

/// wait's own flags, as given.
struct WaitFlags {
  std::string for_condition;    ///< --for: only "ready"
  std::string timeout = "10m";  ///< --timeout, a Go duration
  OutputFlags output{{"json", "yaml", "name"}, "Output format", " (the objects waited for)"};  ///< -o
};

/// Binds WaitFlags to `desc`.
void add_wait_flags(boost::program_options::options_description& desc, WaitFlags& flags);

/// The wait command, in kubectl's order: complete(), validate(), run().
class WaitOptions {
 public:
  WaitOptions(WaitFlags flags, std::string namespace_flag);
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// -n's syntax, --for, --timeout (kept for run()) and -o values; no I/O. Throws UsageError.
  void validate();
  /// Prints "inferserviceset.mindcluster.huawei.com/NAME condition met" once ready (kubectl wait's words); -o name
  /// names the objects waited for, -o json|yaml prints them as they are then (a List when several).
  /// Throws CommandError on timeout, ApiError / TransportError when the cluster cannot be read.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  WaitFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  std::chrono::milliseconds timeout_{0};
};

/// --wait after deploy or scale: once `printer` has shown the changes, waits (wait_until_ready, per `flags`) for
/// the deployment in `ns`, with progress on a terminal's stderr, and prints "SUBJECT ready" in the human format.
/// Nothing when --wait was not given. --timeout bounds its requests too. A Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends
/// it with Interrupted saying that the change itself is done. Throws what wait_until_ready throws.
void wait_after(Session& session, const WaitAfterFlags& flags, const std::string& ns, Printer& printer);

/// The wait command for the command table (cmd/command.h).
Command wait_command();

}  // namespace mindie::cmd
