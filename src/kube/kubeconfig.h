// kubeconfig loading with client-go's clientcmd rules (the ones kubectl uses): file precedence and merging,
// connection flags that override the file, in-cluster service-account configuration, namespace precedence.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "kube/rest_config.h"

namespace mindie::kube {

/// The connection-related global flags, as given (empty/false = not given), kubectl's names.
struct KubeconfigFlags {
  std::string kubeconfig;                 ///< --kubeconfig
  std::string context;                    ///< --context
  std::string cluster;                    ///< --cluster: the kubeconfig cluster to use instead of the context's
  std::string user;                       ///< --user: the kubeconfig user to use instead of the context's
  std::string namespace_;                 ///< -n/--namespace
  std::string server;                     ///< --server (-s in kubectl)
  std::string token;                      ///< --token
  std::string tls_server_name;            ///< --tls-server-name
  bool insecure_skip_tls_verify = false;  ///< --insecure-skip-tls-verify
  std::string request_timeout = "0";      ///< --request-timeout as typed ("0", "30", "30s", "1m30s", ...)
};

/// Where client-go's rest.InClusterConfig looks for the pod's service account.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Raised for a configuration that cannot be used: missing file, invalid YAML or wrong shapes, unknown
/// context/cluster/user, unreadable certificate or token file (or one over 16 MiB, such as /dev/zero), invalid
/// base64, a client certificate without its key, a token with control characters (it becomes an HTTP header),
/// basic auth together with a token, an invalid exec section, an unsupported auth-provider, a bad
/// --request-timeout. The message names the file and the entry, never a secret.
class KubeconfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// kubectl's --request-timeout (clientcmd.ParseTimeout): a non-negative integer is seconds, otherwise a Go
/// duration ("500ms", "30s", "1m30s", "1.5h"; units ns, us, µs, ms, s, m, h); "0" = no limit. Sub-millisecond
/// values round up to 1 ms. Throws KubeconfigError with kubectl's message.
std::chrono::milliseconds parse_request_timeout(const std::string& value);

/// Resolves flags + environment to a RestConfig with clientcmd's loading rules:
/// - files: --kubeconfig FILE (must exist, no merging), else $KUBECONFIG (colon-separated; missing files skipped;
///   the first file defining a cluster/context/user name wins; the first non-empty current-context wins), else
///   $HOME/.kube/config (may be absent). Relative paths (certificate-authority, client-certificate, client-key,
///   tokenFile, an exec command containing '/') resolve against the directory of the file that defined them.
/// - context: --context, else current-context; --cluster/--user replace the context's (and must exist).
///   --server, --token, --tls-server-name, --insecure-skip-tls-verify override the file's values
///   (--insecure-skip-tls-verify drops the CA; --server drops the file's tls-server-name; --token replaces
///   token and tokenFile). With --server no context is needed.
/// - in-cluster: when no kubeconfig gives anything (no file, or empty ones) and --server is not given, and
///   KUBERNETES_SERVICE_HOST/PORT are set and `service_account_dir`/token exists: server https://HOST:PORT,
///   tokenFile and ca.crt from that directory (rest.InClusterConfig).
/// - namespace: -n, else the context's, else (when in-cluster is possible) $POD_NAMESPACE or the service
///   account's namespace file, else "default".
/// Reads only local files. Throws KubeconfigError.
RestConfig load_rest_config(const KubeconfigFlags& flags, const std::string& service_account_dir = kServiceAccountDir);

/// Parses kubeconfig YAML text (`source` names it in errors; `base_dir` resolves relative paths, "" = the
/// working directory) and resolves the flags as load_rest_config does; flags.kubeconfig is not read and
/// in-cluster configuration is not considered. Throws KubeconfigError.
RestConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source, const std::string& base_dir,
                            const KubeconfigFlags& flags);

}  // namespace mindie::kube
