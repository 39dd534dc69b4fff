// The test cluster's own scripts when things go wrong (tests/cluster/cluster.sh and build.sh, issue 14): a taken
// port, a missing binary or a component never ready fails `cluster.sh up` with one line naming it, the last lines of
// that component's log, exit status 1 and nothing left running; a failed build leaves no temporary folder behind;
// the build cache key follows every pinned file. No shared cluster: each test makes what it needs.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.h"

namespace {

namespace fs = std::filesystem;
const std::string kScriptDir = std::string(MINDIE_SOURCE_DIR) + "/tests/cluster";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The PIDs of live processes whose command line or environment names `dir` (what cluster.sh counts as its own:
/// the supervisor's command line and MINDIE_CLUSTER_DIR, the components' flags). Zombies have neither.
std::vector<std::string> processes_of(const std::string& dir) {
  std::vector<std::string> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(getpid())) continue;
    for (const char* file : {"/cmdline", "/environ"}) {
      std::ifstream in(entry.path().string() + file, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (contains(text, dir)) {
        pids.push_back(pid);
        break;
      }
    }
  }
  return pids;
}

/// A listening loopback TCP socket on a port the kernel picked: a port someone else has taken.
class TakenPort {
 public:
  TakenPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 1) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot listen on a loopback port");
    port_ = ntohs(addr.sin_port);
  }
  ~TakenPort() { close(fd_); }
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// `cluster.sh up DIR` with extra environment `env` (NAME=VALUE), watching this process; `down` on destruction, so
/// that a start that wrongly succeeds leaves nothing running either.
class Up {
 public:
  Up(const std::string& dir, const std::vector<std::string>& env) : dir_(dir) {
    std::vector<std::string> argv = {"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(),
                {"/bin/bash", kScriptDir + "/cluster.sh", "up", dir, "--watch-pid", std::to_string(getpid())});
    run = e2e::run_process(argv);
  }
  ~Up() { e2e::run_process({"/bin/bash", kScriptDir + "/cluster.sh", "down", dir_}); }
  Up(const Up&) = delete;
  Up& operator=(const Up&) = delete;
  e2e::Run run;

 private:
  std::string dir_;
};

/// A folder of links to the control plane's binaries but `name`, which is left out, or replaced by `script` when given.
std::string bin_folder(const e2e::TempDir& tmp, const std::string& name, const std::string& script = "") {
  const std::string& real = e2e::control_plane_bin_dir();
  if (!fs::exists(real + "/kube-apiserver"))
    throw std::runtime_error("the control plane is not built (no " + real + "/kube-apiserver)");
  const std::string dir = tmp.path() + "/bin";
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(real))
    if (entry.path().filename() != name) fs::create_symlink(entry.path(), dir + "/" + entry.path().filename().string());
  if (!script.empty()) {
    tmp.write("bin/" + name, script);
    fs::permissions(dir + "/" + name, fs::perms::owner_all, fs::perm_options::add);
  }
  return dir;
}

/// A stand-in `go` for build.sh: answers `go env` and `go list -m` (the k8s.io/kubernetes version in STUB_KV),
/// `go mod download -json` (a module folder, STUB_KDIR), and fails every `go build`.
std::string stub_go(const e2e::TempDir& tmp) {
  tmp.write("stub/go", R"(#!/bin/bash
case $1 in
  env) printf 'go1.26.0\nlinux\namd64\n' ;;
  list) echo "${STUB_KV:?}" ;;
  mod) printf '{\n\t"Path": "k8s.io/kubernetes",\n\t"Dir": "%s",\n}\n' "${STUB_KDIR:?}" ;;
  build) echo "go build: stand-in failure" >&2; exit 1 ;;
  *) echo "stub go: unexpected: $*" >&2; exit 3 ;;
esac
)");
  fs::permissions(tmp.path() + "/stub/go", fs::perms::owner_all, fs::perm_options::add);
  return tmp.path() + "/stub";
}

/// The files and folders under `dir` whose names start with one of build.sh's temporary prefixes.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    for (const char* prefix : {"bin.tmp.", "gen.", "src."})
      if (name.rfind(prefix, 0) == 0) out.push_back(entry.path());
  }
  return out;
}

}  // namespace

TEST_CASE(
    "launcher: a taken API server port fails up with one line and kube-apiserver's last log lines; nothing "
    "left running") {
  e2e::TempDir tmp;
  const TakenPort taken;
  const std::string dir = tmp.path() + "/cluster";
  const Up up(dir, {"MINDIE_CLUSTER_APISERVER_PORT=" + std::to_string(taken.port())});
  INFO(up.run.err);
  CHECK(up.run.exit_code == 1);
  CHECK(up.run.err.rfind("cluster.sh: kube-apiserver exited (status", 0) == 0);
  CHECK(contains(up.run.err, "--- last lines of " + dir + "/logs/kube-apiserver.log:"));
  CHECK(contains(up.run.err, "address already in use"));
  CHECK(processes_of(dir).empty());
}

TEST_CASE("launcher: a missing binary fails up with one line naming it; nothing left running") {
  e2e::TempDir tmp;
  const std::string bin = bin_folder(tmp, "kwok");
  const std::string dir = tmp.path() + "/cluster";
  const Up up(dir, {"MINDIE_CLUSTER_BIN=" + bin});
  CHECK(up.run.exit_code == 1);
  CHECK(up.run.err == "cluster.sh: missing binary " + bin + "/kwok (build them: bash tests/cluster/build.sh)\n");
  CHECK(processes_of(dir).empty());
}

TEST_CASE(
    "launcher: a component that never gets ready fails up when the time is up, naming it, with its log; "
    "nothing left running") {
  e2e::TempDir tmp;
  // A KWOK that runs but never makes a node Ready (exec: the process cluster.sh stops is the one that runs).
  const std::string bin = bin_folder(tmp, "kwok",
                                     "#!/bin/sh\necho 'stand-in kwok: no node gets Ready'\n"
                                     "exec sleep 100000\n");
  const std::string dir = tmp.path() + "/cluster";
  const Up up(dir, {"MINDIE_CLUSTER_BIN=" + bin, "MINDIE_CLUSTER_TIMEOUT=20"});
  INFO(up.run.err);
  CHECK(up.run.exit_code == 1);
  CHECK(up.run.err.rfind("cluster.sh: KWOK did not make the ", 0) == 0);
  CHECK(contains(up.run.err, "fake nodes Ready within 20s\n--- last lines of " + dir +
                                 "/logs/kwok.log:\n"
                                 "stand-in kwok: no node gets Ready\n"));
  CHECK(processes_of(dir).empty());
}

TEST_CASE("launcher: a CRD folder without a CRD fails up saying so; nothing left running") {
  e2e::TempDir tmp;
  fs::create_directories(tmp.path() + "/crds");
  const std::string dir = tmp.path() + "/cluster";
  const Up up(dir, {"MINDIE_CLUSTER_CRDS=" + tmp.path() + "/crds"});
  CHECK(up.run.exit_code == 1);
  CHECK(up.run.err == "cluster.sh: no CRD (*.yaml) in " + tmp.path() + "/crds\n");
  CHECK(processes_of(dir).empty());
}

TEST_CASE("launcher: a port or timeout that is not a number fails up before anything starts, naming the variable") {
  e2e::TempDir tmp;
  for (const std::string bad :
       {"MINDIE_CLUSTER_APISERVER_PORT=abc", "MINDIE_CLUSTER_ETCD_PORT=70000", "MINDIE_CLUSTER_TIMEOUT=-5"}) {
    CAPTURE(bad);
    const std::string dir = tmp.path() + "/cluster";
    const Up up(dir, {bad});
    const std::string var = bad.substr(0, bad.find('='));
    CHECK(up.run.exit_code == 1);
    CHECK(up.run.err.rfind("cluster.sh: " + var + " must be a number from 1 to ", 0) == 0);
    CHECK(contains(up.run.err, "got '" + bad.substr(bad.find('=') + 1) + "'"));
    CHECK_FALSE(fs::exists(dir + "/logs/etcd.log"));
    CHECK(processes_of(dir).empty());
  }
}

TEST_CASE("launcher: down where nothing runs says so and succeeds") {
  e2e::TempDir tmp;
  const e2e::Run down = e2e::run_process({"/bin/bash", kScriptDir + "/cluster.sh", "down", tmp.path()});
  CHECK(down.exit_code == 0);
  CHECK(down.err == "cluster.sh: nothing was running in " + tmp.path() + "\n");
}

TEST_CASE("build.sh: a failed build removes its temporary folders, the 1.19 OpenAPI step's too, and says why") {
  e2e::TempDir tmp;
  const std::string path = stub_go(tmp) + ":" + std::getenv("PATH");
  fs::create_directories(tmp.path() + "/kubernetes/hack/boilerplate");
  for (const auto& [release, version] : {std::pair{"oldest", "v1.19.16"}, std::pair{"current", "v1.37.2"}}) {
    CAPTURE(release);
    const std::string cache = tmp.path() + "/cache-" + release;
    const e2e::Run run = e2e::run_process({"/usr/bin/env", "PATH=" + path, "MINDIE_CLUSTER_CACHE=" + cache,
                                           std::string("MINDIE_CLUSTER_RELEASE=") + release,
                                           std::string("STUB_KV=") + version, "STUB_KDIR=" + tmp.path() + "/kubernetes",
                                           "MINDIE_CLUSTER_NICE=0", "/bin/bash", kScriptDir + "/build.sh"});
    INFO(run.err);
    CHECK(run.exit_code != 0);
    CHECK(contains(run.err, "go build: stand-in failure"));
    CHECK_FALSE(contains(run.err, "unbound variable"));
    CHECK(run.out.empty());
    CHECK(temporaries(cache).empty());
  }
}

TEST_CASE("build.sh: the cache key follows every pinned file, openapi_inputs.go too, wherever the clone is") {
  e2e::TempDir tmp;
  const std::string path = stub_go(tmp) + ":" + std::getenv("PATH");
  fs::copy(kScriptDir + "/build.sh", tmp.path() + "/build.sh");
  fs::create_directories(tmp.path() + "/go");
  for (const char* m : {"kubernetes-oldest", "etcd", "kwok"})
    fs::copy(kScriptDir + "/go/" + m, tmp.path() + "/go/" + m, fs::copy_options::recursive);
  const auto key = [&](const std::string& script) {
    const e2e::Run run = e2e::run_process(
        {"/usr/bin/env", "PATH=" + path, "MINDIE_CLUSTER_RELEASE=oldest", "/bin/bash", script, "--key"});
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.out.size() == 17);  // 16 hex digits and a newline
    return run.out.substr(0, 16);
  };
  const std::string pinned = key(kScriptDir + "/build.sh");
  CHECK(key(tmp.path() + "/build.sh") == pinned);
  // One package more for openapi-gen, its module already pinned: go.mod and go.sum stay as they are.
  std::ofstream(tmp.path() + "/go/kubernetes-oldest/openapi_inputs.go", std::ios::app) << "// one more\n";
  const std::string inputs_changed = key(tmp.path() + "/build.sh");
  CHECK(inputs_changed != pinned);
  std::ofstream(tmp.path() + "/go/etcd/go.sum", std::ios::app) << "\n";
  CHECK(key(tmp.path() + "/build.sh") != inputs_changed);
}
