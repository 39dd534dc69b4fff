#include "tls.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace mindie::test {

namespace {

[[noreturn]] void fail(const std::string& step) {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  throw std::runtime_error("TLS setup failed at " + step + ": " + buf);
}

PKeyPtr new_key() {
  PKeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("EVP_EC_gen");
  return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) fail("X509V3_EXT_conf_nid");
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (!ok) fail("X509_add_ext");
}

X509Ptr new_cert(EVP_PKEY* key, const char* common_name, X509* issuer, EVP_PKEY* issuer_key, bool ca) {
  X509Ptr cert(X509_new());
  if (!cert) fail("X509_new");
  X509_set_version(cert.get(), 2);
  // A random serial: several test servers may run at once and clients cache nothing, but duplicates look odd.
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) fail("RAND_bytes");
  serial[0] &= 0x7F;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()))) fail("serial");
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  if (!X509_set_pubkey(cert.get(), key)) fail("X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  if (!X509_set_issuer_name(cert.get(), X509_get_subject_name(signer))) fail("X509_set_issuer_name");
  if (ca) {
    add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    add_ext(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    add_ext(cert.get(), signer, NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost");
    add_ext(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  if (!X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256())) fail("X509_sign");
  return cert;
}

}  // namespace

std::string TlsMaterial::ca_pem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio || !PEM_write_bio_X509(bio, ca_cert.get())) fail("PEM_write_bio_X509");
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

TlsMaterial generate_tls() {
  TlsMaterial m;
  m.ca_key = new_key();
  m.ca_cert = new_cert(m.ca_key.get(), "mindie-test-ca", nullptr, nullptr, true);
  m.server_key = new_key();
  m.server_cert = new_cert(m.server_key.get(), "mindie-test-server", m.ca_cert.get(), m.ca_key.get(), false);
  return m;
}

}  // namespace mindie::test
