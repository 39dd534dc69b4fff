// The host's CA certificates, for servers whose kubeconfig names no certificate-authority: looked up where Linux
// distributions keep them, as Go's crypto/x509 does (root_linux.go, root_unix.go), since a release binary carries
// no CA file of its own and its libcurl has none compiled in.
#pragma once

#include <string>
#include <vector>

namespace mindie::kube {

/// Where to look: bundle files first, then folders of certificate files.
struct TrustStorePaths {
  std::vector<std::string> files;
  std::vector<std::string> dirs;
};

/// Go's lists: SSL_CERT_FILE alone when set, else the distributions' bundle files (Debian/Ubuntu/Kylin,
/// Fedora/RHEL/openEuler, openSUSE, OpenELEC, CentOS/RHEL 7, Alpine); SSL_CERT_DIR (colon-separated) when set,
/// else /etc/ssl/certs and /etc/pki/tls/certs.
TrustStorePaths system_trust_store_paths();

/// The PEM certificates of the first bundle file that holds any; without one, those of every file in the folders.
/// Throws TransportError (not retryable) naming `server` and every path tried when none holds a certificate.
std::string load_trust_store(const TrustStorePaths& paths, const std::string& server);

}  // namespace mindie::kube
