// Authentication at the transport level: the transport asks an AuthProvider for the credentials of each request
// and tells it about a 401, as client-go's round-trippers (bearer token with refresh, basic auth, exec plugin) do.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "kube/exec_credential.h"
#include "kube/rest_config.h"

namespace mindie::kube {

/// What to present on one request. Never logged or put into an error message.
struct Credentials {
  std::string authorization;    ///< the Authorization header value ("Bearer ...", "Basic ..."); "" = none
  std::string client_cert_pem;  ///< TLS client certificate and key (PEM); "" = none
  std::string client_key_pem;
};

/// Supplies credentials to a transport. Implementations: ConfigAuthProvider (product), fakes in unit tests.
class AuthProvider {
 public:
  virtual ~AuthProvider() = default;
  /// Credentials for the next request (may run an exec plugin or re-read a token file). Throws
  /// ExecCredentialError when an exec plugin fails.
  virtual Credentials credentials() = 0;
  /// Called once after a 401 answer: renews what can be renewed (re-runs the exec plugin, re-reads the token
  /// file). True when the credentials changed, so the request is worth sending once more.
  virtual bool refresh() = 0;
};

/// The credentials a RestConfig describes, with client-go's rules:
/// - bearer token: `token`, or the content of `token_file` (whitespace-trimmed), re-read whenever its
///   modification time or size changes; while the file is unreadable the last good token (or `token`) is used;
/// - basic auth: "Basic base64(username:password)";
/// - client certificate: client_cert_pem/client_key_pem;
/// - exec plugin: only when none of the above is configured (client-go skips the plugin then); its credential
///   is cached until status.expirationTimestamp (for the whole run without one) and fetched anew on a 401.
class ConfigAuthProvider : public AuthProvider {
 public:
  /// `exec_source` replaces the ExecCredentialPlugin that config.exec would otherwise run (tests fake it).
  explicit ConfigAuthProvider(const RestConfig& config, std::unique_ptr<CredentialSource> exec_source = nullptr);
  Credentials credentials() override;
  bool refresh() override;

 private:
  // Re-reads token_file_ when `force` or when its mtime/size changed; true when the token changed.
  bool reload_token_file(bool force);

  Credentials static_;
  std::string token_file_;
  std::filesystem::file_time_type token_mtime_{};
  std::uintmax_t token_size_ = 0;
  std::unique_ptr<CredentialSource> exec_;
  std::optional<ExecCredential> cached_;
};

}  // namespace mindie::kube
