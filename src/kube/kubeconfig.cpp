// kubeconfig loading: a first cut of client-go's clientcmd loading rules (the ones kubectl uses).
#include "kube/kubeconfig.h"

#include "util/yaml_json.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/beast/core/detail/base64.hpp>
#include <cctype>
#include <cerrno>
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
  return (fs::path(base_dir) / path).string();
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

RestConfig resolve(const Merged& m, const KubeconfigFlags& flags, const std::string& origin) {
  RestConfig cfg;
  cfg.request_timeout_seconds = flags.request_timeout_seconds;

  const std::string context_name = flags.context.empty() ? m.current_context : flags.context;
  if (context_name.empty()) fail(origin + ": no current-context is set; pass --context");
  const auto ctx = m.contexts.find(context_name);
  if (ctx == m.contexts.end()) {
    fail(std::string(flags.context.empty() ? "current-context" : "context") + " \"" + context_name +
         "\" not found in " + origin);
  }
  cfg.context = context_name;
  const std::string ctx_where = ctx->second.source + ": context \"" + context_name + "\"";
  const std::string cluster_name = get_string(ctx->second.body, "cluster", ctx_where);
  const std::string user_name = get_string(ctx->second.body, "user", ctx_where);
  const std::string ctx_namespace = get_string(ctx->second.body, "namespace", ctx_where);

  if (!flags.namespace_.empty()) {
    cfg.namespace_ = flags.namespace_;
    cfg.namespace_from_flag = true;
  } else {
    cfg.namespace_ = ctx_namespace.empty() ? "default" : ctx_namespace;
  }

  if (cluster_name.empty()) fail(ctx_where + " names no cluster");
  const auto cluster = m.clusters.find(cluster_name);
  if (cluster == m.clusters.end()) {
    fail("cluster \"" + cluster_name + "\" (used by context \"" + context_name + "\") not found in " + origin);
  }
  const std::string cl_where = cluster->second.source + ": cluster \"" + cluster_name + "\"";
  const std::string server = get_string(cluster->second.body, "server", cl_where);
  if (server.empty()) fail(cl_where + " has no server");
  cfg.insecure_skip_tls_verify = get_bool(cluster->second.body, "insecure-skip-tls-verify", cl_where);
  cfg.ca_pem = pem_from(cluster->second, "certificate-authority", cl_where);

  // An empty user name is an anonymous context; a named user that is absent is an error, as in client-go.
  if (!user_name.empty()) {
    const auto user = m.users.find(user_name);
    if (user == m.users.end()) {
      fail("user \"" + user_name + "\" (used by context \"" + context_name + "\") not found in " + origin);
    }
    const Entry& u = user->second;
    const std::string u_where = u.source + ": user \"" + user_name + "\"";
    cfg.client_cert_pem = pem_from(u, "client-certificate", u_where);
    cfg.client_key_pem = pem_from(u, "client-key", u_where);
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
      fail(u_where + ": client-certificate and client-key must be given together");
    }
    cfg.token = get_string(u.body, "token", u_where);
    const bool token_inline = !cfg.token.empty();
    if (cfg.token.empty()) {
      const std::string token_file = get_string(u.body, "tokenFile", u_where);
      if (!token_file.empty()) {
        std::string token = read_required_file(resolve_path(token_file, u.base_dir), "tokenFile (" + u_where + ")");
        // client-go trims the file's surrounding whitespace (a trailing newline is the norm).
        const auto first = token.find_first_not_of(" \t\r\n");
        const auto last = token.find_last_not_of(" \t\r\n");
        cfg.token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
      }
    }
    // The token goes into an HTTP header verbatim: a line break would inject headers (Go's net/http refuses such
    // values too).
    if (std::any_of(cfg.token.begin(), cfg.token.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      fail(u_where + ": " + (token_inline ? "token" : "tokenFile") + " contains control characters");
    // Without this, a user relying on a credential plugin would silently send anonymous requests and get 401s.
    if (cfg.token.empty() && cfg.client_cert_pem.empty()) {
      for (const char* unsupported : {"exec", "auth-provider", "username"}) {
        if (has_member(u.body, unsupported)) {
          fail(u_where + ": \"" + unsupported +
               "\" authentication is not supported by kubectl-mindie; use a token or a client certificate");
        }
      }
    }
  }

  cfg.server = normalise_server(server, !cfg.ca_pem.empty() || !cfg.client_cert_pem.empty() ||
                                            cfg.insecure_skip_tls_verify);
  return cfg;
}

std::string parent_dir(const std::string& file) { return fs::path(file).parent_path().string(); }

}  // namespace

RestConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source, const std::string& base_dir,
                            const KubeconfigFlags& flags) {
  Merged merged;
  merge_file(yaml_text, source, base_dir, merged);
  return resolve(merged, flags, source);
}

RestConfig load_rest_config(const KubeconfigFlags& flags) {
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
    bool any = false;
    for (const auto& file : files) {
      const auto text = read_file_if_exists(file, "kubeconfig");
      if (!text) continue;
      any = true;
      merge_file(*text, file, parent_dir(file), merged);
    }
    origin = "$KUBECONFIG (" + std::string(env) + ")";
    if (!any) fail("no kubeconfig found: none of the files in " + origin + " exists");
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') fail("no kubeconfig found: pass --kubeconfig or set KUBECONFIG ($HOME is not set)");
    const std::string file = (fs::path(home) / ".kube" / "config").string();
    const auto text = read_file_if_exists(file, "kubeconfig");
    if (!text) fail("no kubeconfig found: " + file + " does not exist; pass --kubeconfig or set KUBECONFIG");
    merge_file(*text, file, parent_dir(file), merged);
    origin = file;
  }
  return resolve(merged, flags, origin);
}

}  // namespace mindie::kube
