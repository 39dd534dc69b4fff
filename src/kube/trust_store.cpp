#include "kube/trust_store.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "kube/transport.h"

namespace mindie::kube {
namespace {

constexpr std::string_view kCertificate = "-----BEGIN CERTIFICATE-----";

// The file's text when it is a readable regular file holding a PEM certificate, else "".
std::string pem_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string pem = std::move(text).str();
  return pem.find(kCertificate) == std::string::npos ? std::string() : pem;
}

std::vector<std::string> split_colons(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t colon; (colon = s.find(':', from)) != std::string::npos; from = colon + 1)
    parts.push_back(s.substr(from, colon - from));
  parts.push_back(s.substr(from));
  return parts;
}

}  // namespace

TrustStorePaths system_trust_store_paths() {
  TrustStorePaths paths;
  if (const char* file = std::getenv("SSL_CERT_FILE"); file != nullptr && *file != '\0') {
    paths.files = {file};
  } else {
    paths.files = {"/etc/ssl/certs/ca-certificates.crt",
                   "/etc/pki/tls/certs/ca-bundle.crt",
                   "/etc/ssl/ca-bundle.pem",
                   "/etc/pki/tls/cacert.pem",
                   "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                   "/etc/ssl/cert.pem"};
  }
  if (const char* dirs = std::getenv("SSL_CERT_DIR"); dirs != nullptr && *dirs != '\0') {
    paths.dirs = split_colons(dirs);
  } else {
    paths.dirs = {"/etc/ssl/certs", "/etc/pki/tls/certs"};
  }
  return paths;
}

std::string load_trust_store(const TrustStorePaths& paths, const std::string& server) {
  for (const auto& file : paths.files)
    if (std::string pem = pem_file(file); !pem.empty()) return pem;
  // Go reads the folders as well as the bundle; where both exist the folder holds the bundle's certificates (and
  // the bundle itself), so they are read only when no bundle was found.
  std::string pems;
  for (const auto& dir : paths.dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::string pem = pem_file(entry.path());
      if (pem.empty()) continue;
      if (pem.back() != '\n') pem += '\n';
      pems += pem;
    }
  }
  if (!pems.empty()) return pems;
  std::string tried;
  for (const auto* list : {&paths.files, &paths.dirs})
    for (const auto& p : *list) tried += (tried.empty() ? "" : ", ") + p;
  throw TransportError("Unable to connect to the server " + server +
                           ": no certificate-authority in the kubeconfig and no CA certificates on this host (tried " +
                           tried + "; set SSL_CERT_FILE or SSL_CERT_DIR)",
                       false);
}

}  // namespace mindie::kube
