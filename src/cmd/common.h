// What every subcommand shares: global flags, the connection to the API server, kubectl-style output and errors.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "change/errors.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "mindie/config.h"
#include "mindie/env_config.h"

namespace mindie::cmd {

/// Flags accepted by every subcommand (kubectl's names).
struct GlobalFlags {
  /// --kubeconfig, --context, --cluster, --user, -n/--namespace, -s/--server, --token, --tls-server-name,
  /// --insecure-skip-tls-verify, --request-timeout
  kube::KubeconfigFlags kube;
  int verbosity = 0;  ///< -v/--v: 6 logs requests, 8 also bodies
};

/// Adds the global flags to `desc`, bound to `flags`.
void add_global_flags(boost::program_options::options_description& desc, GlobalFlags& flags);

/// --dry-run values (kubectl's): none sends writes, client prints without contacting the cluster, server sends
/// writes with dryRun=All.
enum class DryRun { None, Client, Server };
/// Parses "none" | "client" | "server" (kubectl also accepts an empty value as "client"). Throws UsageError.
DryRun parse_dry_run(const std::string& s);

/// A command-line mistake (bad flag value, missing argument): printed as "error: ..." with exit 1, before any
/// request.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using change::CommandError;    // "error: ..." (change/errors.h)
using change::PartialFailure;  // the cause, then what the failure left and its recovery

/// Output in kubectl's style. `format` is "" (human), "json", "yaml" or "name".
class Printer {
 public:
  /// `out` receives results, `err` warnings.
  Printer(std::ostream& out, std::ostream& err, std::string format);
  /// "Warning: msg" on the error stream, as kubectl shows server warnings; kept back while hold_warnings() is on.
  void warning(const std::string& msg);
  /// Keeps warnings back until release_warnings() prints them or drop_warnings() forgets them: a command that
  /// may plan again after taking the namespace lock (NamespaceLock) prints only what its final plan saw.
  void hold_warnings() { holding_ = true; }
  void release_warnings();
  void drop_warnings() { held_.clear(); }
  /// A line on the error stream as it is (progress, notices), never held back.
  void notice(const std::string& line);
  const std::string& format() const { return format_; }
  /// "kind.group/name verb[ (dry run)| (server dry run)]"; with -o name only "kind.group/name".
  void mutation(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run);
  /// Queues `obj` for -o json|yaml, without metadata.managedFields (kubectl hides them by default).
  /// flush() prints what was queued.
  void object(boost::json::object obj);
  /// What a command did to one object: with -o json|yaml `after` (the object as it is after the command, or would be
  /// in a dry run; for a delete the object as it was deleted; {} shows nothing) is queued; otherwise mutation()
  /// prints the line.
  void result(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run,
              boost::json::object after);
  /// An object that -o json|yaml shows, as it is after the command, beside the results (the baseline a scale
  /// wrote); nothing in the other formats, whose lines name what changed.
  void shown_object(boost::json::object obj);
  /// What a command shows of one object (status): with -o json|yaml `obj`, with -o name "kind.group/name", otherwise
  /// the text `table` draws (its argument: -o wide).
  void view(const kube::GVR& r, const std::string& name, boost::json::object obj,
            const std::function<std::string(bool wide)>& table);
  /// view() of a report on several objects: -o name prints each "kind.group/name" of `names`.
  void view(const std::vector<std::pair<kube::GVR, std::string>>& names, boost::json::object obj,
            const std::function<std::string(bool wide)>& table);
  /// An object the command reports on without changing it (what wait waited for): -o name prints
  /// "kind.group/name", -o json|yaml queues it; the human format shows it through summary().
  void subject(const kube::GVR& r, boost::json::object obj);
  /// The human format's line for what the command did as a whole ("... condition met", "No resources found in
  /// NS namespace."); nothing in the other formats, which show the objects.
  void summary(const std::string& line);
  /// flush() prints the queued objects as a `kind: List` even when there are none or one (delete's answer).
  void always_list() { always_list_ = true; }
  /// Prints the queued objects: one as itself, several as a `kind: List` (as kubectl prints several objects).
  void flush();
  std::ostream& out() { return out_; }

 private:
  std::ostream& out_;
  std::ostream& err_;
  std::string format_;
  std::vector<boost::json::object> queued_;
  bool always_list_ = false;
  bool holding_ = false;
  std::vector<std::string> held_;
};

/// Parses a Go duration as kubectl's --timeout takes it ("30s", "10m", "1h30m", "500ms", "0"); a bare number is
/// seconds. Throws UsageError naming `flag` for anything else or a negative value.
std::chrono::milliseconds parse_duration(const std::string& text, const std::string& flag);

/// Refuses a -n value that is not a DNS-1123 label (namespace names are; anything else could only form a wrong
/// request path). "" (not given) passes. Throws UsageError.
void check_namespace_syntax(const std::string& namespace_flag);

/// A transport for --dry-run=client: any request is a programming error, so it throws std::logic_error.
class OfflineTransport : public kube::HttpTransport {
 public:
  kube::HttpResponse send(const kube::HttpRequest& req) override;
  using kube::HttpTransport::stream;
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override;
  std::string server() const override { return "(offline)"; }
};

/// The live connection: transport chain (libcurl, optional -v logging, retries of requests safe to repeat) and
/// the REST client over it.
class Session {
 public:
  /// Loads the kubeconfig per `flags`; throws kube::KubeconfigError. Sends nothing. `max_request_timeout` (> 0):
  /// every request, its retries included, ends within it even when --request-timeout is longer or unset (the
  /// mutating commands pass kLockRequestBound).
  explicit Session(const GlobalFlags& flags, std::ostream& log,
                   std::chrono::milliseconds max_request_timeout = std::chrono::milliseconds(0));
  ~Session();
  kube::Client& client() { return *client_; }
  const kube::RestConfig& rest_config() const { return rest_; }
  /// Another transport chain like client()'s (libcurl, -v logging, retries), from the same RestConfig and with
  /// its own connection and credentials, for use on another thread (a watch): transports are not thread-safe.
  /// It logs to the Session's log stream, which must outlive it. Sends nothing when created.
  std::unique_ptr<kube::HttpTransport> new_transport() const;
  /// From now on every request of client() and of the transports new_transport() makes ends by `deadline`
  /// (kube::DeadlineTransport; `what` heads the error of one that does not, e.g. "timed out waiting for the
  /// condition (--timeout 5s)"): for commands whose --timeout bounds the whole of what they do.
  void set_deadline(std::chrono::steady_clock::time_point deadline, const std::string& what);

 private:
  int verbosity_;
  std::ostream& log_;
  kube::RestConfig rest_;
  std::unique_ptr<kube::HttpTransport> transport_;  // the chain under client_
  std::unique_ptr<kube::Client> client_;
  std::optional<std::pair<std::chrono::steady_clock::time_point, std::string>> deadline_;
};

/// The config files a command reads: -f FILE [-e FILE], or --config-dir DIR (DIR/user_config.json and, when it
/// exists, DIR/env.json), as deploy.py's --config_dir.
struct ConfigInputs {
  config::UserConfig user;
  std::optional<config::EnvConfig> env;
  /// Where env.json came from when neither -e nor --config-dir named it: motor_deploy_config.env_path, PyMotor's key,
  /// resolved against the folder of user_config.json ("" otherwise).
  std::string env_from_config;
};

/// Checks that exactly one of -f / --config-dir is given and -e is not combined with --config-dir. No I/O.
/// Throws UsageError.
void check_config_input_flags(const std::string& filename, const std::string& env_file, const std::string& config_dir);

/// Reads and validates the files named by the flags; with -f alone, env.json from the config's
/// motor_deploy_config.env_path when it names one (relative to user_config.json's folder). Throws CommandError (an
/// env_path whose file is missing) / validation::ValidationError.
ConfigInputs read_config_inputs(const std::string& filename, const std::string& env_file,
                                const std::string& config_dir);

/// What a --scripts-dir holds for motor-config (deploy and update-config): the keys deploy.py stores, read from
/// one of three layouts (Ascend/MindIE-PyMotor 7d15c04 examples/deployer/lib/generator/k8s_utils.py,
/// create_motor_config_configmap):
/// - PyMotor's deployer folder (it has startup/): startup/<key>, startup/roles/<key>, probe/<key>;
/// - its startup/ folder (it has roles/): <key>, roles/<key>, and ../probe/<key> when that folder exists;
/// - a flat folder: <key>.
struct ScriptsDir {
  std::string dir;     ///< as given
  std::string layout;  ///< "PyMotor's deployer folder", "the deployer's startup folder" or "a flat folder"
  std::map<std::string, std::string> scripts;  ///< key -> content, byte for byte
  /// Entries read but not stored (not keys deploy.py stores), relative to `dir`, folders with a trailing '/'.
  std::vector<std::string> left_out;
  /// Where this layout looks for `key` ("DIR/startup/roles/engine.sh").
  std::string expected_path(const std::string& key) const;
  /// One line listing left_out for a warning; "" when nothing was left out.
  std::string left_out_notice() const;
};

/// Reads `dir` (see ScriptsDir). Key names, UTF-8, collisions with the config keys and the ConfigMap size are
/// checked by render::render_config_map, before any request. Throws CommandError when `dir` is not a directory, a
/// file cannot be read, an entry is a broken symbolic link, a file to store resolves outside the folder (a symbolic
/// link out of it: each one named, none read), two files map to one key, or a file is named env_functions.sh
/// (env_script::kEnvFunctionsKey, which the tool generates).
ScriptsDir read_scripts(const std::string& dir);

/// Throws CommandError listing every key of `needed` (deployer_scripts::needed) that `given` lacks, each with where
/// it was looked for.
void check_needed_scripts(const ScriptsDir& given, const std::vector<std::string>& needed);

/// Writes of the baseline that meet a 409 Conflict are re-read, re-checked and retried at most this many times
/// in all (scale, update-config): never a blind overwrite, never an endless loop.
inline constexpr int kBaselineWriteAttempts = 3;

/// Reads a whole file. Throws CommandError naming the file and the OS reason.
std::string read_file(const std::string& path);

/// Writes `text` to `path` as a new file (the umask's usual mode) renamed over it, so a symbolic link planted at
/// `path` is never followed: one found there is refused, naming it; one planted meanwhile is replaced, its target
/// untouched. The folders on the way are resolved as the OS does. Throws CommandError naming the file.
void write_file_no_follow(const std::string& path, const std::string& text);

/// The namespace of a deployment is its config's `job_id`; an explicit -n that differs is an error naming both
/// values (never a silent choice). `namespace_flag` is the -n value as given ("" = not given). Throws UsageError.
void check_namespace_flag(const std::string& namespace_flag, const std::string& job_id);

/// True when the outcome of a write that failed with `cause` is unknown: no answer (TransportError) or a 5xx, after
/// which it may or may not have been applied; a read tells.
bool outcome_unknown(const std::exception_ptr& cause);

/// Server-side apply of `obj` as `r` for deploy. A conflict only with the tool's own earlier patches (scale and
/// update-config write with field manager kubectl-mindie as an Update) is taken over with force; any other
/// conflict fails with kubectl apply --server-side's advice (PartialFailure carrying the ApiError). Other errors
/// propagate (ApiError, TransportError).
/// `before_force` (when given) runs before the forced re-send: under the namespace lock it confirms the lock is
/// still ours (throwing LockLost), since the "own" earlier patch may be a rival's that took the lock over.
boost::json::object apply_taking_back_own_fields(kube::Client& client, const kube::GVR& r,
                                                 const boost::json::object& obj, const kube::WriteOptions& opts,
                                                 const std::function<void()>& before_force = {});

/// Appends the `items` of a list of `kind` to `out`, each with "kind" set: a list answer leaves it out of its items,
/// and readers of a mixed array (StatefulSets and Deployments) need it.
void append_with_kind(boost::json::array& out, const boost::json::array& items, const std::string& kind);

}  // namespace mindie::cmd
