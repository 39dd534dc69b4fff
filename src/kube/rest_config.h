// Everything needed to reach and authenticate to one API server, resolved from a kubeconfig and flags.
#pragma once

#include <string>

namespace mindie::kube {

/// Connection settings after kubeconfig resolution (kubectl's "rest.Config"). PEM fields hold the PEM text
/// itself (files are read, *-data fields base64-decoded, during loading).
struct RestConfig {
  std::string server;              ///< "https://host:port", no trailing slash
  std::string ca_pem;              ///< certificate-authority(-data); empty = system trust store
  std::string client_cert_pem;     ///< client-certificate(-data)
  std::string client_key_pem;      ///< client-key(-data)
  std::string token;               ///< bearer token; never printed
  bool insecure_skip_tls_verify = false;
  std::string namespace_;          ///< namespace from -n, else the context's, else "default"
  bool namespace_from_flag = false;  ///< true when -n/--namespace was given explicitly
  std::string context;             ///< name of the context in use (for messages)
  long request_timeout_seconds = 0;  ///< 0 = no timeout
};

}  // namespace mindie::kube
