#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace e2e {

const std::string& mindie_binary() {
  static const std::string path = [] {
    const char* given = std::getenv("MINDIE_E2E_BINARY");
    return std::string(given != nullptr && *given != '\0' ? given : MINDIE_BINARY);
  }();
  return path;
}

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "mindie-e2e-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const std::string p = path_ + "/" + name;
  fs::create_directories(fs::path(p).parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  if (!out.flush()) throw std::runtime_error("cannot write " + p);
  return p;
}

std::vector<std::string> faked(const std::string& faketime, std::vector<std::string> argv) {
  static const std::string lib = [] {
    std::error_code ec;
    for (const auto& dir : std::filesystem::directory_iterator("/usr/lib", ec)) {
      const auto path = dir.path() / "faketime" / "libfaketime.so.1";
      if (std::filesystem::exists(path, ec)) return path.string();
    }
    throw std::runtime_error("libfaketime.so.1 not found under /usr/lib/*/faketime/ (apt-get install faketime)");
  }();
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::vector<std::string> out = {"/usr/bin/env", "LD_PRELOAD=" + lib, "FAKETIME=" + faketime,
                                  std::string("ASAN_OPTIONS=") + (asan != nullptr ? std::string(asan) + ":" : "") +
                                      "verify_asan_link_order=0"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

/// Spawns argv with stdout/stderr connected to fresh pipes; returns the pid and the read ends.
pid_t spawn(const std::vector<std::string>& argv, int& out_fd, int& err_fd) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  auto args = c_argv(argv);
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  out_fd = out_pipe[0];
  err_fd = err_pipe[0];
  return pid;
}

}  // namespace

Run run_process(const std::vector<std::string>& argv) { return run_processes({argv}).front(); }

void fill_npu_pool(const Cluster& sb, const TempDir& dir, int in_use) {
  const std::string a2 = "module-910b-8";
  int npus = 0;
  for (const auto& node : kubectl_items(sb, "nodes", "", "accelerator-type=" + a2))
    npus += std::stoi(node["status"]["allocatable"]["huawei.com/Ascend910"].get<std::string>());
  const int fillers = (npus - in_use) / 4;
  if (fillers <= 0) throw std::runtime_error("fill_npu_pool: no NPUs left to fill");
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::json::array()}};
  for (int i = 0; i < fillers; ++i)
    list["items"].push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata",
          {{"name", "filler-" + std::to_string(i)}, {"namespace", "mindie-motor"}, {"labels", {{"app", "filler"}}}}},
         {"spec",
          {{"nodeSelector", {{"accelerator-type", a2}}},
           {"containers",
            {{{"name", "c"}, {"image", "filler"}, {"resources", {{"limits", {{"huawei.com/Ascend910", "4"}}}}}}}}}}});
  sb.admin_ok({"apply", "-f", dir.write("filler.json", list.dump())});
  sb.wait_pods("mindie-motor", "app=filler", static_cast<std::size_t>(fillers));
}

nlohmann::json kubectl_items(const Target& sb, const std::string& kind, const std::string& ns,
                             const std::string& selector) {
  std::vector<std::string> argv = {"get", kind, "-o", "json"};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  if (!selector.empty()) argv.insert(argv.end(), {"-l", selector});
  const Run run = sb.kubectl(argv);
  if (run.exit_code != 0) throw std::runtime_error("kubectl get " + kind + " failed: " + run.err);
  nlohmann::json items = nlohmann::json::array();
  nlohmann::json list = nlohmann::json::parse(run.out);  // bound first: a range over a temporary's member dangles
  for (auto& item : list.at("items")) {
    const auto& meta = item.at("metadata");
    const std::string name = meta.value("name", "");
    // What Kubernetes itself puts into every namespace (the root-ca-certificate-publisher's ConfigMap, the
    // serviceaccount controller's default ServiceAccount) is none of a test's business.
    const std::string k = item.value("kind", "");
    if ((k == "ConfigMap" && name == "kube-root-ca.crt") || (k == "ServiceAccount" && name == "default")) continue;
    items.push_back(std::move(item));
  }
  return items;
}

std::vector<std::string> item_names(const nlohmann::json& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.at("metadata").at("name").get<std::string>());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<LoggedRequest> writes_since(const Target& sb, std::size_t mark) {
  std::vector<LoggedRequest> out;
  for (const auto& r : sb.requests_since(mark))
    if (r.is_write()) out.push_back(r);
  return out;
}

Background::Background(const std::vector<std::string>& argv) { pid_ = spawn(argv, out_fd_, err_fd_); }

Background::~Background() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

// Reads whatever either pipe holds, waiting at most `timeout_ms` (-1: until something happens). False when both
// pipes are closed.
bool Background::read_some(int timeout_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  if (poll(fds, 2, timeout_ms) < 0) return errno == EINTR;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(fds[i].fd, buf, sizeof buf);
    if (n > 0) {
      (i == 0 ? run_.out : run_.err).append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      close(fds[i].fd);
      (i == 0 ? out_fd_ : err_fd_) = -1;
    }
  }
  return true;
}

std::string Background::wait_for_output(const std::string& needle, int cap_seconds) {
  return wait_for(false, needle, cap_seconds);
}

std::string Background::wait_for_error(const std::string& needle, int cap_seconds) {
  return wait_for(true, needle, cap_seconds);
}

std::string Background::wait_for(bool err, const std::string& needle, int cap_seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(cap_seconds);
  std::string& text = err ? run_.err : run_.out;
  std::size_t& consumed = err ? consumed_err_ : consumed_;
  for (;;) {
    const auto at = text.find(needle, consumed);
    if (at != std::string::npos) {
      consumed = at + needle.size();
      return text;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0 || (err ? err_fd_ : out_fd_) < 0 || !read_some(static_cast<int>(left.count()))) {
      throw std::runtime_error("\"" + needle + "\" never appeared; stdout:\n" + run_.out + "\nstderr:\n" + run_.err);
    }
  }
}

void Background::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

Run Background::finish() {
  while (read_some(-1)) {
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  run_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run_;
}

Run Background::stop() {
  if (pid_ > 0) kill(pid_, SIGTERM);
  return finish();
}

std::vector<Run> run_processes(const std::vector<std::vector<std::string>>& argvs) {
  std::vector<pid_t> pids;
  std::vector<pollfd> fds;
  std::vector<std::string*> sinks;
  std::vector<Run> runs(argvs.size());
  for (std::size_t i = 0; i < argvs.size(); ++i) {
    int out_fd = -1, err_fd = -1;
    pids.push_back(spawn(argvs[i], out_fd, err_fd));
    fds.push_back({out_fd, POLLIN, 0});
    sinks.push_back(&runs[i].out);
    fds.push_back({err_fd, POLLIN, 0});
    sinks.push_back(&runs[i].err);
  }
  // Drain every pipe together so a child that fills one cannot block.
  std::size_t open_fds = fds.size();
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;  // poll() ignores negative descriptors
        --open_fds;
      }
    }
  }
  for (std::size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    runs[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return runs;
}

void write_stand_in_scripts(const TempDir& dir, const std::string& sub) {
  for (const auto& entry : std::filesystem::directory_iterator(kScripts))
    dir.write(sub + "/" + entry.path().filename().string(), read_file(entry.path().string()));
}

std::vector<std::string> Target::mindie_argv(std::vector<std::string> args) const {
  std::vector<std::string> argv = {e2e::mindie_binary(), "--kubeconfig", kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Run Target::mindie(std::vector<std::string> args) const { return run_process(mindie_argv(std::move(args))); }

Run Target::kubectl(std::vector<std::string> args) const {
  std::vector<std::string> argv = {kubectl_binary(), "--kubeconfig", kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

std::size_t count_writes(const std::vector<LoggedRequest>& reqs) {
  std::size_t n = 0;
  for (const auto& r : reqs) n += r.is_write() ? 1 : 0;
  return n;
}

bool baseline_agrees_with_live(const Target& sb, const std::string& ns, std::string& why) {
  const Run status = sb.mindie({"status", "-n", ns, "-o", "json"});
  if (status.exit_code == 0) {
    const auto report = nlohmann::json::parse(status.out);
    why = report["drift"].dump();
    return report["drift"].empty();
  }
  why = status.err;
  if (status.err.find("no deployment found") == std::string::npos) return false;
  // No baseline: then nothing may run without one either.
  const Run live = sb.kubectl({"-n", ns, "get", "inferservicesets.mindcluster.huawei.com", "-o", "name"});
  why += live.out + live.err;
  return live.exit_code == 0 && live.out.empty();
}

}  // namespace e2e
