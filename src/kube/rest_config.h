// Everything needed to reach and authenticate to one API server, resolved from a kubeconfig (or the in-cluster
// service account) and flags.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mindie::kube {

/// A user's `exec` credential plugin (client-go's api.ExecConfig), paths already resolved.
struct ExecConfig {
  std::string command;  ///< resolved against the kubeconfig's directory when it contains a '/', else looked up in PATH
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  ///< added to (and overriding) the inherited environment
  std::string api_version;                               ///< client.authentication.k8s.io/v1 or /v1beta1
  std::string install_hint;                              ///< shown when the command cannot be found
  bool provide_cluster_info = false;                     ///< pass spec.cluster in KUBERNETES_EXEC_INFO
  /// Never | IfAvailable | Always (v1 requires it; v1beta1 defaults to IfAvailable, as in client-go).
  std::string interactive_mode;
  /// The cluster's `client.authentication.k8s.io/exec` extension as JSON ("" = none): spec.cluster.config.
  std::string cluster_config_json;
};

/// Connection settings after kubeconfig resolution (kubectl's "rest.Config"). PEM fields hold the PEM text
/// itself (files are read, *-data fields base64-decoded, during loading).
struct RestConfig {
  std::string server;           ///< "https://host:port[/prefix]", no trailing slash; IPv6 hosts in brackets
  std::string ca_pem;           ///< certificate-authority(-data), may hold several certificates; empty = system store
  std::string client_cert_pem;  ///< client-certificate(-data)
  std::string client_key_pem;   ///< client-key(-data)
  std::string token;            ///< bearer token (initial value when token_file is set); never printed
  std::string token_file;       ///< tokenFile: re-read when it changes, wins over `token` while readable (client-go)
  std::string username;         ///< basic auth; never printed with the password
  std::string password;
  std::optional<ExecConfig> exec;  ///< exec credential plugin; used only without token, basic or client-cert auth
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;       ///< name for SNI and certificate verification instead of the server's host
  std::string proxy_url;             ///< http(s):// or socks5:// proxy; overrides HTTPS_PROXY/NO_PROXY (client-go)
  std::string namespace_;            ///< -n, else the context's, else the in-cluster namespace, else "default"
  bool namespace_from_flag = false;  ///< true when -n/--namespace was given explicitly
  std::string context;               ///< name of the context in use ("" for in-cluster or flags-only configs)
  std::chrono::milliseconds request_timeout{0};            ///< whole-request limit from --request-timeout; 0 = none
  std::string request_timeout_name = "--request-timeout";  ///< what set request_timeout, as messages name it
};

}  // namespace mindie::kube
