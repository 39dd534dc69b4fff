#include "kube/auth.h"

#include <algorithm>
#include <boost/beast/core/detail/base64.hpp>
#include <fstream>
#include <sstream>
#include <system_error>

namespace mindie::kube {
namespace {

namespace fs = std::filesystem;

std::string base64(const std::string& in) {
  std::string out(boost::beast::detail::base64::encoded_size(in.size()), '\0');
  out.resize(boost::beast::detail::base64::encode(out.data(), in.data(), in.size()));
  return out;
}

// Token files are small; the same bound as kubeconfig loading keeps /dev/zero out.
constexpr std::uintmax_t kMaxTokenBytes = 16 * 1024 * 1024;

// The trimmed token in `path`, or nullopt when it cannot be read or is unusable as a header value.
std::optional<std::string> read_token(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > kMaxTokenBytes || ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  text = first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
  if (text.empty() || std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return std::nullopt;
  return text;
}

}  // namespace

ConfigAuthProvider::ConfigAuthProvider(const RestConfig& config, std::unique_ptr<CredentialSource> exec_source)
    : token_file_(config.token_file) {
  if (!config.token.empty()) static_.authorization = "Bearer " + config.token;
  if (!config.username.empty() || !config.password.empty())
    static_.authorization = "Basic " + base64(config.username + ":" + config.password);
  static_.client_cert_pem = config.client_cert_pem;
  static_.client_key_pem = config.client_key_pem;
  // exec.go: "If a bearer token is present in the request - avoid the GetCert callback ... The same can be said for
  // when the user specifies basic auth or cert auth."
  const bool other_auth = !config.token.empty() || !config.token_file.empty() || !config.username.empty() ||
                          !config.password.empty() || !config.client_cert_pem.empty();
  if (config.exec && !other_auth) {
    exec_ = exec_source ? std::move(exec_source) : std::make_unique<ExecCredentialPlugin>(config);
  }
  if (!token_file_.empty()) reload_token_file(true);
}

bool ConfigAuthProvider::reload_token_file(bool force) {
  std::error_code ec;
  const auto mtime = fs::last_write_time(token_file_, ec);
  const auto size = ec ? 0 : fs::file_size(token_file_, ec);
  if (ec) return false;  // unreadable now: keep the last good token, as client-go's cachingTokenSource does
  if (!force && mtime == token_mtime_ && size == token_size_) return false;
  const auto token = read_token(token_file_);
  if (!token) return false;
  token_mtime_ = mtime;
  token_size_ = size;
  const std::string header = "Bearer " + *token;
  const bool changed = header != static_.authorization;
  static_.authorization = header;
  return changed;
}

Credentials ConfigAuthProvider::credentials() {
  if (!token_file_.empty()) reload_token_file(false);
  if (!exec_) return static_;
  if (!cached_ || (cached_->expiry && std::chrono::system_clock::now() >= *cached_->expiry)) cached_ = exec_->fetch();
  Credentials c;
  if (!cached_->token.empty()) c.authorization = "Bearer " + cached_->token;
  c.client_cert_pem = cached_->client_cert_pem;
  c.client_key_pem = cached_->client_key_pem;
  return c;
}

bool ConfigAuthProvider::refresh() {
  if (exec_) {
    cached_ = exec_->fetch();
    return true;
  }
  if (!token_file_.empty()) return reload_token_file(true);
  return false;
}

}  // namespace mindie::kube
