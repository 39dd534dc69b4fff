#include "cmd/common.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "kube/curl_transport.h"
#include "kube/deadline_transport.h"
#include "kube/logging_transport.h"
#include "kube/names.h"
#include "kube/retrying_transport.h"
#include "mindie/deployer_scripts.h"
#include "mindie/env_script.h"
#include "mindie/render.h"
#include "util/json_pretty.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_global_flags(po::options_description& desc, GlobalFlags& flags) {
  // kubectl's connection flags; they override the kubeconfig's values (see kube::load_rest_config).
  desc.add_options()
      ("kubeconfig", po::value(&flags.kube.kubeconfig), "Path to the kubeconfig file to use")
      ("context", po::value(&flags.kube.context), "The name of the kubeconfig context to use")
      ("cluster", po::value(&flags.kube.cluster), "The name of the kubeconfig cluster to use")
      ("user", po::value(&flags.kube.user), "The name of the kubeconfig user to use")
      ("namespace,n", po::value(&flags.kube.namespace_), "The namespace (must equal job_id when a config is given)")
      ("server,s", po::value(&flags.kube.server), "The address and port of the Kubernetes API server")
      ("token", po::value(&flags.kube.token), "Bearer token for authentication to the API server")
      ("tls-server-name", po::value(&flags.kube.tls_server_name),
       "Server name to use for server certificate validation (default: the server's host)")
      ("insecure-skip-tls-verify", po::value(&flags.kube.insecure_skip_tls_verify)->implicit_value(true),
       "Do not check the server's certificate (insecure)")
      ("request-timeout", po::value(&flags.kube.request_timeout)->default_value("0"),
       "How long to wait for one server request: seconds, or a duration such as 30s, 1m (0 = no limit)")
      ("v,v", po::value(&flags.verbosity)->default_value(0), "Log level: 6 requests, 8 request/response bodies");
}

DryRun parse_dry_run(const std::string& s) {
  if (s == "none") return DryRun::None;
  if (s == "client" || s.empty()) return DryRun::Client;
  if (s == "server") return DryRun::Server;
  throw UsageError("Invalid dry-run value (" + s + "). Must be \"none\", \"server\", or \"client\".");
}

Printer::Printer(std::ostream& out, std::ostream& err, std::string format)
    : out_(out), err_(err), format_(std::move(format)) {}

void Printer::warning(const std::string& msg) {
  if (holding_) held_.push_back(msg);
  else err_ << "Warning: " << msg << '\n';
}

void Printer::release_warnings() {
  holding_ = false;
  for (const auto& msg : held_) err_ << "Warning: " << msg << '\n';
  held_.clear();
}

void Printer::notice(const std::string& line) { err_ << line << '\n' << std::flush; }

void Printer::mutation(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run) {
  out_ << r.kind_dot_group() << '/' << name;
  if (format_ != "name") {
    out_ << ' ' << verb;
    if (dry_run == DryRun::Client) out_ << " (dry run)";
    if (dry_run == DryRun::Server) out_ << " (server dry run)";
  }
  out_ << '\n';
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

void Printer::result(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run,
                     json::object after) {
  if (format_ != "json" && format_ != "yaml") return mutation(r, name, verb, dry_run);
  if (!after.empty()) object(std::move(after));
}

void Printer::shown_object(json::object obj) {
  if (format_ == "json" || format_ == "yaml") object(std::move(obj));
}

void Printer::subject(const kube::GVR& r, json::object obj) {
  if (format_ == "name") {
    const json::value* md = obj.if_contains("metadata");
    const json::value* name = md && md->is_object() ? md->get_object().if_contains("name") : nullptr;
    out_ << r.kind_dot_group() << '/' << (name && name->is_string() ? std::string(name->get_string()) : "") << '\n';
  }
  if (format_ == "json" || format_ == "yaml") object(std::move(obj));
}

void Printer::summary(const std::string& line) {
  if (format_.empty()) out_ << line << '\n';
}

void Printer::object(json::object obj) {
  if (auto* md = obj.if_contains("metadata"); md && md->is_object()) md->as_object().erase("managedFields");
  queued_.push_back(std::move(obj));
}

void Printer::flush() {
  if (format_ != "json" && format_ != "yaml") return;
  if (queued_.empty() && !always_list_) return;
  json::value doc;
  if (queued_.size() == 1 && !always_list_) {
    doc = std::move(queued_.front());
  } else {
    json::array items;
    for (auto& o : queued_) items.push_back(std::move(o));
    doc = json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)},
                       {"metadata", {{"resourceVersion", ""}}}};
  }
  queued_.clear();
  if (format_ == "json") out_ << util::json_pretty(doc) << '\n';
  else out_ << util::json_to_yaml(doc);
}

namespace {

// The client's transport chain, owned as one: libcurl below, -v logging above it, retries on top so that -v=6
// shows every attempt.
class TransportChain : public kube::HttpTransport {
 public:
  TransportChain(const kube::RestConfig& rest, int verbosity, std::ostream& log)
      : curl_(std::make_unique<kube::CurlTransport>(rest)) {
    kube::HttpTransport* top = curl_.get();
    if (verbosity >= 6) {
      logging_ = std::make_unique<kube::LoggingTransport>(*curl_, verbosity, log);
      top = logging_.get();
    }
    kube::RetryPolicy policy;
    policy.budget = rest.request_timeout;
    policy.budget_name = rest.request_timeout_name;
    // On a terminal a retry says so, so that a slow command is not mistaken for a hung one; a log or a pipe
    // gets the final outcome only (-v=6 shows every attempt).
    if (isatty(STDERR_FILENO) != 0) policy.notice = [out = &log](const std::string& line) { *out << line << std::endl; };
    retrying_ = std::make_unique<kube::RetryingTransport>(*top, std::move(policy));
  }
  /// From now on every request ends by `deadline` (Session::set_deadline).
  void set_deadline(std::chrono::steady_clock::time_point deadline, const std::string& what) {
    deadline_ = std::make_unique<kube::DeadlineTransport>(*retrying_, deadline, what);
    deadline_at_ = deadline;
  }
  void bound_until(std::chrono::steady_clock::time_point deadline, const std::string& what) override {
    // Only ever earlier: a change's bound after a failure never extends a --timeout already set.
    if (deadline_ && deadline_at_ <= deadline) return;
    if (!bounded_) {  // what lift_bound() puts back
      saved_ = std::move(deadline_);
      saved_at_ = deadline_at_;
      bounded_ = true;
    }
    set_deadline(deadline, what);
  }
  void lift_bound() override {
    if (!bounded_) return;
    deadline_ = std::move(saved_);
    deadline_at_ = saved_at_;
    bounded_ = false;
  }
  kube::HttpResponse send(const kube::HttpRequest& req) override { return top().send(req); }
  using kube::HttpTransport::stream;
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override {
    return top().stream(req, sink, on_head);
  }
  std::string server() const override { return retrying_->server(); }

 private:
  kube::HttpTransport& top() { return deadline_ ? *deadline_ : *retrying_; }
  std::unique_ptr<kube::HttpTransport> curl_;
  std::unique_ptr<kube::HttpTransport> logging_;
  std::unique_ptr<kube::HttpTransport> retrying_;
  std::unique_ptr<kube::HttpTransport> deadline_;  // null: no deadline
  std::chrono::steady_clock::time_point deadline_at_{};  // deadline_'s
  bool bounded_ = false;                          // bound_until() set deadline_; saved_ is what it replaced
  std::unique_ptr<kube::HttpTransport> saved_;
  std::chrono::steady_clock::time_point saved_at_{};
};

}  // namespace

Session::Session(const GlobalFlags& flags, std::ostream& log, std::chrono::milliseconds max_request_timeout)
    : verbosity_(flags.verbosity), log_(log), rest_(kube::load_rest_config(flags.kube)) {
  if (max_request_timeout.count() > 0 &&
      (rest_.request_timeout.count() == 0 || rest_.request_timeout > max_request_timeout)) {
    rest_.request_timeout = max_request_timeout;
    rest_.request_timeout_name = "the " + std::to_string(max_request_timeout.count() / 1000) +
                                 "s bound on each request of a command holding the namespace lock";
  }
  transport_ = std::make_unique<TransportChain>(rest_, verbosity_, log_);
  client_ = std::make_unique<kube::Client>(*transport_);
}

std::unique_ptr<kube::HttpTransport> Session::new_transport() const {
  auto chain = std::make_unique<TransportChain>(rest_, verbosity_, log_);
  if (deadline_) chain->set_deadline(deadline_->first, deadline_->second);
  return chain;
}

void Session::set_deadline(std::chrono::steady_clock::time_point deadline, const std::string& what) {
  deadline_.emplace(deadline, what);
  static_cast<TransportChain&>(*transport_).set_deadline(deadline, what);
}

Session::~Session() = default;

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

namespace fs = std::filesystem;

// The folders a layout reads, each with the deployer folder a key must come from there (nullopt: any key).
struct ScannedFolder {
  fs::path path;    // absolute or as given
  std::string rel;  // relative to the --scripts-dir ("" for itself), or the folder's path when outside it
  std::optional<deployer_scripts::Folder> folder;
};

std::vector<ScannedFolder> scanned_folders(const std::string& dir, std::string& layout) {
  using deployer_scripts::Folder;
  std::error_code ec;
  const fs::path d(dir);
  if (fs::is_directory(d / "startup", ec)) {
    layout = "PyMotor's deployer folder";
    return {{d / "startup", "startup/", Folder::Startup},
            {d / "startup" / "roles", "startup/roles/", Folder::Roles},
            {d / "probe", "probe/", Folder::Probe}};
  }
  if (fs::is_directory(d / "roles", ec)) {
    layout = "the deployer's startup folder";
    // probe/ beside the startup folder itself, also when DIR is a symbolic link to it.
    const fs::path probe = fs::weakly_canonical(d, ec).parent_path() / "probe";
    return {{d, "", Folder::Startup}, {d / "roles", "roles/", Folder::Roles}, {probe, probe.string() + "/", Folder::Probe}};
  }
  layout = "a flat folder";
  return {{d, "", std::nullopt}};
}

}  // namespace

std::string ScriptsDir::expected_path(const std::string& key) const {
  fs::path folder = dir;
  if (const auto* s = deployer_scripts::find(key)) {
    std::string ignored;
    for (const auto& f : scanned_folders(dir, ignored))
      if (!f.folder || *f.folder == s->folder) folder = f.path;
  }
  return (folder / key).lexically_normal().string();
}

std::string ScriptsDir::left_out_notice() const {
  if (left_out.empty()) return "";
  std::string names;
  for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
  return "--scripts-dir " + dir + " (" + layout + "): stored the " + std::to_string(scripts.size()) +
         " files deploy.py stores; left out " + names;
}

ScriptsDir read_scripts(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CommandError("--scripts-dir " + dir + " is not a directory");
  ScriptsDir out;
  out.dir = dir;
  const auto folders = scanned_folders(dir, out.layout);
  std::map<std::string, std::string> found_at;  // key -> relative path, for duplicates
  std::set<fs::path> scanned_paths;
  for (const auto& f : folders) scanned_paths.insert(fs::weakly_canonical(f.path, ec));
  for (const auto& f : folders) {
    if (!fs::is_directory(f.path, ec)) continue;
    std::vector<fs::directory_entry> entries;
    for (const auto& entry : fs::directory_iterator(f.path, ec)) entries.push_back(entry);
    if (ec) throw CommandError("cannot list --scripts-dir " + f.path.string() + ": " + ec.message());
    std::sort(entries.begin(), entries.end());
    for (const auto& entry : entries) {
      const std::string name = entry.path().filename().string();
      const std::string rel = f.rel + name;
      std::error_code st;
      // A dangling link would otherwise vanish silently from what the pods see.
      if (entry.is_symlink(st) && !fs::exists(entry.path(), st))
        throw CommandError("--scripts-dir " + dir + ": " + rel + " is a broken symbolic link; nothing was written");
      if (entry.is_directory(st)) {
        // A folder the layout reads itself is not left out.
        if (!scanned_paths.count(fs::weakly_canonical(entry.path(), st))) out.left_out.push_back(rel + "/");
        continue;
      }
      // The tool writes this key from env.json; a file of that name would be silently replaced.
      if (name == env_script::kEnvFunctionsKey)
        throw CommandError("--scripts-dir " + dir + ": " + rel + " is generated by kubectl-mindie from env.json (the "
                           "set_*_env functions); remove it from the folder; nothing was written");
      // deploy.py flattens the files of its three folders to their base names, wherever each one is.
      const auto* script = deployer_scripts::find(name);
      if (!script || !entry.is_regular_file(st)) {
        out.left_out.push_back(rel);
        continue;
      }
      if (const auto it = found_at.find(name); it != found_at.end())
        throw CommandError("--scripts-dir " + dir + ": " + it->second + " and " + rel + " would both be motor-config "
                           "key " + name + "; remove one; nothing was written");
      found_at[name] = rel;
      out.scripts[name] = read_file(entry.path().string());
    }
  }
  // The deployer folder's own top-level files (deploy.py, README.md, ...) are what it leaves out too.
  if (folders.front().rel == "startup/")
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name == "startup" || name == "probe") continue;
      std::error_code st;
      out.left_out.push_back(name + (entry.is_directory(st) ? "/" : ""));
    }
  std::sort(out.left_out.begin(), out.left_out.end());
  return out;
}

void check_needed_scripts(const ScriptsDir& given, const std::vector<std::string>& needed) {
  std::string missing;
  for (const auto& key : needed)
    if (!given.scripts.count(key)) missing += "\n  " + key + " (looked for " + given.expected_path(key) + ")";
  if (!missing.empty())
    throw CommandError("--scripts-dir " + given.dir + " (" + given.layout + ") lacks files this deployment's pods "
                       "run from motor-config:" + missing + "\npass PyMotor's deployer folder (examples/deployer), its "
                       "startup/ folder or a folder holding these files; nothing was written");
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
    throw UsageError("invalid namespace \"" + namespace_flag + "\": a namespace is a DNS-1123 label (lower-case "
                     "letters, digits and '-', at most 63 characters)");
}

kube::HttpResponse OfflineTransport::send(const kube::HttpRequest& req) {
  throw std::logic_error("--dry-run=client must not contact the server (attempted " + req.method + " " + req.path +
                         ")");
}

kube::HttpResponse OfflineTransport::stream(const kube::HttpRequest& req, const kube::StreamSink&,
                                            const kube::StreamHeadObserver&) {
  return send(req);  // throws the same logic_error
}

void check_config_input_flags(const std::string& filename, const std::string& env_file,
                              const std::string& config_dir) {
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
  ConfigInputs inputs{config::parse_user_config(read_file(config_path), config_path), std::nullopt};
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
