#include "kube/curl_transport.h"

#include <curl/curl.h>

#include <cctype>
#include <mutex>

namespace mindie::kube {
namespace {

// libcurl's global state must be set up once before any handle exists; curl_easy_init would do it lazily but
// not thread-safely.
void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// Called once per header line, status lines included. A new status line (after "100 Continue") restarts the
// header list so that only the final response's headers are kept.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<std::vector<std::pair<std::string, std::string>>*>(user);
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.substr(0, 5) == "HTTP/") {
    headers->clear();
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    headers->emplace_back(std::move(name), std::string(value));
  }
  return size * count;
}

// A PEM blob for libcurl; CURL_BLOB_COPY makes libcurl keep its own copy.
curl_blob pem_blob(const std::string& pem) {
  return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
}

}  // namespace

struct CurlTransport::Impl {
  RestConfig config;
  CURL* handle = nullptr;
  char error[CURL_ERROR_SIZE] = {};
};

CurlTransport::CurlTransport(RestConfig config) : impl_(std::make_unique<Impl>()) {
  global_init_once();
  impl_->config = std::move(config);
  impl_->handle = curl_easy_init();
  if (impl_->handle == nullptr) throw TransportError("cannot initialise libcurl");
  CURL* h = impl_->handle;
  const RestConfig& c = impl_->config;
  // Options here persist for every request on this handle (and its kept-alive connection).
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, impl_->error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_USERAGENT, "kubectl-mindie/" MINDIE_VERSION);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);  // client-go's dial timeout
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // offer gzip: the API server compresses large lists
  if (c.request_timeout_seconds > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT, c.request_timeout_seconds);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  if (c.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!c.ca_pem.empty()) {
    curl_blob ca = pem_blob(c.ca_pem);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (!c.client_cert_pem.empty()) {
    curl_blob cert = pem_blob(c.client_cert_pem);
    curl_blob key = pem_blob(c.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
  }
}

CurlTransport::~CurlTransport() {
  if (impl_ && impl_->handle != nullptr) curl_easy_cleanup(impl_->handle);
}

std::string CurlTransport::server() const { return impl_->config.server; }

HttpResponse CurlTransport::send(const HttpRequest& req) {
  CURL* h = impl_->handle;
  HttpResponse resp;
  const std::string url = impl_->config.server + req.path;

  // HTTPGET resets the body state a previous POST/PATCH left on the reused handle; the verb itself comes from
  // CUSTOMREQUEST.
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  const bool has_body = !req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
  if (has_body) {
    // Set even for an empty body so that libcurl sends Content-Length: 0 instead of waiting for a read callback.
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  }

  curl_slist* headers = nullptr;
  const auto add = [&headers](const std::string& line) {
    if (curl_slist* next = curl_slist_append(headers, line.c_str())) headers = next;
  };
  if (!req.accept.empty()) add("Accept: " + req.accept);
  // "Content-Type:" with no value removes the form-urlencoded type libcurl would otherwise send with a body.
  add(req.content_type.empty() ? "Content-Type:" : "Content-Type: " + req.content_type);
  add("Expect:");  // no 100-continue round trip for large bodies
  if (!impl_->config.token.empty()) add("Authorization: Bearer " + impl_->config.token);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp.headers);

  impl_->error[0] = '\0';
  const CURLcode rc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    const std::string detail = impl_->error[0] != '\0' ? impl_->error : curl_easy_strerror(rc);
    throw TransportError("Unable to connect to the server " + impl_->config.server + ": " + detail);
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  resp.status = static_cast<int>(status);
  return resp;
}

}  // namespace mindie::kube
