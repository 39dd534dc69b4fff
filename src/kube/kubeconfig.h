// kubeconfig loading, first cut of kubectl's rules: --kubeconfig, else $KUBECONFIG, else ~/.kube/config;
// --context; -n/--namespace.
#pragma once

#include <stdexcept>
#include <string>

#include "kube/rest_config.h"

namespace mindie::kube {

/// The connection-related global flags, as given (empty = not given).
struct KubeconfigFlags {
  std::string kubeconfig;   ///< --kubeconfig
  std::string context;      ///< --context
  std::string namespace_;   ///< -n/--namespace
  long request_timeout_seconds = 0;
};

/// Raised for a kubeconfig that cannot be used: missing file, invalid YAML or wrong shapes, unknown
/// context/cluster/user, unreadable certificate or token file (or one over 16 MiB, such as /dev/zero), invalid
/// base64, a client certificate without its key, a token with control characters (it becomes an HTTP header), or a
/// user that only has unsupported authentication (exec, auth-provider, username/password).
/// The message names the file and the entry.
class KubeconfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Resolves flags + environment to a RestConfig with kubectl's loading rules: --kubeconfig FILE (must exist), else
/// $KUBECONFIG (colon-separated; missing files skipped; the first file defining a cluster/context/user name wins;
/// the first non-empty current-context wins), else $HOME/.kube/config. Context: --context, else current-context.
/// Namespace: -n, else the context's, else "default". Relative file paths resolve against the directory of the
/// kubeconfig that names them; *-data fields override their file counterparts, token overrides tokenFile.
/// tls-server-name and proxy-url are not supported yet. Reads only local files. Throws KubeconfigError.
RestConfig load_rest_config(const KubeconfigFlags& flags);

/// Parses kubeconfig YAML text (`source` names it in errors; `base_dir` resolves relative paths, "" = the
/// working directory) and resolves flags.context (empty = current-context) and flags.namespace_ as
/// load_rest_config does; flags.kubeconfig is not read. Throws KubeconfigError.
RestConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source, const std::string& base_dir,
                            const KubeconfigFlags& flags);

}  // namespace mindie::kube
