// exec credential plugins (client-go's plugin/pkg/client/auth/exec): run the user's command directly (no shell)
// with KUBERNETES_EXEC_INFO, read an ExecCredential from its stdout.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kube/rest_config.h"

namespace mindie::kube {

/// ExecCredential.status as the plugin returned it: a bearer token and/or a client certificate pair (PEM), and
/// when it expires (none = valid for the whole run, as client-go caches it).
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;
};

/// A plugin that could not be run or gave no usable credential. The message names the command (and its exit
/// code, signal, timeout or the missing field), never the plugin's output, which may hold secrets.
class ExecCredentialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where credentials for an exec user come from: ExecCredentialPlugin in the product, fakes in unit tests.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  /// A fresh credential (runs the plugin). Throws ExecCredentialError.
  virtual ExecCredential fetch() = 0;
};

/// Bounds on one plugin run. client-go sets none (plugin/pkg/client/auth/exec/exec.go runs it with cmd.Run() and
/// waits for it); a hung or runaway plugin must not hang or exhaust kubectl-mindie, nor outlast the namespace lock's
/// 30 s request bound while a change holds the lock. A plugin past its bound is killed (SIGKILL), a non-interactive
/// one with every process of its own process group (its children).
struct ExecLimits {
  /// A non-interactive run: the common plugins (gke-gcloud-auth-plugin, aws eks get-token, kubelogin with a cached
  /// token) answer in seconds.
  std::chrono::milliseconds timeout{20000};
  /// An interactive run: a person answers the plugin's prompt (a password, a device code) at the terminal.
  std::chrono::milliseconds interactive_timeout{120000};
  std::size_t max_output = 1 << 20;  ///< stdout beyond this kills the plugin: an error
  int stdin_fd = STDIN_FILENO;       ///< the terminal check and, when interactive, the plugin's stdin
};

/// Runs `config.exec` as client-go does: argv = command + args via posix_spawnp (a command without '/' is looked
/// up in PATH), environment = ours + exec.env (overriding) + KUBERNETES_EXEC_INFO; stderr passes through to ours;
/// stdin is /dev/null unless the run is interactive. Interactive: Never → no; IfAvailable → when stdin is a
/// terminal; Always → stdin must be a terminal, else an error before running. A non-interactive plugin runs in a
/// process group of its own (an interactive one stays in the terminal's foreground group, to read it).
class ExecCredentialPlugin : public CredentialSource {
 public:
  /// `config.exec` must be set; the cluster fields feed spec.cluster when provideClusterInfo is true.
  explicit ExecCredentialPlugin(const RestConfig& config, ExecLimits limits = {});
  ExecCredential fetch() override;

 private:
  RestConfig config_;
  ExecLimits limits_;
};

/// The KUBERNETES_EXEC_INFO value: {"apiVersion": exec.api_version, "kind": "ExecCredential", "spec":
/// {"interactive": ..., "cluster": {...}}}; "cluster" only with provideClusterInfo (server, tls-server-name,
/// insecure-skip-tls-verify, certificate-authority-data base64, proxy-url, config), as client-go sends it.
std::string exec_info_json(const RestConfig& config, bool interactive);

/// Parses a plugin's stdout: an ExecCredential of the configured apiVersion whose status has a token or both
/// clientCertificateData and clientKeyData; expirationTimestamp is RFC 3339. `command` names the plugin in
/// errors. Throws ExecCredentialError.
ExecCredential parse_exec_credential(std::string_view output, const std::string& api_version,
                                     const std::string& command);

}  // namespace mindie::kube
