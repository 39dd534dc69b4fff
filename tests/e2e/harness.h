// End-to-end test harness: runs the real mindie-sandbox and the real kubectl-mindie binary as child processes.
// Synchronisation is by pipes (the sandbox prints "ready URL" once it serves), never by sleeping.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace e2e {

/// The example the project ships: its folder (user_config.json, env.json), its config and its stand-in scripts.
inline const std::string kExampleDir = std::string(MINDIE_SOURCE_DIR) + "/examples";
inline const std::string kExample = kExampleDir + "/user_config.json";
inline const std::string kScripts = kExampleDir + "/scripts";
/// The example's namespace (its job_id) and the request path of its motor-config ConfigMap.
inline const std::string kExampleNamespace = "mindie-demo";
inline const std::string kExampleConfigMapPath = "/api/v1/namespaces/mindie-demo/configmaps/motor-config";

/// The result of one kubectl-mindie run.
struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// One line of the sandbox's request log.
struct LoggedRequest {
  std::string method;
  std::string path;
  std::string query;
  std::string content_type;
  std::string body;
  int status = 0;  ///< 0: not answered (a hang or drop fault)
  bool is_write() const { return method != "GET"; }
};

/// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// Writes `content` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

/// Writes the example's stand-in scripts (kScripts, a flat folder of every script the pods run) into
/// dir.path()/`sub`, for a test that then replaces or adds some of them.
void write_stand_in_scripts(const TempDir& dir, const std::string& sub);

/// A running sandbox API server. `extra_args` are added to its command line (e.g. "--no-crd",
/// "--fault", "PATCH:...:409:1"). Always started with --simulate-operator, the shared InferServiceSet CRD and
/// namespaces `mindie-demo` and `mindie-motor`. `listen` is its --listen address (e.g. "[::1]:0" for IPv6).
class Sandbox {
 public:
  /// An extra argument of the harness, not passed to the sandbox: start it without Volcano's PodGroup CRD (by
  /// default it serves scheduling.volcano.sh/v1beta1 podgroups, as a MindCluster cluster does).
  static constexpr const char* kNoVolcano = "--harness-no-volcano";
  explicit Sandbox(std::vector<std::string> extra_args = {}, std::string listen = "127.0.0.1:0");
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& url() const { return url_; }
  /// Every request logged so far.
  std::vector<LoggedRequest> requests() const;
  /// Requests logged after the first `since` ones.
  std::vector<LoggedRequest> requests_since(std::size_t since) const;
  /// Runs kubectl-mindie with `args` plus --kubeconfig of this sandbox.
  Run mindie(std::vector<std::string> args) const;
  /// The command line mindie() runs, for run_processes().
  std::vector<std::string> mindie_argv(std::vector<std::string> args) const;
  /// POSTs `body` to a sandbox control endpoint (`path`: "/sandbox/pod-state", "/sandbox/close-watches" or
  /// "/sandbox/compact") through the real kubectl (`create --raw`, so with this sandbox's token and CA). exit_code 0
  /// and the answer's JSON in `out` on success; on an error Status (404 nothing matched, 400 bad body) exit_code 1
  /// and kubectl's message in `err`. The control request is not in the request log, but /usr/bin/kubectl (gcloud's
  /// version dispatcher) sends one `GET /version?timeout=5s` first, which is: count requests after control calls.
  Run control(const std::string& path, const nlohmann::json& body = nlohmann::json::object()) const;

 private:
  TempDir dir_;
  std::string kubeconfig_;
  std::string log_;
  std::string url_;
  int pid_ = -1;
};

/// A process running in the background while the test acts (a watch, a wait): its output is read as it comes, so
/// the test synchronises on what the process printed, never on time.
class Background {
 public:
  /// Starts `argv[0]` with `argv`, stdout and stderr captured, stdin /dev/null.
  explicit Background(const std::vector<std::string>& argv);
  /// Kills the process if it still runs.
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  /// Reads stdout until, after the text returned by earlier calls, it contains `needle`; returns everything
  /// read so far. Throws std::runtime_error (quoting stdout and stderr) when the process exits first or
  /// `cap_seconds` pass: a bound against hanging the suite, not a synchronisation.
  std::string wait_for_output(const std::string& needle, int cap_seconds = 120);
  /// Waits for the process to exit on its own and returns its whole output and exit code.
  Run finish();
  /// Sends SIGTERM, then finish().
  Run stop();

 private:
  bool read_some(int timeout_ms);
  int pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  Run run_;
  std::size_t consumed_ = 0;
};

/// Runs `argv[0]` with `argv`, capturing stdout and stderr; no shell involved.
Run run_process(const std::vector<std::string>& argv);

/// Starts every command before waiting for any (so they run concurrently), then collects their results in order.
std::vector<Run> run_processes(const std::vector<std::vector<std::string>>& argvs);

/// Reads a whole file (throws std::runtime_error when it cannot).
std::string read_file(const std::string& path);

/// `kubectl get KIND -o json` through the real kubectl against `sb`: the items, in namespace `ns` (cluster-scoped
/// when empty), selected by `selector` when given. Throws std::runtime_error with kubectl's stderr when it fails.
nlohmann::json kubectl_items(const Sandbox& sb, const std::string& kind, const std::string& ns,
                             const std::string& selector = "");

/// The metadata.name of every item of a list, sorted.
std::vector<std::string> item_names(const nlohmann::json& items);

/// The writes (every method but GET) the sandbox logged after request number `mark` (a requests().size()).
std::vector<LoggedRequest> writes_since(const Sandbox& sb, std::size_t mark);

/// The request counts by kind.
std::size_t count_writes(const std::vector<LoggedRequest>& reqs);

/// Whether the baseline of namespace `ns` agrees with the live InferServiceSet: `kubectl mindie status -o json`
/// reports no drift, or there is neither a baseline nor any InferServiceSet. Otherwise false, with `why` set to
/// what status said. Call it once the sandbox has no fault left to inject.
bool baseline_agrees_with_live(const Sandbox& sb, const std::string& ns, std::string& why);

}  // namespace e2e
