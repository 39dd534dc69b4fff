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

/// Raised for a kubeconfig that cannot be used: missing file, invalid YAML, unknown context/cluster/user,
/// unreadable certificate file. The message names the file and the entry.
class KubeconfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Resolves flags + environment ($KUBECONFIG, $HOME) to a RestConfig. Reads only local files.
/// Throws KubeconfigError.
RestConfig load_rest_config(const KubeconfigFlags& flags);

/// Parses kubeconfig YAML text (`source` names it in errors; `base_dir` resolves relative paths) and resolves
/// the context `context` (empty = current-context). Throws KubeconfigError.
RestConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source, const std::string& base_dir,
                            const KubeconfigFlags& flags);

}  // namespace mindie::kube
