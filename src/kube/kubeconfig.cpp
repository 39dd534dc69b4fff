// kubeconfig loading: client-go's clientcmd loading rules (the ones kubectl uses).
#include "kube/kubeconfig.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

#include "util/yaml_json.h"

namespace mindie::kube {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& message) { throw KubeconfigError(message); }

// One named cluster, context or user with the file that defined it: kubectl resolves relative paths against the
// defining file's directory before merging, so each entry keeps its own base directory.
struct Entry {
  YAML::Node body;  // the "cluster:"/"context:"/"user:" mapping (an empty mapping when absent)
  std::string source;
  std::string base_dir;
};

// The merged view of one or more kubeconfig files: a name maps to its first definition.
struct Merged {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> contexts;
  std::map<std::string, Entry> users;
  std::string current_context;
};

// Kubeconfigs, certificates and token files are small; reading stops beyond this so that a path naming an endless
// device (/dev/zero) or a huge file fails instead of exhausting memory.
constexpr std::size_t kMaxFileBytes = 16 * 1024 * 1024;

// Reads a whole file of at most kMaxFileBytes. nullopt when it does not exist (callers decide whether that is an
// error); any other failure (a directory, no permission, too large) raises, naming `what`.
std::optional<std::string> read_file_if_exists(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return std::nullopt;
  if (ec) fail("cannot read " + what + " " + path + ": " + ec.message());
  if (fs::is_directory(st)) fail("cannot read " + what + " " + path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + what + " " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[64 * 1024];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      fail("cannot read " + what + " " + path + ": larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  }
  if (in.bad()) fail("cannot read " + what + " " + path + ": read error");
  return text;
}

std::string read_required_file(const std::string& path, const std::string& what) {
  auto text = read_file_if_exists(path, what);
  if (!text) fail("cannot read " + what + " " + path + ": no such file or directory");
  return *text;
}

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();  // filepath.Join cleans the result too
}

// Standard padded base64, as Go's encoding/base64 decodes the kubeconfig's []byte fields. Line breaks and spaces
// are ignored. Throws naming `what`.
std::string decode_base64(std::string_view encoded, const std::string& what) {
  std::string s;
  s.reserve(encoded.size());
  for (char c : encoded)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  const std::string bad = what + " is not valid base64";
  if (s.size() % 4 != 0) fail(bad);
  std::string out(boost::beast::detail::base64::decoded_size(s.size()), '\0');
  const auto [written, read] = boost::beast::detail::base64::decode(out.data(), s.data(), s.size());
  // Beast stops at the first '=' or foreign character; only padding (at most two '=') may follow.
  const std::string_view rest(s.data() + read, s.size() - read);
  if (rest.size() > 2 || rest.find_first_not_of('=') != std::string_view::npos) fail(bad);
  out.resize(written);
  return out;
}

// Scalar member `key` of mapping `map` as a string; "" when absent or null. `where` names the entry in errors.
std::string get_string(const YAML::Node& map, const char* key, const std::string& where) {
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return {};
  if (!v.IsScalar()) fail(where + ": \"" + key + "\" must be a string");
  return v.Scalar();
}

bool get_bool(const YAML::Node& map, const char* key, const std::string& where) {
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return false;
  bool result = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, result)) fail(where + ": \"" + key + "\" must be true or false");
  return result;
}

bool has_member(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v.IsDefined() && !v.IsNull();
}

// Adds the named entries of list `section` (e.g. "clusters", each item {name, cluster: {...}}) to `into`, keeping
// earlier definitions: the first file to define a name wins (kubectl's merge rule). A name repeated within one
// file is an error, as client-go's conversion reports it.
void merge_section(const YAML::Node& root, const char* section, const char* body_key, const std::string& source,
                   const std::string& base_dir, std::map<std::string, Entry>& into) {
  const YAML::Node list = root[section];
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) fail(source + ": \"" + section + "\" must be a list");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = source + ": " + section + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) fail(where + " must be a mapping with \"name\" and \"" + body_key + "\"");
    const std::string name = get_string(item, "name", where);
    if (name.empty()) fail(where + " has no name");
    if (!seen.insert(name).second) fail(source + ": duplicate name \"" + name + "\" in " + section);
    // A fresh node for an absent body: yaml-cpp's assignment writes through to the (here invalid) node it came from.
    const YAML::Node body = has_member(item, body_key) ? item[body_key] : YAML::Node(YAML::NodeType::Map);
    if (!body.IsMap()) fail(where + " (\"" + name + "\"): \"" + body_key + "\" must be a mapping");
    into.try_emplace(name, Entry{body, source, base_dir});
  }
}

// Parses one file's text into `merged`. yaml-cpp throws on malformed text; that becomes a KubeconfigError naming
// the file.
void merge_file(const std::string& text, const std::string& source, const std::string& base_dir, Merged& merged) {
  // Go's YAML decoder (kubectl's) reads UTF-8 or, after a byte-order mark, UTF-16; yaml-cpp would pass other bytes
  // through into names, paths and tokens.
  const bool utf16 = text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF");
  if (!utf16 && !util::is_valid_utf8(text)) fail(source + ": invalid YAML: the text is not valid UTF-8");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    fail(source + ": invalid YAML: nested too deeply (more than " + std::to_string(e.depth()) + " levels) at line " +
         std::to_string(e.mark.line + 1));
  } catch (const YAML::Exception& e) {
    fail(source + ": invalid YAML: " + e.what());
  }
  if (!root.IsDefined() || root.IsNull()) return;  // an empty file is an empty config, as for kubectl
  if (!root.IsMap()) fail(source + ": not a kubeconfig (the top level must be a mapping)");
  merge_section(root, "clusters", "cluster", source, base_dir, merged.clusters);
  merge_section(root, "contexts", "context", source, base_dir, merged.contexts);
  merge_section(root, "users", "user", source, base_dir, merged.users);
  if (merged.current_context.empty()) merged.current_context = get_string(root, "current-context", source);
}

// PEM text from a "<key>-data" (base64) or "<key>" (file) member; data overrides the file as in client-go.
std::string pem_from(const Entry& e, const std::string& key, const std::string& where) {
  const std::string data = get_string(e.body, (key + "-data").c_str(), where);
  if (!data.empty()) return decode_base64(data, where + ": " + key + "-data");
  const std::string file = get_string(e.body, key.c_str(), where);
  if (file.empty()) return {};
  return read_required_file(resolve_path(file, e.base_dir), key + " file (" + where + ")");
}

// client-go's default: a server without a scheme is https when any TLS setting is present, else http.
std::string normalise_server(std::string server, bool tls_configured) {
  if (server.find("://") == std::string::npos) server = (tls_configured ? "https://" : "http://") + server;
  while (!server.empty() && server.back() == '/') server.pop_back();
  return server;
}

std::string trim_space(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// A credential goes into an HTTP header verbatim: a line break would inject headers (Go's net/http refuses such
// values too). The message names `what`, never the value.
void check_header_safe(const std::string& value, const std::string& what) {
  if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    fail(what + " contains control characters");
}

// A list of strings (exec args); `where` names the entry.
std::vector<std::string> get_string_list(const YAML::Node& map, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return out;
  if (!v.IsSequence()) fail(where + ": \"" + key + "\" must be a list of strings");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].IsScalar()) fail(where + ": \"" + key + "\" must be a list of strings");
    out.push_back(v[i].Scalar());
  }
  return out;
}

// The cluster's extension named client.authentication.k8s.io/exec as JSON, for spec.cluster.config.
std::string exec_extension_json(const Entry& cluster, const std::string& where) {
  const YAML::Node list = cluster.body["extensions"];
  if (!list.IsDefined() || !list.IsSequence()) return {};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    if (!item.IsMap() || get_string(item, "name", where) != "client.authentication.k8s.io/exec") continue;
    if (!has_member(item, "extension")) return {};
    try {
      return boost::json::serialize(util::yaml_to_json(YAML::Dump(item["extension"]), where + " extension"));
    } catch (const std::exception& e) {
      fail(where + ": extension client.authentication.k8s.io/exec: " + e.what());
    }
  }
  return {};
}

// The user's exec section, validated as client-go's validateAuthInfo does.
ExecConfig parse_exec(const Entry& user, const std::string& where) {
  const YAML::Node e = user.body["exec"];
  const std::string w = where + ": exec";
  if (!e.IsMap()) fail(w + " must be a mapping");
  ExecConfig x;
  x.command = get_string(e, "command", w);
  if (x.command.empty()) fail(w + ": command must be specified to use exec authentication");
  // A bare name is looked up in PATH; a path containing '/' is relative to the kubeconfig (client-go's
  // ResolveLocalPaths).
  if (x.command.find('/') != std::string::npos) x.command = resolve_path(x.command, user.base_dir);
  x.args = get_string_list(e, "args", w);
  const YAML::Node env = e["env"];
  if (env.IsDefined() && !env.IsNull()) {
    if (!env.IsSequence()) fail(w + ": env must be a list of {name, value}");
    for (std::size_t i = 0; i < env.size(); ++i) {
      if (!env[i].IsMap()) fail(w + ": env must be a list of {name, value}");
      const std::string name = get_string(env[i], "name", w);
      if (name.empty()) fail(w + ": env[" + std::to_string(i) + "] has no name");
      x.env.emplace_back(name, get_string(env[i], "value", w));
    }
  }
  x.api_version = get_string(e, "apiVersion", w);
  if (x.api_version != "client.authentication.k8s.io/v1" && x.api_version != "client.authentication.k8s.io/v1beta1") {
    fail(w + ": apiVersion must be client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1" +
         (x.api_version.empty() ? std::string(" (it is missing)") : " (not \"" + x.api_version + "\")"));
  }
  x.install_hint = get_string(e, "installHint", w);
  x.provide_cluster_info = get_bool(e, "provideClusterInfo", w);
  x.interactive_mode = get_string(e, "interactiveMode", w);
  if (x.interactive_mode.empty()) {
    if (x.api_version.ends_with("/v1")) fail(w + ": interactiveMode must be specified for apiVersion " + x.api_version);
    x.interactive_mode = "IfAvailable";  // v1beta1's default
  }
  if (x.interactive_mode != "Never" && x.interactive_mode != "IfAvailable" && x.interactive_mode != "Always")
    fail(w + ": invalid interactiveMode \"" + x.interactive_mode + "\" (Never, IfAvailable or Always)");
  return x;
}

// Everything about the user: certificates, token/tokenFile, basic auth, exec; then the flag overrides.
void resolve_user(const Entry* user, const std::string& u_where, const KubeconfigFlags& flags, RestConfig& cfg) {
  if (user != nullptr) {
    const Entry& u = *user;
    cfg.client_cert_pem = pem_from(u, "client-certificate", u_where);
    cfg.client_key_pem = pem_from(u, "client-key", u_where);
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty())
      fail(u_where + ": client-certificate and client-key must be given together");
    cfg.token = get_string(u.body, "token", u_where);
    check_header_safe(cfg.token, u_where + ": token");
    const std::string token_file = get_string(u.body, "tokenFile", u_where);
    if (!token_file.empty()) {
      cfg.token_file = resolve_path(token_file, u.base_dir);
      // client-go reads the file up front only when no token is given (--token replaces both); afterwards the
      // file, re-read, wins.
      if (cfg.token.empty() && flags.token.empty()) {
        cfg.token = trim_space(read_required_file(cfg.token_file, "tokenFile (" + u_where + ")"));
        check_header_safe(cfg.token, u_where + ": tokenFile");
      }
    }
    cfg.username = get_string(u.body, "username", u_where);
    cfg.password = get_string(u.body, "password", u_where);
    if (has_member(u.body, "exec")) {
      if (has_member(u.body, "auth-provider"))
        fail(u_where + ": auth-provider cannot be provided in combination with an exec plugin");
      cfg.exec = parse_exec(u, u_where);
    } else if (has_member(u.body, "auth-provider") && cfg.token.empty() && cfg.token_file.empty() &&
               cfg.client_cert_pem.empty() && cfg.username.empty()) {
      // Without this, the user would silently send anonymous requests and get 401s.
      fail(u_where +
           ": \"auth-provider\" authentication is not supported by kubectl-mindie; use an exec plugin, "
           "a token or a client certificate");
    }
  }
  if (!flags.token.empty()) {
    check_header_safe(flags.token, "--token");
    cfg.token = flags.token;
    cfg.token_file.clear();
  }
  // rest.Config's rule: "username/password or bearer token may be set, but not both".
  if ((!cfg.username.empty() || !cfg.password.empty()) && (!cfg.token.empty() || !cfg.token_file.empty()))
    fail(u_where + ": username/password or bearer token may be set, but not both");
}

// A named entry of the merged kubeconfig and how errors name it; `entry` is null when none is named.
struct Chosen {
  const Entry* entry = nullptr;
  std::string where;
};

// The context (--context, else current-context; none when --server or --cluster stand without one) and the
// names it gives, which --cluster, --user and --namespace override.
struct ContextChoice {
  std::string name;
  Chosen chosen{nullptr, "flags"};
  std::string cluster_name, user_name;
};

ContextChoice choose_context(const Merged& m, const KubeconfigFlags& flags, const std::string& origin) {
  ContextChoice c;
  c.name = flags.context.empty() ? m.current_context : flags.context;
  if (!c.name.empty()) {
    const auto it = m.contexts.find(c.name);
    if (it == m.contexts.end()) {
      fail(std::string(flags.context.empty() ? "current-context" : "context") + " \"" + c.name + "\" not found in " +
           origin);
    }
    c.chosen = {&it->second, it->second.source + ": context \"" + c.name + "\""};
  } else if (flags.server.empty() && flags.cluster.empty()) {
    fail(origin + ": no current-context is set; pass --context");
  }
  const Entry* ctx = c.chosen.entry;
  c.cluster_name = !flags.cluster.empty() ? flags.cluster
                   : ctx != nullptr       ? get_string(ctx->body, "cluster", c.chosen.where)
                                          : std::string();
  c.user_name = !flags.user.empty() ? flags.user
                : ctx != nullptr    ? get_string(ctx->body, "user", c.chosen.where)
                                    : std::string();
  return c;
}

// The cluster (--cluster or the context's; --server alone needs none), its TLS and proxy settings into `cfg` with
// the flags over them; `server` gets the server URL as given.
Chosen resolve_cluster(const Merged& m, const KubeconfigFlags& flags, const ContextChoice& context,
                       const std::string& origin, RestConfig& cfg, std::string& server) {
  Chosen cluster{nullptr, "--server " + flags.server};
  if (!context.cluster_name.empty()) {
    const auto it = m.clusters.find(context.cluster_name);
    if (it == m.clusters.end()) {
      fail("cluster \"" + context.cluster_name + "\" (" +
           (!flags.cluster.empty() ? std::string("given by --cluster") : "used by context \"" + context.name + "\"") +
           ") not found in " + origin);
    }
    cluster = {&it->second, it->second.source + ": cluster \"" + context.cluster_name + "\""};
  } else if (flags.server.empty()) {
    fail(context.chosen.where + " names no cluster");
  }
  const std::string& cl_where = cluster.where;
  server = flags.server;
  if (cluster.entry != nullptr) {
    const YAML::Node& body = cluster.entry->body;
    if (server.empty()) {
      server = get_string(body, "server", cl_where);
      if (server.empty()) fail(cl_where + " has no server");
      cfg.tls_server_name = get_string(body, "tls-server-name", cl_where);
    }
    cfg.insecure_skip_tls_verify = get_bool(body, "insecure-skip-tls-verify", cl_where);
    cfg.proxy_url = get_string(body, "proxy-url", cl_where);
    // --insecure-skip-tls-verify drops the file's CA (client-go's getCluster), so it is not even read.
    if (!flags.insecure_skip_tls_verify) {
      cfg.ca_pem = pem_from(*cluster.entry, "certificate-authority", cl_where);
      if (cfg.insecure_skip_tls_verify && !cfg.ca_pem.empty())
        fail(cl_where + ": specifying a root certificates file with the insecure flag is not allowed");
    }
  }
  if (flags.insecure_skip_tls_verify) cfg.insecure_skip_tls_verify = true;
  if (!flags.tls_server_name.empty()) cfg.tls_server_name = flags.tls_server_name;
  if (!cfg.proxy_url.empty()) {
    const auto scheme = cfg.proxy_url.substr(0, cfg.proxy_url.find("://"));
    if (scheme != "http" && scheme != "https" && scheme != "socks5")
      fail(cl_where + ": proxy-url must start with http://, https:// or socks5://");
  }
  return cluster;
}

// The user the context or --user names; an empty user name is an anonymous context, a named user that is absent
// is an error, as in client-go.
Chosen find_user(const Merged& m, const KubeconfigFlags& flags, const ContextChoice& context,
                 const std::string& origin) {
  if (context.user_name.empty()) return {nullptr, context.chosen.where};
  const auto it = m.users.find(context.user_name);
  if (it == m.users.end()) {
    fail("user \"" + context.user_name + "\" (" +
         (!flags.user.empty() ? std::string("given by --user") : "used by context \"" + context.name + "\"") +
         ") not found in " + origin);
  }
  return {&it->second, it->second.source + ": user \"" + context.user_name + "\""};
}

RestConfig resolve(const Merged& m, const KubeconfigFlags& flags, const std::string& origin) {
  RestConfig cfg;
  cfg.request_timeout = parse_request_timeout(flags.request_timeout);
  const ContextChoice context = choose_context(m, flags, origin);
  cfg.context = context.name;
  const Entry* ctx = context.chosen.entry;
  const std::string ctx_namespace = ctx != nullptr ? get_string(ctx->body, "namespace", context.chosen.where) : "";
  if (!flags.namespace_.empty()) {
    cfg.namespace_ = flags.namespace_;
    cfg.namespace_from_flag = true;
  } else {
    cfg.namespace_ = ctx_namespace;  // "" here: load_rest_config continues with in-cluster, then "default"
  }
  std::string server;
  const Chosen cluster = resolve_cluster(m, flags, context, origin, cfg, server);
  const Chosen user = find_user(m, flags, context, origin);
  resolve_user(user.entry, user.where, flags, cfg);
  if (cfg.exec && cluster.entry != nullptr)
    cfg.exec->cluster_config_json = exec_extension_json(*cluster.entry, cluster.where);

  cfg.server = normalise_server(server,
                                !cfg.ca_pem.empty() || !cfg.client_cert_pem.empty() || cfg.insecure_skip_tls_verify);
  return cfg;
}

std::string parent_dir(const std::string& file) { return fs::path(file).parent_path().string(); }

bool is_empty(const Merged& m) {
  return m.clusters.empty() && m.contexts.empty() && m.users.empty() && m.current_context.empty();
}

std::string non_empty_env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// clientcmd's inClusterClientConfig.Possible: both service variables set and a token file that is not a folder.
bool in_cluster_possible(const std::string& sa_dir) {
  std::error_code ec;
  const auto st = fs::status(fs::path(sa_dir) / "token", ec);
  return !non_empty_env("KUBERNETES_SERVICE_HOST").empty() && !non_empty_env("KUBERNETES_SERVICE_PORT").empty() &&
         !ec && fs::exists(st) && !fs::is_directory(st);
}

// rest.InClusterConfig plus the overrides inClusterClientConfig honours (--server, --token).
RestConfig in_cluster_config(const KubeconfigFlags& flags, const std::string& sa_dir) {
  RestConfig cfg;
  cfg.request_timeout = parse_request_timeout(flags.request_timeout);
  const std::string host = non_empty_env("KUBERNETES_SERVICE_HOST");
  const std::string port = non_empty_env("KUBERNETES_SERVICE_PORT");
  // net.JoinHostPort: an IPv6 address goes in brackets.
  cfg.server = "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  if (!flags.server.empty()) cfg.server = normalise_server(flags.server, true);
  const std::string where = "in-cluster configuration (" + sa_dir + ")";
  if (!flags.token.empty()) {
    check_header_safe(flags.token, "--token");
    cfg.token = flags.token;
  } else {
    cfg.token_file = (fs::path(sa_dir) / "token").string();
    cfg.token = trim_space(read_required_file(cfg.token_file, "service account token"));
    check_header_safe(cfg.token, where + ": token");
  }
  // client-go goes on without the CA when ca.crt is unusable; a missing file is the same here.
  if (auto ca = read_file_if_exists((fs::path(sa_dir) / "ca.crt").string(), "service account CA")) cfg.ca_pem = *ca;
  return cfg;
}

// clientcmd's inClusterClientConfig.Namespace: $POD_NAMESPACE, else the service account's namespace file.
std::string in_cluster_namespace(const std::string& sa_dir) {
  if (std::string ns = non_empty_env("POD_NAMESPACE"); !ns.empty()) return ns;
  if (auto text = read_file_if_exists((fs::path(sa_dir) / "namespace").string(), "service account namespace"))
    return trim_space(*text);
  return {};
}

}  // namespace

std::chrono::milliseconds parse_request_timeout(const std::string& value) {
  const auto invalid = [&value]() -> KubeconfigError {
    return KubeconfigError("invalid --request-timeout \"" + value +
                           "\": Timeout must be a single integer in seconds, or an integer followed by a "
                           "corresponding time unit (e.g. 1s | 2m | 3h)");
  };
  if (value.empty()) throw invalid();
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (value.size() > 12) throw invalid();
    return std::chrono::seconds(std::stoll(value));
  }
  // Go's time.ParseDuration: a sequence of decimal numbers, each with an optional fraction and a unit.
  static const std::pair<std::string_view, double> kUnits[] = {{"ns", 1e-6},        {"us", 1e-3}, {"\xC2\xB5s", 1e-3},
                                                               {"\xCE\xBCs", 1e-3}, {"ms", 1},    {"s", 1e3},
                                                               {"m", 6e4},          {"h", 3.6e6}};
  std::string_view rest(value);
  if (rest.starts_with('+')) rest.remove_prefix(1);
  double total_ms = 0;
  while (!rest.empty()) {
    std::size_t n = 0;
    while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.')) ++n;
    const std::string number(rest.substr(0, n));
    if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) throw invalid();
    rest.remove_prefix(n);
    const auto* unit = std::find_if(std::begin(kUnits), std::end(kUnits), [&rest](const auto& u) {
      // "ms" before "m", "ns"/"us" before "s": the table lists the longer units first where prefixes clash.
      return rest.starts_with(u.first) && !(u.first == "m" && rest.starts_with("ms"));
    });
    if (unit == std::end(kUnits)) throw invalid();
    rest.remove_prefix(unit->first.size());
    total_ms += std::stod(number) * unit->second;
    if (total_ms > 1e15) throw invalid();
  }
  if (total_ms > 0 && total_ms < 1) total_ms = 1;
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(total_ms)));
}

RestConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source, const std::string& base_dir,
                            const KubeconfigFlags& flags) {
  Merged merged;
  merge_file(yaml_text, source, base_dir, merged);
  RestConfig cfg = resolve(merged, flags, source);
  if (cfg.namespace_.empty()) cfg.namespace_ = "default";
  return cfg;
}

RestConfig load_rest_config(const KubeconfigFlags& flags, const std::string& service_account_dir) {
  Merged merged;
  std::string origin;
  if (!flags.kubeconfig.empty()) {
    const std::string text = read_required_file(flags.kubeconfig, "kubeconfig");
    merge_file(text, flags.kubeconfig, parent_dir(flags.kubeconfig), merged);
    origin = flags.kubeconfig;
  } else if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    // kubectl's precedence list: missing files are skipped, repeated entries read once.
    std::vector<std::string> files;
    std::string_view rest(env);
    while (true) {
      const auto colon = rest.find(':');
      const std::string item(rest.substr(0, colon));
      if (!item.empty() && std::find(files.begin(), files.end(), item) == files.end()) files.push_back(item);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    for (const auto& file : files) {
      const auto text = read_file_if_exists(file, "kubeconfig");
      if (text) merge_file(*text, file, parent_dir(file), merged);
    }
    origin = "$KUBECONFIG (" + std::string(env) + ")";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    origin = (fs::path(home) / ".kube" / "config").string();
    if (const auto text = read_file_if_exists(origin, "kubeconfig"))
      merge_file(*text, origin, parent_dir(origin), merged);
  } else {
    origin = "~/.kube/config ($HOME is not set)";
  }

  const bool in_cluster = in_cluster_possible(service_account_dir);
  // DeferredLoadingClientConfig: an empty kubeconfig without --server falls back to the in-cluster config.
  const bool selects_nothing = flags.context.empty() && merged.current_context.empty() && flags.cluster.empty();
  if (flags.server.empty() && selects_nothing && in_cluster) {
    RestConfig cfg = in_cluster_config(flags, service_account_dir);
    cfg.namespace_from_flag = !flags.namespace_.empty();
    cfg.namespace_ = !flags.namespace_.empty() ? flags.namespace_ : in_cluster_namespace(service_account_dir);
    if (cfg.namespace_.empty()) cfg.namespace_ = "default";
    return cfg;
  }
  if (is_empty(merged) && flags.server.empty()) {
    fail("no configuration has been provided: " + origin +
         " gives no cluster; pass --kubeconfig or --server, set KUBECONFIG, or run in a pod with a service account");
  }
  RestConfig cfg = resolve(merged, flags, origin);
  if (cfg.namespace_.empty() && in_cluster) cfg.namespace_ = in_cluster_namespace(service_account_dir);
  if (cfg.namespace_.empty()) cfg.namespace_ = "default";
  return cfg;
}

}  // namespace mindie::kube
