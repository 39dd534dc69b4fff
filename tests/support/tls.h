// An in-memory certificate authority and server certificate for the HTTPS servers of the connection tests
// (OpenSSL libcrypto).
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace mindie::test {

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PKeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PKeyPtr = std::unique_ptr<EVP_PKEY, PKeyDeleter>;

/// A fresh CA (self-signed, P-256) and a server certificate it signed for IP:127.0.0.1, IP:::1 and DNS:localhost, valid
/// for a day. Nothing touches the disk.
struct TlsMaterial {
  PKeyPtr ca_key;
  X509Ptr ca_cert;
  PKeyPtr server_key;
  X509Ptr server_cert;

  /// The CA certificate as PEM (for certificate-authority-data).
  std::string ca_pem() const;
};

/// Generates the material. Throws std::runtime_error naming the failing OpenSSL step.
TlsMaterial generate_tls();

}  // namespace mindie::test
