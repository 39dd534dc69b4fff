// The e2e tests' cluster: the run's one local control plane (tests/cluster/cluster.sh) with the fake infer-operator,
// and per test a fault proxy in front of it and fresh namespaces.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness.h"

namespace e2e {

namespace fs = std::filesystem;

namespace {

const std::string kSource = MINDIE_SOURCE_DIR;
const std::string kCrds = std::string(MINDIE_SHARED_DIR) + "/reference/crds/";
/// Where infer-operator's published manifest runs it (Cluster::kOperatorDeployment).
constexpr const char* kOperatorNamespace = "mindx-dl";
constexpr const char* kOperatorDeploymentName = "infer-operator-manager";
const std::string kMindClusterCrds = kCrds + "mindcluster.huawei.com_crds.yaml";
const std::string kVolcanoCrd = kCrds + "scheduling.volcano.sh_podgroups.yaml";
const std::string kStormCrd = kCrds + "orchestration.aibrix.ai_stormservices.yaml";

/// Namespaces every test starts with, fresh (the example's job_id, and the default of the other modes' examples).
const std::vector<std::string> kTestNamespaces = {"mindie-demo", "mindie-motor"};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// A child that dies with the test process (PR_SET_PDEATHSIG), its stderr appended to `log`; its stdout is read
/// until the first line, which is returned in `first_line`.
pid_t start_daemon(const std::vector<std::string>& argv, const std::string& log, std::string& first_line) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const int in = open("/dev/null", O_RDONLY);
    if (err < 0 || in < 0) _exit(127);
    dup2(in, 0);
    dup2(out[1], 1);
    dup2(err, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  first_line.clear();
  char ch;
  for (;;) {
    const ssize_t n = read(out[0], &ch, 1);
    if (n == 1) {
      if (ch == '\n') break;
      first_line += ch;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(out[0]);
  return pid;
}

void stop_daemon(pid_t& pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
}

std::string tail_of(const std::string& path, std::size_t lines = 15) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += all[i] + "\n";
  return out;
}

/// The folder of the current release's binaries, whose kubectl the tests use whatever release the cluster runs:
/// the tests need its features (patch --subresource, wait --for=jsonpath and --for=create, create token), all
/// client-side or served by every supported release.
const std::string& current_bin_dir() {
  static const std::string dir = trim(run_process({"/usr/bin/env", "MINDIE_CLUSTER_RELEASE=current", "/bin/bash",
                                                   kSource + "/tests/cluster/build.sh", "--bin-dir"})
                                          .out);
  return dir;
}

/// The run's cluster: started on first use, stopped when the test process exits.
class World {
 public:
  World() {
    bin_ = control_plane_bin_dir();
    kubectl_ = kubectl_binary();
    for (const auto& need : {bin_ + "/kube-apiserver", kubectl_})
      if (!fs::exists(need))
        throw std::runtime_error("the control plane is not built (no " + need +
                                 "): run `bash tests/cluster/build.sh` (scripts/test.sh does; with "
                                 "MINDIE_CLUSTER_RELEASE=oldest for the oldest release)");
    if (const char* given = std::getenv("MINDIE_E2E_CLUSTER"); given != nullptr && *given != '\0') {
      dir_ = given;
    } else {
      std::string tmpl = (fs::temp_directory_path() / "mindie-e2e-cluster-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
      dir_ = tmpl;
      owned_ = true;
      // Eight Atlas nodes per hardware profile: the shared examples' deepseek needs four 16-NPU A3 servers, the
      // PD-hybrid test scales to six 8-NPU pods.
      setenv("MINDIE_CLUSTER_NODES_PER_PROFILE", "8", 0);
      // The cluster ends with this process even when it is killed (cluster.sh watches the PID).
      const Run up = run_process(
          {"/bin/bash", kSource + "/tests/cluster/cluster.sh", "up", dir_, "--watch-pid", std::to_string(getpid())});
      if (up.exit_code != 0) throw std::runtime_error("the local cluster did not start:\n" + up.out + up.err);
    }
    std::ifstream env(dir_ + "/env");
    if (!env) throw std::runtime_error("no cluster in " + dir_ + " (no env file)");
    for (std::string line; std::getline(env, line);) {
      if (line.rfind("export ", 0) != 0) continue;
      const auto eq = line.find('=');
      vars_[line.substr(7, eq - 7)] = line.substr(eq + 1);
    }
    admin_kubeconfig_ = dir_ + "/kubeconfig";
    check_release();
    // What the cluster brings is kept; everything a test (of this run or of an earlier one on a cluster that
    // MINDIE_E2E_CLUSTER names) made goes before the next test.
    keep_namespaces_ = {"default", "kube-system", "kube-public", "kube-node-lease",
                        var("MINDIE_CLUSTER_RESTRICTED_NAMESPACE")};
    start_operator();
  }

  ~World() {
    stop_daemon(operator_pid_);
    if (owned_) {
      run_process({"/bin/bash", kSource + "/tests/cluster/cluster.sh", "down", dir_});
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& kubectl() const { return kubectl_; }
  const std::string& admin_kubeconfig() const { return admin_kubeconfig_; }
  std::string var(const std::string& name) const {
    const auto it = vars_.find(name);
    if (it == vars_.end()) throw std::runtime_error("the cluster's env file has no " + name);
    return it->second;
  }

  Run admin(std::vector<std::string> args) const {
    std::vector<std::string> argv = {kubectl_, "--kubeconfig", admin_kubeconfig_};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv);
  }

  std::string admin_ok(std::vector<std::string> args) const {
    const Run run = admin(args);
    if (run.exit_code != 0) {
      std::string cmd = "kubectl";
      for (const auto& a : args) cmd += " " + a;
      throw std::runtime_error(cmd + " failed: " + run.err);
    }
    return run.out;
  }

  /// Gives the next test a clean cluster (mindie-test-reset): the test namespaces (`kTestNamespaces` and `extra`)
  /// emptied or created, every other namespace and the tests' ClusterRoles and ClusterRoleBindings deleted.
  void reset(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {TEST_RESET_BINARY, "--kubeconfig", admin_kubeconfig_, "--cluster-prefix",
                                     "mindie-motor-"};
    for (const auto& ns : kTestNamespaces) argv.insert(argv.end(), {"--namespace", ns});
    for (const auto& ns : extra) argv.insert(argv.end(), {"--namespace", ns});
    for (const auto& ns : keep_namespaces_) argv.insert(argv.end(), {"--keep", ns});
    const Run run = run_process(argv);
    if (run.exit_code != 0) throw std::runtime_error("resetting the cluster failed: " + run.err);
  }

  /// The API server must run the release whose binaries the run asked for (MINDIE_CLUSTER_RELEASE; a cluster that
  /// MINDIE_E2E_CLUSTER names may run another): the release built, from bin/VERSIONS, against /version. Prints it.
  void check_release() const {
    std::ifstream versions(bin_ + "/VERSIONS");
    std::string built;
    for (std::string line; std::getline(versions, line);)
      if (line.rfind("kubernetes ", 0) == 0) built = trim(line.substr(11));
    const Run run = admin({"get", "--raw", "/version"});
    if (run.exit_code != 0) throw std::runtime_error("GET /version failed: " + run.err);
    const std::string serving = nlohmann::json::parse(run.out).value("gitVersion", "");
    if (built.empty() || serving != built)
      throw std::runtime_error("the cluster in " + dir_ + " runs Kubernetes " + serving + ", not " +
                               (built.empty() ? "the release of " + bin_ : built) +
                               " (MINDIE_CLUSTER_RELEASE and MINDIE_E2E_CLUSTER disagree?)");
    std::fprintf(stderr, "[e2e] cluster: Kubernetes %s in %s\n", serving.c_str(), dir_.c_str());
  }

  /// Starts the fake operator (`extra`: more of its arguments, e.g. --run-while) and waits for its "ready".
  void start_operator(std::vector<std::string> extra = {}) {
    std::string line;
    std::vector<std::string> argv = {FAKE_OPERATOR_BINARY, "--kubeconfig", admin_kubeconfig_, "--max-backoff", "30s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    operator_pid_ = start_daemon(argv, dir_ + "/logs/fake-operator.log", line);
    if (line != "ready") {
      stop_daemon(operator_pid_);
      throw std::runtime_error("the fake infer-operator did not start (first line \"" + line + "\"); its log:\n" +
                               tail_of(dir_ + "/logs/fake-operator.log"));
    }
  }

  /// A fresh operator: after a CRD came back, so that its informers do not wait out a backoff; or to clear its
  /// in-memory fault records, as a restart of the real one does (rescheduling.go).
  void restart_operator(std::vector<std::string> extra = {}) {
    stop_daemon(operator_pid_);
    start_operator(std::move(extra));
  }

  /// Stops the operator and starts it again expecting it not to start (a CRD it needs is absent): returns the last
  /// lines of its log. Throws when it does start. Nothing runs as the operator afterwards until restart_operator().
  std::string restart_operator_failing() {
    stop_daemon(operator_pid_);
    const std::string log = dir_ + "/logs/fake-operator.log";
    std::string line;
    operator_pid_ = start_daemon({FAKE_OPERATOR_BINARY, "--kubeconfig", admin_kubeconfig_}, log, line);
    if (line == "ready") throw std::runtime_error("the fake infer-operator started, though expected not to");
    stop_daemon(operator_pid_);  // reaps it (it has exited)
    return tail_of(log);
  }

 private:
  std::string bin_, kubectl_, dir_, admin_kubeconfig_;
  bool owned_ = false;
  std::map<std::string, std::string> vars_;
  std::set<std::string> keep_namespaces_;
  pid_t operator_pid_ = -1;
};

World& world() {
  static World w;
  return w;
}

/// The CRD names a file of ../shared/reference/crds defines.
std::vector<std::string> crd_names(const std::string& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  bool crd = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kind: CustomResourceDefinition", 0) == 0) crd = true;
    if (crd && line.rfind("  name: ", 0) == 0) {
      out.push_back(trim(line.substr(8)));
      crd = false;
    }
  }
  return out;
}

/// What `kubectl wait` waits for once a pod plays `state` (kwok-stages.yaml).
std::string wait_condition(const std::string& state) {
  if (state == "Ready") return "--for=condition=Ready";
  if (state == "NotReady") return "--for=condition=Ready=false";
  if (state == "OOMKilled")
    return "--for=jsonpath={.status.containerStatuses[0].lastState.terminated.reason}=OOMKilled";
  if (state == "ContainerCreating" || state == "ImagePullBackOff" || state == "CrashLoopBackOff")
    return "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=" + state;
  throw std::invalid_argument("set_pod_state: unknown state " + state);
}

// Whether the API server's discovery lists the resource of CRD `name` ("stormservices.orchestration.aibrix.ai"),
// read afresh (api-resources does not use kubectl's cache unless --cached). Discovery follows a CRD's creation and
// deletion a moment later than the CRD object itself, and the product decides from discovery.
bool discovery_lists(const World& w, const std::string& name) {
  const std::string group = name.substr(name.find('.') + 1);
  const std::string out = w.admin_ok({"api-resources", "--api-group=" + group, "-o", "name"});
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line == name) return true;
  return false;
}

}  // namespace

const std::string& control_plane_bin_dir() {
  static const std::string dir = trim(run_process({"/bin/bash", kSource + "/tests/cluster/build.sh", "--bin-dir"}).out);
  return dir;
}

const std::string& kubectl_binary() {
  static const std::string path = current_bin_dir() + "/kubectl";
  return path;
}

Cluster::Cluster(std::vector<std::string> args, std::string listen) {
  World& w = world();
  std::vector<std::string> faults;
  std::vector<std::string> absent;
  std::vector<std::string> namespaces;
  bool fresh_operator = false;
  bool operator_deployment = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fault" && i + 1 < args.size()) faults.push_back(args[++i]);
    else if (args[i] == "--no-crd") absent.push_back(kMindClusterCrds);
    else if (args[i] == kNoVolcano) absent.push_back(kVolcanoCrd);
    else if (args[i] == kNoAibrix) absent.push_back(kStormCrd);
    else if (args[i] == kFreshOperator) fresh_operator = true;
    else if (args[i] == kOperatorDeployment) operator_deployment = true;
    else if (args[i] == "--namespace" && i + 1 < args.size()) namespaces.push_back(args[++i]);
    else throw std::invalid_argument("Cluster: unknown argument " + args[i]);
  }
  if (operator_deployment) namespaces.push_back(kOperatorNamespace);
  w.reset(namespaces);
  if (operator_deployment) run_operator_in_deployment();
  else if (fresh_operator) w.restart_operator();
  for (const auto& file : absent) {
    std::vector<std::string> del = {"delete", "--wait=true", "--ignore-not-found"};
    const std::vector<std::string> names = crd_names(file);
    for (const auto& name : names) del.push_back("customresourcedefinition/" + name);
    w.admin_ok(del);
    removed_crds_.push_back(file);
    for (const auto& name : names)
      eventually([&] { return !discovery_lists(w, name); }, "discovery without " + name, 120);
  }

  log_ = dir_.path() + "/requests.jsonl";
  std::vector<std::string> argv = {FAULT_PROXY_BINARY,
                                   "--upstream",
                                   w.var("MINDIE_CLUSTER_URL"),
                                   "--upstream-ca",
                                   w.var("MINDIE_CLUSTER_CA"),
                                   "--cert",
                                   w.dir() + "/pki/apiserver.crt",
                                   "--key",
                                   w.dir() + "/pki/apiserver.key",
                                   "--listen",
                                   listen,
                                   "--request-log",
                                   log_};
  for (const auto& f : faults) argv.insert(argv.end(), {"--fault", f});
  std::string line;
  proxy_pid_ = start_daemon(argv, dir_.path() + "/proxy.log", line);
  if (line.rfind("ready ", 0) != 0) {
    stop_daemon(proxy_pid_);
    throw std::runtime_error("the fault proxy did not start (first line \"" + line +
                             "\"): " + tail_of(dir_.path() + "/proxy.log"));
  }
  url_ = line.substr(6);
  // The admin's kubeconfig with the proxy as its server.
  std::string config = read_file(w.admin_kubeconfig());
  const std::string server = "server: " + w.var("MINDIE_CLUSTER_URL");
  const auto at = config.find(server);
  if (at == std::string::npos) throw std::runtime_error("unexpected kubeconfig of the cluster");
  config.replace(at, server.size(), "server: " + url_);
  kubeconfig_ = dir_.write("kubeconfig", config);
}

Cluster::~Cluster() {
  stop_daemon(proxy_pid_);
  if (removed_crds_.empty()) {
    if (restart_operator_on_exit_) world().restart_operator();
    return;
  }
  try {
    World& w = world();
    std::vector<std::string> create = {"create"};
    std::vector<std::string> names;
    for (const auto& file : removed_crds_) {
      create.insert(create.end(), {"-f", file});
      for (const auto& name : crd_names(file)) names.push_back(name);
    }
    w.admin_ok(create);
    // Not kubectl wait: both --for=condition and --for=jsonpath fail outright while a new CRD has no conditions yet.
    for (const auto& name : names) {
      eventually(
          [&] {
            const Run run = w.admin({"get", "customresourcedefinition/" + name, "-o",
                                     R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"});
            return run.exit_code == 0 && run.out == "True";
          },
          "CRD " + name + " Established", 120);
      eventually([&] { return discovery_lists(w, name); }, "discovery listing " + name, 120);
    }
    w.restart_operator();
  } catch (const std::exception& e) {
    // A destructor cannot fail the test; the next test's cluster would miss the CRD, so stop the run loudly.
    std::fprintf(stderr, "cannot restore the CRDs: %s\n", e.what());
    std::abort();
  }
}

std::vector<LoggedRequest> Cluster::requests_since(std::size_t since) const {
  std::vector<LoggedRequest> out;
  std::ifstream in(log_);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || n++ < since) continue;
    const auto j = nlohmann::json::parse(line);
    LoggedRequest r;
    r.method = j.value("method", "");
    r.path = j.value("path", "");
    r.query = j.value("query", "");
    r.content_type = j.value("contentType", "");
    r.body = j.value("body", "");
    r.status = j.value("status", 0);
    r.fault = j.value("fault", "");
    out.push_back(std::move(r));
  }
  return out;
}

Run Cluster::admin(std::vector<std::string> args) const { return world().admin(std::move(args)); }

std::string Cluster::admin_ok(std::vector<std::string> args) const { return world().admin_ok(std::move(args)); }

const std::string& Cluster::admin_kubeconfig() const { return world().admin_kubeconfig(); }

const std::string& Cluster::cluster_dir() const { return world().dir(); }

void Cluster::restart_operator() const { world().restart_operator(); }

void Cluster::run_operator_in_deployment() {
  // What infer-operator's published manifest installs (Ascend/mind-cluster component/infer-operator
  // build/infer-operator.yaml), reduced to what the tests use: its pod runs on a KWOK node like any other.
  const std::string manifest = std::string("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ") +
                               kOperatorDeploymentName + "\n  namespace: " + kOperatorNamespace +
                               "\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: infer-operator}\n"
                               "  template:\n    metadata:\n      labels: {app: infer-operator}\n    spec:\n"
                               "      containers:\n      - name: manager\n        image: infer-operator:test\n";
  World& w = world();
  w.admin_ok({"apply", "-f", dir_.write("infer-operator.yaml", manifest)});
  w.admin_ok({"rollout", "status", "-n", kOperatorNamespace, std::string("deployment/") + kOperatorDeploymentName,
              "--timeout=120s"});
  restart_operator_on_exit_ = true;  // the next test gets the operator that runs on its own again
  w.restart_operator({"--run-while", std::string(kOperatorNamespace) + "/" + kOperatorDeploymentName});
}

void Cluster::remove_crd(const std::string& name) {
  World& w = world();
  for (const std::string& file : {kMindClusterCrds, kVolcanoCrd, kStormCrd}) {
    const std::string text = read_file(file);
    // The documents of the file, split at its "---" lines.
    for (std::size_t begin = 0; begin < text.size();) {
      std::size_t end = text.find("\n---\n", begin);
      end = end == std::string::npos ? text.size() : end + 1;
      const std::string doc = text.substr(begin, end - begin);
      begin = end == text.size() ? end : end + 4;
      if (doc.find("\n  name: " + name + "\n") == std::string::npos) continue;
      removed_crds_.push_back(dir_.write("crd-" + name + ".yaml", doc));
      w.admin_ok({"delete", "--wait=true", "customresourcedefinition/" + name});
      eventually([&] { return !discovery_lists(w, name); }, "discovery without " + name, 120);
      return;
    }
  }
  throw std::invalid_argument("remove_crd: no reference CRD is named " + name);
}

std::string Cluster::restart_operator_failing() {
  restart_operator_on_exit_ = true;
  return world().restart_operator_failing();
}

void Cluster::wait_ready(const std::string& ns, const std::string& timeout) const {
  const Run run = run_process({e2e::mindie_binary(), "--kubeconfig", admin_kubeconfig(), "wait", "-n", ns,
                               "--for=ready", "--timeout", timeout});
  if (run.exit_code != 0) throw std::runtime_error("the deployment in " + ns + " never became ready: " + run.err);
}

void Cluster::set_pod_state(const std::string& ns, const std::string& selector, const std::string& state) const {
  const std::string condition = wait_condition(state);
  const auto pods = selector.rfind("pod/", 0) == 0
                        ? std::vector<std::string>{selector}
                        : words(admin_ok({"get", "pods", "-n", ns, "-l", selector, "-o", "name"}));
  if (pods.empty()) throw std::runtime_error("set_pod_state: no pod in " + ns + " matches " + selector);
  std::vector<std::string> annotate = {"annotate", "-n", ns, "--overwrite"};
  annotate.insert(annotate.end(), pods.begin(), pods.end());
  annotate.push_back(state == "Ready" ? "kwok.x-k8s.io/sim-" : "kwok.x-k8s.io/sim=" + state);
  admin_ok(annotate);
  // Back to Pending without container statuses: KWOK then plays the path the annotation names (podIPs stay).
  for (const auto& pod : pods)
    admin_ok({"patch", "-n", ns, pod, "--subresource=status", "--type=merge", "-p",
              R"({"status":{"phase":"Pending","conditions":null,"containerStatuses":null}})"});
  std::vector<std::string> wait = {"wait", "-n", ns, condition, "--timeout=120s"};
  wait.insert(wait.end(), pods.begin(), pods.end());
  admin_ok(wait);
}

namespace {

/// Watches `kubectl get KIND -w -o name` (the list first, then each change) until `count` distinct names were seen.
std::set<std::string> watch_names(const std::string& kubeconfig, std::vector<std::string> what, std::size_t count) {
  std::vector<std::string> argv = {world().kubectl(), "--kubeconfig", kubeconfig, "get"};
  argv.insert(argv.end(), what.begin(), what.end());
  argv.insert(argv.end(), {"--watch", "-o", "name"});
  Background watch(argv);
  std::set<std::string> seen;
  while (seen.size() < count) {
    const std::string out = watch.wait_for_output("\n", 180);
    std::istringstream lines(out);
    for (std::string l; std::getline(lines, l);)
      if (!l.empty()) seen.insert(l);
  }
  watch.stop();
  return seen;
}

}  // namespace

void Cluster::wait_pods(const std::string& ns, const std::string& selector, std::size_t count,
                        const std::string& condition) const {
  const auto pods = watch_names(admin_kubeconfig(), {"pods", "-n", ns, "-l", selector}, count);
  if (condition.empty()) return;
  std::vector<std::string> wait = {"wait", "-n", ns, condition, "--timeout=180s"};
  wait.insert(wait.end(), pods.begin(), pods.end());
  admin_ok(wait);
}

void Cluster::wait_objects(const std::string& kind, const std::string& ns, const std::string& selector,
                           std::size_t count) const {
  std::vector<std::string> what = {kind, "-n", ns};
  if (!selector.empty()) what.insert(what.end(), {"-l", selector});
  watch_names(admin_kubeconfig(), what, count);
}

void Cluster::wait_event(const std::string& ns, const std::string& reason) const {
  watch_names(admin_kubeconfig(), {"events", "-n", ns, "--field-selector", "reason=" + reason}, 1);
}

void eventually(const std::function<bool()>& done, const std::string& what, int cap_seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(cap_seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up)
      throw std::runtime_error(what + ": still not so after " + std::to_string(cap_seconds) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

std::string role_pods(const std::string& role, int instance) {
  std::string sel = "infer.huawei.com/instanceset-name=" + role;
  if (instance >= 0) sel += ",infer.huawei.com/instanceset-index=" + std::to_string(instance);
  return sel;
}

void Cluster::wait_pods_gone(const std::string& ns, const std::string& selector) const {
  const Run run = admin({"wait", "-n", ns, "--for=delete", "pods", "-l", selector, "--timeout=120s"});
  // kubectl wait --for=delete succeeds when the pods go, and says "no matching resources" when none was left.
  if (run.exit_code != 0 && run.err.find("no matching resources found") == std::string::npos)
    throw std::runtime_error("pods " + selector + " in " + ns + " are still there: " + run.err);
}

Run Cluster::control(const std::string& path, const std::string& body) const {
  static std::atomic<int> serial{0};
  const std::string file = dir_.write("control-" + std::to_string(++serial) + ".json", body);
  return kubectl({"create", "--raw", path, "-f", file});
}

namespace {
void control_ok(const Run& run, const std::string& what) {
  if (run.exit_code != 0) throw std::runtime_error(what + " failed: " + run.err);
}
}  // namespace

void Cluster::close_watches() const { control_ok(control("/proxy/close-watches"), "closing the watches"); }

void Cluster::wait_held(std::size_t count) const {
  control_ok(kubectl({"get", "--raw", "/proxy/held?min=" + std::to_string(count) + "&timeoutSeconds=60"}),
             "waiting for " + std::to_string(count) + " held request(s)");
}

void Cluster::add_fault(const std::string& spec) const {
  control_ok(control("/proxy/faults", nlohmann::json{{"spec", spec}}.dump()), "adding fault " + spec);
}

void Cluster::clear_faults() const {
  control_ok(kubectl({"delete", "--raw", "/proxy/faults"}), "removing the fault rules");
}

void Cluster::release_held() const { control_ok(control("/proxy/release"), "releasing the held requests"); }

void Cluster::compact() const {
  // One write first: a watch resumes from the revision of the last event it saw, and a compaction exactly there
  // would leave that revision servable.
  World& w = world();
  w.admin({"delete", "configmap", "-n", "default", "compaction-marker", "--ignore-not-found"});
  w.admin_ok({"create", "configmap", "-n", "default", "compaction-marker"});
  const Run run = run_process({"/bin/bash", kSource + "/tests/cluster/cluster.sh", "compact", world().dir()});
  control_ok(run, "cluster.sh compact");
}

}  // namespace e2e
