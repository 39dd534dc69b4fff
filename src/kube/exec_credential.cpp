// exec credential plugins, after client-go's plugin/pkg/client/auth/exec.
#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

extern char** environ;

namespace mindie::kube {
namespace {

namespace json = boost::json;

std::string base64(const std::string& in) {
  std::string out(boost::beast::detail::base64::encoded_size(in.size()), '\0');
  out.resize(boost::beast::detail::base64::encode(out.data(), in.data(), in.size()));
  return out;
}

// RFC 3339 as Go's metav1.Time writes it: "2006-01-02T15:04:05Z", optional fraction, "Z" or "+hh:mm"/"-hh:mm".
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& s) {
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.')
    for (++rest; *rest >= '0' && *rest <= '9';) ++rest;
  long offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if ((*rest == '+' || *rest == '-') && std::strlen(rest) == 6 && rest[3] == ':') {
    const int h = std::atoi(std::string(rest + 1, 2).c_str());
    const int m = std::atoi(std::string(rest + 4, 2).c_str());
    offset = (rest[0] == '+' ? 1 : -1) * (h * 3600L + m * 60L);
    rest += 6;
  } else {
    return std::nullopt;
  }
  if (*rest != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm) - offset);
}

// client-go's interactive decision (exec.go): Never, IfAvailable (stdin is a terminal), Always (must be one).
bool decide_interactive(const ExecConfig& exec, int stdin_fd) {
  const bool terminal = isatty(stdin_fd) == 1;
  if (exec.interactive_mode == "Never") return false;
  if (exec.interactive_mode == "Always") {
    if (!terminal) {
      throw ExecCredentialError("exec plugin \"" + exec.command +
                                "\" has interactiveMode Always, but standard input is not a terminal");
    }
    return true;
  }
  return terminal;
}

// Our environment with exec.env set over it (later entries win, as with Go's exec.Cmd.Env) and
// KUBERNETES_EXEC_INFO last.
std::vector<std::string> plugin_environment(const ExecConfig& exec, const std::string& exec_info) {
  std::vector<std::string> entries;
  std::map<std::string, std::size_t> index;
  const auto set = [&](const std::string& name, const std::string& value) {
    const auto [it, inserted] = index.try_emplace(name, entries.size());
    if (inserted) {
      entries.push_back(name + "=" + value);
    } else {
      entries[it->second] = name + "=" + value;
    }
  };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) set(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const auto& [name, value] : exec.env) set(name, value);
  set("KUBERNETES_EXEC_INFO", exec_info);
  return entries;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// A started plugin: its process and the read end of its stdout.
struct SpawnedPlugin {
  pid_t pid = -1;
  int stdout_fd = -1;
};

// Starts `exec` (argv = command + args, environment = plugin_environment) with its stdout on a pipe and its stdin
// `stdin_fd` when interactive, else /dev/null. `name` names it in errors. Throws ExecCredentialError.
SpawnedPlugin spawn_plugin(const ExecConfig& exec, bool interactive, int stdin_fd, const std::string& exec_info,
                           const std::string& name) {
  std::vector<std::string> argv = {exec.command};
  argv.insert(argv.end(), exec.args.begin(), exec.args.end());
  std::vector<std::string> env = plugin_environment(exec, exec_info);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw ExecCredentialError("cannot run " + name + ": pipe: " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (interactive) {
    if (stdin_fd != STDIN_FILENO) posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  // Its own process group, so that a kill at the bound reaches the processes it started too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (!interactive) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  pid_t pid = -1;
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);
  const int rc = posix_spawnp(&pid, exec.command.c_str(), &actions, &attr, c_argv.data(), c_env.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    if (rc == ENOENT) {
      throw ExecCredentialError(name + ": executable not found" +
                                (exec.install_hint.empty() ? std::string() : "\n\n" + exec.install_hint));
    }
    throw ExecCredentialError("cannot run " + name + ": " + std::strerror(rc));
  }
  return {pid, out[0]};
}

// Reads `fd` into `output` until EOF; returns why it stopped early ("" = it did not): `timed_out` at `deadline`, or
// more than `max_output` bytes.
std::string read_output(int fd, std::chrono::steady_clock::time_point deadline, std::size_t max_output,
                        const std::string& name, const std::string& timed_out, std::string& output) {
  char buf[16384];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return timed_out;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    output.append(buf, static_cast<std::size_t>(n));
    if (output.size() > max_output)
      return name + " wrote more than " + std::to_string(max_output) + " bytes; it was stopped";
  }
}

// False when process `pid` is still running at `deadline` (a pidfd becomes readable when the process ends); true
// when it ended, or when no pidfd can be had to tell.
bool exits_before(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return true;
  int ready = 0;
  do {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{pidfd, POLLIN, 0};
    ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000000))) : 0;
  } while (ready < 0 && errno == EINTR);
  close(pidfd);
  return ready != 0;
}

// Kills the plugin (its process group when `own_group`) when there is a `problem`, waits for its exit, and throws
// ExecCredentialError for the problem, a signal or a non-zero exit code.
void reap(pid_t pid, bool own_group, const std::string& problem, const std::string& name) {
  if (!problem.empty()) kill(own_group ? -pid : pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!problem.empty()) throw ExecCredentialError(problem);
  if (WIFSIGNALED(status))
    throw ExecCredentialError(name + " was killed by signal " + std::to_string(WTERMSIG(status)));
  if (WEXITSTATUS(status) != 0)
    throw ExecCredentialError(name + " failed with exit code " + std::to_string(WEXITSTATUS(status)));
}

}  // namespace

std::string exec_info_json(const RestConfig& config, bool interactive) {
  const ExecConfig& exec = *config.exec;
  json::object spec{{"interactive", interactive}};
  if (exec.provide_cluster_info) {
    json::object cluster{{"server", config.server}};
    if (!config.tls_server_name.empty()) cluster["tls-server-name"] = config.tls_server_name;
    if (config.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!config.ca_pem.empty()) cluster["certificate-authority-data"] = base64(config.ca_pem);
    if (!config.proxy_url.empty()) cluster["proxy-url"] = config.proxy_url;
    if (!exec.cluster_config_json.empty()) cluster["config"] = json::parse(exec.cluster_config_json);
    spec["cluster"] = std::move(cluster);
  }
  return json::serialize(json::object{{"apiVersion", exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}});
}

ExecCredential parse_exec_credential(std::string_view output, const std::string& api_version,
                                     const std::string& command) {
  const std::string prefix = "exec plugin \"" + command + "\" returned ";
  json::value doc;
  boost::system::error_code ec;
  doc = json::parse(output, ec);
  if (ec || !doc.is_object()) throw ExecCredentialError(prefix + "output that is not a JSON ExecCredential");
  const json::object& obj = doc.as_object();
  const auto str = [](const json::object& o, const char* key) -> std::string {
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  if (str(obj, "kind") != "ExecCredential")
    throw ExecCredentialError(prefix + "an object whose kind is not ExecCredential");
  if (str(obj, "apiVersion") != api_version) {
    throw ExecCredentialError(prefix + "apiVersion \"" + str(obj, "apiVersion") + "\", but it is configured for \"" +
                              api_version + "\"");
  }
  const json::value* status = obj.if_contains("status");
  if (!status || !status->is_object()) throw ExecCredentialError(prefix + "no status");
  const json::object& st = status->as_object();
  ExecCredential cred;
  cred.token = str(st, "token");
  cred.client_cert_pem = str(st, "clientCertificateData");
  cred.client_key_pem = str(st, "clientKeyData");
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty())
    throw ExecCredentialError(prefix + "only one of clientCertificateData and clientKeyData, not both");
  if (cred.token.empty() && cred.client_cert_pem.empty())
    throw ExecCredentialError(prefix + "neither a token nor a client certificate and key");
  if (std::any_of(cred.token.begin(), cred.token.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    throw ExecCredentialError(prefix + "a token with control characters");
  if (const std::string expiry = str(st, "expirationTimestamp"); !expiry.empty()) {
    cred.expiry = parse_rfc3339(expiry);
    if (!cred.expiry) throw ExecCredentialError(prefix + "an expirationTimestamp that is not RFC 3339");
  }
  return cred;
}

ExecCredentialPlugin::ExecCredentialPlugin(const RestConfig& config, ExecLimits limits)
    : config_(config), limits_(limits) {}

ExecCredential ExecCredentialPlugin::fetch() {
  const ExecConfig& exec = *config_.exec;
  const bool interactive = decide_interactive(exec, limits_.stdin_fd);
  const std::string name = "exec plugin \"" + exec.command + "\"";
  const SpawnedPlugin plugin = spawn_plugin(exec, interactive, limits_.stdin_fd, exec_info_json(config_, interactive),
                                            name);
  const std::chrono::milliseconds bound = interactive ? limits_.interactive_timeout : limits_.timeout;
  const auto deadline = std::chrono::steady_clock::now() + bound;
  const std::string timed_out = name + " did not finish within " +
                                (bound.count() % 1000 == 0 ? std::to_string(bound.count() / 1000) + " s"
                                                           : std::to_string(bound.count()) + " ms") +
                                " (kubectl-mindie's bound for " +
                                (interactive ? "an interactive" : "a non-interactive") +
                                " plugin; kubectl waits without one): " +
                                (interactive ? "it was stopped" : "it and its child processes were stopped");
  std::string output;
  std::string problem = read_output(plugin.stdout_fd, deadline, limits_.max_output, name, timed_out, output);
  close(plugin.stdout_fd);
  // A plugin may close stdout and go on running: wait for its exit within the same deadline.
  if (problem.empty() && !exits_before(plugin.pid, deadline)) problem = timed_out;
  reap(plugin.pid, !interactive, problem, name);
  return parse_exec_credential(output, exec.api_version, exec.command);
}

}  // namespace mindie::kube
