// End-to-end test harness: runs the real kubectl-mindie binary as a child process against the run's local cluster
// (tests/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK, and the fake infer-operator),
// each test through its own fault proxy. Synchronisation is by pipes (the instruments print "ready" lines), watches
// and `kubectl wait`, never by sleeping.
#pragma once

#include <functional>
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

/// One line of the fault proxy's request log.
struct LoggedRequest {
  std::string method;
  std::string path;
  std::string query;
  std::string content_type;
  std::string body;
  int status = 0;     ///< 0: not answered (a hang or drop fault)
  std::string fault;  ///< the fault KIND the proxy applied to it ("" none): a released hold-reply is logged late
  /// Every method but GET, except on the namespace lock's Lease (lease.coordination.k8s.io/kubectl-mindie, which
  /// every mutating command takes and frees) and on the baseline's history (the ControllerRevision each baseline
  /// write ends with), and the access reviews (questions, of which the server stores nothing): the writes to the
  /// deployment. lock_test.cpp asserts the lock's own, history_test.cpp the history's.
  bool is_write() const { return method != "GET" && !is_lock() && !is_history() && !is_review(); }
  /// A SelfSubjectAccessReview or SelfSubjectRulesReview: deploy's and scale's rights check (cmd/rights.h).
  bool is_review() const { return path.find("/apis/authorization.k8s.io/v1/selfsubject") == 0; }
  /// A request to the namespace lock's Lease or its collection.
  bool is_lock() const {
    return path.find("/apis/coordination.k8s.io/v1/namespaces/") == 0 && path.find("/leases") != std::string::npos;
  }
  /// A request to the baseline's history: the ControllerRevisions of a namespace (cmd/revisions.h).
  bool is_history() const {
    return path.find("/apis/apps/v1/namespaces/") == 0 && path.find("/controllerrevisions") != std::string::npos;
  }
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

/// The kubectl-mindie binary the tests run: $MINDIE_E2E_BINARY when set (scripts/test.sh points it at the sanitizer
/// build's, so that the e2e tests themselves are built once), else the one built beside these tests.
const std::string& mindie_binary();

/// What a test talks to: a kubeconfig whose requests are logged, and the commands run with it.
class Target {
 public:
  virtual ~Target() = default;
  virtual const std::string& kubeconfig() const = 0;
  virtual const std::string& url() const = 0;
  /// Requests logged after the first `since` ones.
  virtual std::vector<LoggedRequest> requests_since(std::size_t since) const = 0;
  /// Every request logged so far.
  std::vector<LoggedRequest> requests() const { return requests_since(0); }
  /// Runs kubectl-mindie with `args` plus --kubeconfig of this target.
  Run mindie(std::vector<std::string> args) const;
  /// The command line mindie() runs, for run_processes().
  std::vector<std::string> mindie_argv(std::vector<std::string> args) const;
  /// Runs kubectl with this kubeconfig: the cluster's own (the release the control plane was built from).
  virtual Run kubectl(std::vector<std::string> args) const;
};

/// The folder of the control plane's binaries (tests/cluster/build.sh --bin-dir; it may not exist yet): of the
/// release MINDIE_CLUSTER_RELEASE names (current unless set; oldest: the oldest release the product supports).
const std::string& control_plane_bin_dir();

/// The path of the kubectl tests use as a second client: the one built with the current release's control plane
/// (the machine's /usr/bin/kubectl may be outside the supported version skew), also when the cluster runs the
/// oldest release (MINDIE_CLUSTER_RELEASE=oldest).
const std::string& kubectl_binary();

/// A test's view of the run's one local cluster (tests/cluster/cluster.sh: etcd, kube-apiserver,
/// kube-controller-manager, kube-scheduler, KWOK Atlas nodes, and the fake infer-operator): its own fault proxy
/// (mindie-fault-proxy, whose request log requests() reads) and kubeconfig, and namespaces `mindie-demo` and
/// `mindie-motor` fresh for the test. The cluster starts with the first test (or is the one MINDIE_E2E_CLUSTER
/// names, a folder of `cluster.sh up`) and stops when the run ends. Tests run one at a time (one process), so a test
/// may change cluster-wide state (a CRD absent), which the destructor restores.
class Cluster : public Target {
 public:
  /// `args`: "--fault SPEC" (the proxy's fault rules, METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]], KIND a code 400..599,
  /// hang, drop, lose-reply, hold or hold-reply), "--no-crd" (infer-operator's CRDs absent for this test),
  /// kNoVolcano (Volcano's PodGroup CRD absent), kNoAibrix, "--namespace NS" (one more fresh namespace). `listen`: the
  /// proxy's address (e.g. "[::1]:0").
  static constexpr const char* kNoVolcano = "--harness-no-volcano";
  /// AIBrix's StormService CRD absent.
  static constexpr const char* kNoAibrix = "--harness-no-aibrix";
  /// A freshly started fake infer-operator: no fault record of an earlier test's gang pods (the reset deletes them
  /// as a user would, and the rescheduler may keep what it recorded, as the real one does; rescheduling.go).
  static constexpr const char* kFreshOperator = "--harness-fresh-operator";
  /// infer-operator as its published manifest installs it: the pod of Deployment mindx-dl/infer-operator-manager.
  /// The fake operator then runs its controllers only while that pod serves, each time from nothing (its
  /// --run-while), so scaling the Deployment stops and starts it, as it does the real one.
  static constexpr const char* kOperatorDeployment = "--harness-operator-deployment";
  explicit Cluster(std::vector<std::string> args = {}, std::string listen = "127.0.0.1:0");
  ~Cluster() override;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const std::string& kubeconfig() const override { return kubeconfig_; }
  const std::string& url() const override { return url_; }
  std::vector<LoggedRequest> requests_since(std::size_t since) const override;

  /// Runs the cluster's kubectl as the cluster admin, straight to the API server (not logged, never faulted).
  Run admin(std::vector<std::string> args) const;
  /// Like admin(), failing the test (std::runtime_error with kubectl's stderr) unless it exits 0; returns stdout.
  std::string admin_ok(std::vector<std::string> args) const;
  /// The admin kubeconfig (straight to the API server).
  const std::string& admin_kubeconfig() const;

  /// Waits until `kubectl mindie wait --for=ready` says the deployment of `ns` is ready (as the admin, not logged).
  void wait_ready(const std::string& ns, const std::string& timeout = "180s") const;
  /// The folder of the run's cluster (`cluster.sh status DIR` reads it).
  const std::string& cluster_dir() const;
  /// Puts the pods of `ns` selected by `selector` (a label selector, or "pod/NAME") into `state`, as a kubelet would
  /// report it, and waits until every one shows it: Ready, NotReady, ContainerCreating, ImagePullBackOff,
  /// CrashLoopBackOff or OOMKilled (KWOK's stages of tests/cluster/kwok-stages.yaml, chosen by the annotation
  /// kwok.x-k8s.io/sim; the pod's status is reset to Pending so that KWOK plays the new path). Fails when nothing
  /// matches.
  void set_pod_state(const std::string& ns, const std::string& selector, const std::string& state) const;
  /// Waits until at least `count` pods of `ns` match `selector` (watching them, as `kubectl get -w` does), then until
  /// each meets `condition` (a `kubectl wait` --for argument, e.g. "--for=condition=Ready"; empty: none).
  void wait_pods(const std::string& ns, const std::string& selector, std::size_t count,
                 const std::string& condition = "--for=condition=Ready") const;
  /// The same for any kind (`kubectl get` names it: "podgroups", "instancesets.mindcluster.huawei.com"), no
  /// condition; `selector` may be empty.
  void wait_objects(const std::string& kind, const std::string& ns, const std::string& selector,
                    std::size_t count) const;
  /// Waits until an Event with `reason` exists in `ns` (infer-operator's ValidateError, ...).
  void wait_event(const std::string& ns, const std::string& reason) const;
  /// Waits until no pod of `ns` matches `selector` (garbage collection and KWOK's removal of deleted pods take
  /// their time on a real cluster).
  void wait_pods_gone(const std::string& ns, const std::string& selector) const;
  /// Cuts every watch open through the proxy, without its final chunk.
  void close_watches() const;
  /// Waits (the proxy's GET /proxy/held, at most 60 s) until at least `count` requests are held by hold/hold-reply
  /// faults. Throws std::runtime_error when they are not.
  void wait_held(std::size_t count) const;
  /// Releases every held request (POST /proxy/release {}).
  void release_held() const;
  /// Adds a fault rule to this test's proxy from now on (POST /proxy/faults; the --fault syntax).
  void add_fault(const std::string& spec) const;
  /// Removes every fault rule of this test's proxy (DELETE /proxy/faults): the server is reachable again.
  void clear_faults() const;
  /// Compacts etcd at its current revision: lists and watches from older resourceVersions answer 410 Expired.
  void compact() const;
  /// Restarts the fake infer-operator: it forgets its in-memory fault records, as a restart of the real one does.
  /// Throws when it does not start again.
  void restart_operator() const;
  /// Deletes the one CRD `name` of the reference CRD files (its file's other CRDs stay) and returns when discovery
  /// no longer lists it; the destructor puts it back and restarts the operator. Throws std::invalid_argument for a
  /// name no reference file holds.
  void remove_crd(const std::string& name);
  /// Restarts the fake infer-operator expecting it not to start (a CRD it needs is absent): returns the last lines
  /// of its log. The destructor starts it again, after putting back what the test removed.
  std::string restart_operator_failing();

 private:
  /// POSTs {} to a control endpoint of the proxy (`/proxy/...`), through kubectl with this test's kubeconfig.
  Run control(const std::string& path, const std::string& body = "{}") const;
  TempDir dir_;
  std::string kubeconfig_;
  std::string log_;
  std::string url_;
  int proxy_pid_ = -1;
  std::vector<std::string> removed_crds_;  ///< CRD files to put back
  bool restart_operator_on_exit_ = false;  ///< the test left no operator running, or one under --run-while
  /// kOperatorDeployment: makes the Deployment, waits for its pod, and restarts the fake operator under --run-while.
  void run_operator_in_deployment();
};

/// Checks `done` until it holds, at most `cap_seconds` (then throws std::runtime_error naming `what`): for states no
/// watchable condition names (an AIBrix status computed by the product). The check synchronises; the pause between
/// checks (250 ms) only spares the CPU.
void eventually(const std::function<bool()>& done, const std::string& what, int cap_seconds = 180);

/// The label selector of the pods infer-operator makes for `role` (instance `instance` when >= 0): its indexer
/// labels infer.huawei.com/instanceset-name and instanceset-index.
std::string role_pods(const std::string& role, int instance = -1);

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
  /// The same for stderr.
  std::string wait_for_error(const std::string& needle, int cap_seconds = 120);
  /// Sends `sig` to the process (SIGINT, SIGKILL, SIGSTOP, SIGCONT, ...); finish() collects it.
  void signal(int sig);
  /// The process's id (-1 once finish() collected it): what a lock holder's record names.
  int pid() const { return pid_; }
  /// Waits for the process to exit on its own and returns its whole output and exit code.
  Run finish();
  /// Sends SIGTERM, then finish().
  Run stop();

 private:
  bool read_some(int timeout_ms);
  std::string wait_for(bool err, const std::string& needle, int cap_seconds);
  int pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  Run run_;
  std::size_t consumed_ = 0;
  std::size_t consumed_err_ = 0;
};

/// Runs `argv[0]` with `argv`, capturing stdout and stderr; no shell involved.
Run run_process(const std::vector<std::string>& argv);

/// Starts every command before waiting for any (so they run concurrently), then collects their results in order.
std::vector<Run> run_processes(const std::vector<std::vector<std::string>>& argvs);

/// Reads a whole file (throws std::runtime_error when it cannot).
std::string read_file(const std::string& path);

/// `argv` run under libfaketime (Debian's package faketime: /usr/lib/<multiarch>/faketime/libfaketime.so.1) with
/// FAKETIME=`faketime`: "+2m" a clock two minutes ahead; "+0 x20" one running 20 times as fast, its monotonic clock
/// and its sleeps included (wolfcw/libfaketime README, "Advanced features and caveats"). A sanitized binary
/// (MINDIE_E2E_BINARY) is told that libfaketime preloaded before its runtime is fine. Throws std::runtime_error
/// when libfaketime is not installed.
std::vector<std::string> faked(const std::string& faketime, std::vector<std::string> argv);

/// `kubectl get KIND -o json` through the real kubectl against `sb`: the items, in namespace `ns` (cluster-scoped
/// when empty), selected by `selector` when given, without what Kubernetes makes in every namespace (ConfigMap
/// kube-root-ca.crt, ServiceAccount default). Throws std::runtime_error with kubectl's stderr when it fails.
nlohmann::json kubectl_items(const Target& sb, const std::string& kind, const std::string& ns,
                             const std::string& selector = "");

/// Fills the NPUs of the 800I_A2 nodes (accelerator-type=module-910b-8, where the example's engine pods of 4 NPUs
/// run) with Pods `filler-<i>` of 4 NPUs in namespace mindie-motor (label app=filler) until only the `in_use` NPUs
/// other pods hold are not theirs; returns when they run.
void fill_npu_pool(const Cluster& sb, const TempDir& dir, int in_use);

/// The metadata.name of every item of a list, sorted.
std::vector<std::string> item_names(const nlohmann::json& items);

/// The writes (every method but GET) the proxy logged after request number `mark` (a requests().size()).
std::vector<LoggedRequest> writes_since(const Target& sb, std::size_t mark);

/// The request counts by kind.
std::size_t count_writes(const std::vector<LoggedRequest>& reqs);

/// Whether the baseline of namespace `ns` agrees with the live InferServiceSet: `kubectl mindie status -o json`
/// reports no drift, or there is neither a baseline nor any InferServiceSet. Otherwise false, with `why` set to
/// what status said. Call it once the proxy has no fault left to inject.
bool baseline_agrees_with_live(const Target& sb, const std::string& ns, std::string& why);

}  // namespace e2e
