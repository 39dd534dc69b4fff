#include "cmd/common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kube/names.h"
#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;
namespace fs = std::filesystem;

void add_global_flags(po::options_description& desc, GlobalFlags& flags) {
  // kubectl's connection flags; they override the kubeconfig's values (see kube::load_rest_config).
  desc.add_options()("kubeconfig", po::value(&flags.kube.kubeconfig), "Path to the kubeconfig file to use")(
      "context", po::value(&flags.kube.context), "The name of the kubeconfig context to use")(
      "cluster", po::value(&flags.kube.cluster), "The name of the kubeconfig cluster to use")(
      "user", po::value(&flags.kube.user), "The name of the kubeconfig user to use")(
      "namespace,n", po::value(&flags.kube.namespace_), "The namespace (must equal job_id when a config is given)")(
      "server,s", po::value(&flags.kube.server), "The address and port of the Kubernetes API server")(
      "token", po::value(&flags.kube.token), "Bearer token for authentication to the API server")(
      "tls-server-name", po::value(&flags.kube.tls_server_name),
      "Server name to use for server certificate validation (default: the server's host)")(
      "insecure-skip-tls-verify", po::value(&flags.kube.insecure_skip_tls_verify)->implicit_value(true),
      "Do not check the server's certificate (insecure)")(
      "request-timeout", po::value(&flags.kube.request_timeout)->default_value("0"),
      "How long to wait for one server request: seconds, or a duration such as 30s, 1m (0 = no limit)")(
      "v,v", po::value(&flags.verbosity)->default_value(0), "Log level: 6 requests, 8 request/response bodies");
}

DryRun parse_dry_run(const std::string& s) {
  if (s == "none") return DryRun::None;
  if (s == "client" || s.empty()) return DryRun::Client;
  if (s == "server") return DryRun::Server;
  throw UsageError("Invalid dry-run value (" + s + "). Must be \"none\", \"server\", or \"client\".");
}

std::chrono::milliseconds parse_duration(const std::string& text, const std::string& flag) {
  const auto bad = [&](const std::string& why) {
    return UsageError("invalid value \"" + text + "\" for " + flag + ": " + why +
                      " (a duration such as 30s, 10m or 1h30m)");
  };
  if (text.empty()) throw bad("empty");
  if (text[0] == '-') throw bad("negative");
  if (std::all_of(text.begin(), text.end(), ::isdigit)) {
    if (text.size() > 9) throw bad("too long");
    return std::chrono::seconds(std::stoll(text));
  }
  // Go's time.ParseDuration without fractions: (number unit)+ with units h, m, s, ms.
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 9) throw bad("expected a number");
    const double value = std::stod(text.substr(i, j - i));
    std::size_t k = j;
    while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
    const std::string unit = text.substr(j, k - j);
    if (unit == "h") total_ms += value * 3600e3;
    else if (unit == "m") total_ms += value * 60e3;
    else if (unit == "s") total_ms += value * 1e3;
    else if (unit == "ms") total_ms += value;
    else throw bad(unit.empty() ? "missing unit" : "unknown unit \"" + unit + "\"");
    i = k;
  }
  if (total_ms > 366.0 * 24 * 3600e3) throw bad("longer than a year");
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms));
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw CommandError("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError("cannot read " + path + ": " + std::strerror(errno));
  // A bound keeps a wrong path (a device, a pipe that never ends) from hanging the command or eating memory;
  // nothing the tool reads (configs, scripts) comes near it, and a ConfigMap holds 1 MiB at most anyway.
  constexpr std::size_t kMaxInput = 16 * 1024 * 1024;
  std::string content;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    content.append(buf, static_cast<std::size_t>(in.gcount()));
    if (content.size() > kMaxInput)
      throw CommandError("cannot read " + path + ": larger than " + std::to_string(kMaxInput) + " bytes");
  }
  if (in.bad()) throw CommandError("cannot read " + path + ": " + std::strerror(errno));
  return content;
}

namespace {

/// Creates a file beside `path` that did not exist (O_EXCL) and is no link (O_NOFOLLOW); its name in `tmp`.
int create_beside(const std::string& path, std::string& tmp) {
  const std::filesystem::path p(path);
  for (int i = 0;; ++i) {
    tmp = (p.parent_path() /
           ("." + p.filename().string() + "." + std::to_string(::getpid()) + "-" + std::to_string(i) + ".tmp"))
              .string();
    // 0666 under the umask: the mode std::ofstream would give a new file.
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST || i == 99) throw CommandError("cannot write " + path + ": " + std::strerror(errno));
  }
}

}  // namespace

void write_file_no_follow(const std::string& path, const std::string& text) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw CommandError(path +
                       " is a symbolic link; kubectl-mindie never writes through one (someone may have planted "
                       "it to overwrite its target): remove it and run again");
  std::string tmp;
  const int fd = create_beside(path, tmp);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  // rename() replaces a link planted at `path` since the check, never what it points to.
  if (done < text.size() || !closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = done < text.size() ? write_errno : errno;
    ::unlink(tmp.c_str());
    throw CommandError("cannot write " + path + ": " + std::strerror(err));
  }
}

void check_namespace_flag(const std::string& namespace_flag, const std::string& job_id) {
  if (!namespace_flag.empty() && namespace_flag != job_id) {
    throw UsageError("the namespace from the command line (--namespace " + namespace_flag +
                     ") does not match motor_deploy_config.job_id (" + job_id +
                     "): job_id is the namespace of the deployment; drop -n or make them equal");
  }
}

void check_namespace_syntax(const std::string& namespace_flag) {
  if (!namespace_flag.empty() && !kube::is_dns1123_label(namespace_flag))
    throw UsageError("invalid namespace \"" + namespace_flag +
                     "\": a namespace is a DNS-1123 label (lower-case "
                     "letters, digits and '-', at most 63 characters)");
}

void check_config_input_flags(const std::string& filename, const std::string& env_file, const std::string& config_dir) {
  if (filename.empty() && config_dir.empty()) throw UsageError("must specify -f user_config.json or --config-dir DIR");
  if (!filename.empty() && !config_dir.empty()) throw UsageError("-f and --config-dir cannot be used together");
  if (!env_file.empty() && !config_dir.empty())
    throw UsageError("-e and --config-dir cannot be used together (--config-dir reads DIR/env.json)");
}

ConfigInputs read_config_inputs(const std::string& filename, const std::string& env_file,
                                const std::string& config_dir) {
  std::string config_path = filename;
  std::string env_path = env_file;
  if (!config_dir.empty()) {
    config_path = (std::filesystem::path(config_dir) / "user_config.json").string();
    const auto candidate = std::filesystem::path(config_dir) / "env.json";
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec)) env_path = candidate.string();
  }
  ConfigInputs inputs{config::parse_user_config(read_file(config_path), config_path), std::nullopt, ""};
  if (env_path.empty() && config_dir.empty()) {
    // PyMotor's configs name their env.json (motor_deploy_config.env_path, e.g. "./conf/env.json").
    boost::system::error_code ec;
    const json::value raw = json::parse(inputs.user.raw, ec);
    const json::value* named = ec ? nullptr : util::find(&raw, {"motor_deploy_config", "env_path"});
    if (named && named->is_string() && !named->get_string().empty()) {
      const fs::path p(std::string(named->get_string()));
      env_path = (p.is_absolute() ? p : fs::path(config_path).parent_path() / p).lexically_normal().string();
      std::error_code missing;
      if (!fs::exists(env_path, missing))
        throw CommandError(config_path + ": motor_deploy_config.env_path names " + std::string(named->get_string()) +
                           ", and " + env_path + " does not exist: pass -e env.json");
      inputs.env_from_config = env_path;
    }
  }
  if (!env_path.empty()) inputs.env = config::parse_env_config(read_file(env_path), env_path);
  return inputs;
}

namespace {

/// True when every cause of a server-side apply conflict names our own field manager: fields that scale or
/// update-config changed with a patch (an Update entry of "kubectl-mindie" in managedFields) and that deploy now
/// applies again.
bool conflicts_only_with_own_updates(const kube::ApiError& e) {
  if (!e.is_conflict() || e.causes().empty()) return false;
  const std::string own = std::string("conflict with \"") + render::kFieldManager + "\"";
  return std::all_of(e.causes().begin(), e.causes().end(), [&](const kube::StatusCause& c) {
    return c.reason == "FieldManagerConflict" && c.message.compare(0, own.size(), own) == 0;
  });
}

}  // namespace

bool outcome_unknown(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const kube::TransportError&) {
    return true;
  } catch (const kube::ApiError& e) {
    return e.code() >= 500;
  } catch (...) {
    return false;
  }
}

json::object apply_taking_back_own_fields(kube::Client& client, const kube::GVR& r, const json::object& obj,
                                          const kube::WriteOptions& opts, const std::function<void()>& before_force) {
  try {
    return client.apply(r, obj, opts);
  } catch (const kube::ApiError& e) {
    // A conflict without causes is a failed resourceVersion precondition, not a field conflict: the caller's.
    if (!e.is_conflict() || opts.force || e.causes().empty()) throw;
    if (conflicts_only_with_own_updates(e)) {
      if (before_force) before_force();
      kube::WriteOptions forced = opts;
      forced.force = true;
      return client.apply(r, obj, forced);
    }
    // kubectl apply --server-side's advice for the same situation.
    throw PartialFailure(std::current_exception(),
                         "the fields above are managed by another field manager: change the config to agree, or "
                         "re-run with --force-conflicts to take them over");
  }
}

void append_with_kind(boost::json::array& out, const boost::json::array& items, const std::string& kind) {
  for (const auto& item : items) {
    out.push_back(item);
    if (out.back().is_object()) out.back().as_object()["kind"] = kind;
  }
}

}  // namespace mindie::cmd
