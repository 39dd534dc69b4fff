#include "kube/curl_transport.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>

#include "kube/logging_transport.h"
#include "kube/retrying_transport.h"
#include "kube/trust_store.h"

namespace mindie::kube {
namespace {

// Failures that the same request cannot escape by being sent again: the server's certificate does not verify, the
// client's certificate or key is unusable (a key that does not match its certificate), the URL or its scheme is
// wrong. RetryingTransport gives up on them at once.
bool permanent(CURLcode rc) {
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CIPHER:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN: return true;
    default: return false;
  }
}

// libcurl's global state must be set up once before any handle exists; curl_easy_init would do it lazily but
// not thread-safely.
void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The state of one transfer, shared by the callbacks. Without a sink (send()) the body is collected; with one
// (stream()) a 2xx body goes to the sink instead.
struct Transfer {
  HttpResponse resp;
  const StreamSink* sink = nullptr;
  const StreamHeadObserver* on_head = nullptr;
  int status = 0;          // the current answer's, from its status line
  bool head_done = false;  // the final (non-1xx) answer's headers are complete
  bool aborted = false;    // the sink asked to stop
  bool head_timed_out = false;
  bool too_big = false;  // the collected body reached max_body
  std::size_t max_body = 0;
  std::exception_ptr error;  // thrown by the sink or head observer; rethrown after curl returns
  std::chrono::steady_clock::time_point start;
  std::chrono::milliseconds head_timeout{0};  // 0 = none

  bool success() const { return status >= 200 && status <= 299; }
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->sink == nullptr || !t->success()) {
    if (n > t->max_body - t->resp.body.size()) {
      t->too_big = true;
      return 0;
    }
    t->resp.body.append(data, n);
    return n;
  }
  try {
    if ((*t->sink)(std::string_view(data, n))) return n;
    t->aborted = true;
  } catch (...) {
    t->error = std::current_exception();
  }
  return 0;  // anything but n makes libcurl stop the transfer
}

// Called once per header line, status lines included. A new status line (after "100 Continue") restarts the
// header list so that only the final response's headers are kept; the blank line ending a final answer's headers
// is when a stream's head observer hears of it.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  auto& headers = t->resp.headers;
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.substr(0, 5) == "HTTP/") {
    headers.clear();
    t->status = 0;
    if (const auto sp = line.find(' '); sp != std::string_view::npos) {
      std::string_view code = line.substr(sp + 1, 3);
      std::from_chars(code.data(), code.data() + code.size(), t->status);
    }
  } else if (line.empty()) {
    if (t->status >= 200 && !t->head_done) {
      t->head_done = true;
      if (t->sink != nullptr && t->on_head != nullptr && *t->on_head && t->success()) {
        try {
          HttpResponse head;
          head.status = t->status;
          head.headers = headers;
          (*t->on_head)(head);
        } catch (...) {
          t->error = std::current_exception();
          return 0;
        }
      }
    }
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    headers.emplace_back(std::move(name), std::string(value));
  }
  return size * count;
}

// Streams only: libcurl calls this about once a second while idle (more often while data flows). It enforces
// the request timeout up to the answer's headers and gives the sink its idle calls.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->head_done && t->head_timeout.count() > 0 && std::chrono::steady_clock::now() - t->start > t->head_timeout) {
    t->head_timed_out = true;
    return 1;
  }
  try {
    if ((*t->sink)(std::string_view())) return 0;
    t->aborted = true;
  } catch (...) {
    t->error = std::current_exception();
  }
  return 1;
}

// A PEM blob for libcurl; CURL_BLOB_COPY makes libcurl keep its own copy.
curl_blob pem_blob(const std::string& pem) {
  return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Go's httpproxy.getEnvAny: the first of the names that is set and non-empty.
std::string env_any(const char* upper, const char* lower_name) {
  for (const char* name : {upper, lower_name})
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  return {};
}

// The parts of a URL, via libcurl's own parser (so IPv6 literals and default ports agree with what it connects to).
struct UrlParts {
  std::string scheme, host, port, path;  // host without brackets; port with the scheme's default filled in
};

std::optional<UrlParts> split_url(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return std::nullopt;
  UrlParts parts;
  bool ok = curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK;
  const auto get = [&](CURLUPart part, unsigned flags, std::string& into) {
    char* v = nullptr;
    if (ok && curl_url_get(u, part, &v, flags) == CURLUE_OK) {
      into = v;
      curl_free(v);
    } else if (part != CURLUPART_PATH) {
      ok = false;
    }
  };
  get(CURLUPART_SCHEME, 0, parts.scheme);
  get(CURLUPART_HOST, 0, parts.host);
  get(CURLUPART_PORT, CURLU_DEFAULT_PORT, parts.port);
  get(CURLUPART_PATH, 0, parts.path);
  curl_url_cleanup(u);
  if (!ok) return std::nullopt;
  if (parts.host.size() > 1 && parts.host.front() == '[') parts.host = parts.host.substr(1, parts.host.size() - 2);
  while (!parts.path.empty() && parts.path.back() == '/') parts.path.pop_back();
  return parts;
}

// An IPv4 or IPv6 address as 16 bytes (IPv4 mapped into ::ffff:0:0/96, as Go's net.IP holds it).
std::optional<std::array<unsigned char, 16>> parse_ip(const std::string& text) {
  std::array<unsigned char, 16> ip{};
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, &v4, 4);
    return ip;
  }
  if (inet_pton(AF_INET6, text.c_str(), ip.data()) == 1) return ip;
  return std::nullopt;
}

bool is_loopback(const std::array<unsigned char, 16>& ip) {
  static const std::array<unsigned char, 16> v6_loopback = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const bool v4 = std::all_of(ip.begin(), ip.begin() + 10, [](unsigned char b) { return b == 0; }) && ip[10] == 0xff &&
                  ip[11] == 0xff;
  return ip == v6_loopback || (v4 && ip[12] == 127);
}

// Splits "host:port" / "[v6]:port" / "host" (Go's net.SplitHostPort when a port is present).
std::pair<std::string, std::string> split_host_port(const std::string& entry) {
  if (entry.starts_with('[')) {
    const auto close = entry.find(']');
    if (close == std::string::npos) return {entry, ""};
    const std::string rest = entry.substr(close + 1);
    return {entry.substr(1, close - 1), rest.starts_with(':') ? rest.substr(1) : ""};
  }
  const auto colon = entry.rfind(':');
  if (colon == std::string::npos || entry.find(':') != colon) return {entry, ""};  // none, or a bare IPv6
  return {entry.substr(0, colon), entry.substr(colon + 1)};
}

// Go's httpproxy.config.useProxy for NO_PROXY: true when `no_proxy` exempts host:port.
bool no_proxy_matches(const std::string& no_proxy, const std::string& host, const std::string& port) {
  const auto host_ip = parse_ip(host);
  std::string_view rest(no_proxy);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string entry = lower(std::string(rest.substr(0, comma)));
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (const auto slash = entry.find('/'); slash != std::string::npos) {  // CIDR
      const auto net = parse_ip(entry.substr(0, slash));
      if (!net || !host_ip) continue;
      int bits = std::atoi(entry.c_str() + slash + 1);
      if (entry.find(':') == std::string::npos) bits += 96;  // an IPv4 prefix inside the mapped form
      bool inside = bits >= 0 && bits <= 128;
      for (int b = 0; inside && b < bits; ++b) {
        const unsigned char mask = static_cast<unsigned char>(0x80 >> (b % 8));
        inside = ((*net)[b / 8] & mask) == ((*host_ip)[b / 8] & mask);
      }
      if (inside) return true;
      continue;
    }
    auto [entry_host, entry_port] = split_host_port(entry);
    if (!entry_port.empty() && entry_port != port) continue;
    if (const auto ip = parse_ip(entry_host)) {
      if (host_ip && *ip == *host_ip) return true;
      continue;
    }
    if (entry_host.starts_with("*.")) entry_host.erase(0, 1);
    const bool match_host = !entry_host.starts_with('.');
    if (match_host) entry_host = "." + entry_host;
    const std::string h = lower(host);
    if (h.ends_with(entry_host) || (match_host && h == entry_host.substr(1))) return true;
  }
  return false;
}

std::string socks5_remote_dns(const std::string& proxy) {
  return proxy.starts_with("socks5://") ? "socks5h://" + proxy.substr(9) : proxy;
}

}  // namespace

std::string effective_proxy(const RestConfig& config) {
  if (!config.proxy_url.empty()) return socks5_remote_dns(config.proxy_url);
  const auto url = split_url(config.server);
  if (!url) return {};
  std::string proxy = url->scheme == "https"  ? env_any("HTTPS_PROXY", "https_proxy")
                      : url->scheme == "http" ? env_any("HTTP_PROXY", "http_proxy")
                                              : std::string();
  if (proxy.empty()) return {};
  if (lower(url->host) == "localhost") return {};
  if (const auto ip = parse_ip(url->host); ip && is_loopback(*ip)) return {};
  if (no_proxy_matches(env_any("NO_PROXY", "no_proxy"), url->host, url->port)) return {};
  if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
  return socks5_remote_dns(proxy);
}

struct CurlTransport::Impl {
  RestConfig config;
  std::unique_ptr<AuthProvider> auth;
  std::string base_url;  // config.server, or the same URL naming tls-server-name
  std::string connect_to;
  curl_slist* connect_to_list = nullptr;
  std::string proxy;
  CURL* handle = nullptr;
  char error[CURL_ERROR_SIZE] = {};
  std::size_t max_body = kMaxResponseBodyBytes;
  std::string cert_in_use, key_in_use;  // the client certificate currently set on the handle
  bool needs_trust_store = false;       // https without a kubeconfig CA: the host's, read at the first request

  // One request; `sink` non-null streams (see HttpTransport::stream).
  HttpResponse perform(const HttpRequest& req, const Credentials& creds, const StreamSink* sink = nullptr,
                       const StreamHeadObserver* on_head = nullptr);
  // Sets the credentials' client certificate on the handle when it differs from the one in use.
  void use_client_certificate(const Credentials& creds);
  // Sets the request's verb, URL, body, headers and time bounds on the handle, with `t` as the callbacks' state;
  // returns the header list, which the caller frees after the transfer.
  curl_slist* set_request(const HttpRequest& req, const std::string& url, const Credentials& creds, Transfer& t);
  // The answer of a finished transfer, or the TransportError that says why there is none.
  HttpResponse outcome(CURLcode rc, Transfer& t, const HttpRequest& req, const std::string& url);
};

CurlTransport::CurlTransport(RestConfig config, std::unique_ptr<AuthProvider> auth, std::size_t max_body_bytes)
    : impl_(std::make_unique<Impl>()) {
  global_init_once();
  impl_->max_body = max_body_bytes;
  impl_->config = std::move(config);
  impl_->auth = auth ? std::move(auth) : std::make_unique<ConfigAuthProvider>(impl_->config);
  impl_->handle = curl_easy_init();
  if (impl_->handle == nullptr) throw TransportError("cannot initialise libcurl");
  CURL* h = impl_->handle;
  const RestConfig& c = impl_->config;
  impl_->base_url = c.server;
  if (!c.tls_server_name.empty()) {
    const auto url = split_url(c.server);
    if (!url)
      throw TransportError("Unable to connect to the server " + redact_url_passwords(c.server) +
                               ": the server URL cannot be parsed",
                           false);
    const auto bracket = [](const std::string& host) {
      return host.find(':') != std::string::npos ? "[" + host + "]" : host;
    };
    impl_->base_url = url->scheme + "://" + bracket(c.tls_server_name) + ":" + url->port + url->path;
    impl_->connect_to = bracket(c.tls_server_name) + ":" + url->port + ":" + bracket(url->host) + ":" + url->port;
    impl_->connect_to_list = curl_slist_append(nullptr, impl_->connect_to.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, impl_->connect_to_list);
  }
  // Options here persist for every request on this handle (and its kept-alive connection).
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, impl_->error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_USERAGENT, "kubectl-mindie/" MINDIE_VERSION);
  // The connection phase, TCP and TLS handshake together: client-go gives a TLS handshake 10 s
  // (TLSHandshakeTimeout), and a server that accepts but never completes it must not stall the command longer.
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  // client-go's dialer keeps TCP keep-alive probes at 30 s, which is what notices a silently dead watch.
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 30L);
  // A proxy's CONNECT answer is not the server's: keep it out of the header callback.
  curl_easy_setopt(h, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  // The proxy decision is client-go's (effective_proxy); "" makes libcurl connect directly instead of reading
  // the proxy variables itself, and an empty NOPROXY keeps it from applying no_proxy over a proxy-url.
  impl_->proxy = effective_proxy(c);
  curl_easy_setopt(h, CURLOPT_PROXY, impl_->proxy.c_str());
  curl_easy_setopt(h, CURLOPT_NOPROXY, "");
  if (c.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!c.ca_pem.empty()) {
    curl_blob ca = pem_blob(c.ca_pem);  // every certificate of a bundle is trusted
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
  } else {
    impl_->needs_trust_store = lower(c.server.substr(0, 8)) == "https://";
  }
}

CurlTransport::~CurlTransport() {
  if (impl_ && impl_->handle != nullptr) curl_easy_cleanup(impl_->handle);
  if (impl_) curl_slist_free_all(impl_->connect_to_list);
}

std::string CurlTransport::server() const { return impl_->config.server; }

HttpResponse CurlTransport::send(const HttpRequest& req) {
  HttpResponse resp = impl_->perform(req, impl_->auth->credentials());
  // client-go's exec authenticator renews the credential on a 401; the request itself is repeated once here.
  if (resp.status == 401 && impl_->auth->refresh()) resp = impl_->perform(req, impl_->auth->credentials());
  return resp;
}

HttpResponse CurlTransport::stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) {
  HttpResponse resp = impl_->perform(req, impl_->auth->credentials(), &sink, &on_head);
  if (resp.status == 401 && !resp.aborted && impl_->auth->refresh())
    resp = impl_->perform(req, impl_->auth->credentials(), &sink, &on_head);
  return resp;
}

HttpResponse CurlTransport::Impl::perform(const HttpRequest& req, const Credentials& creds, const StreamSink* sink,
                                          const StreamHeadObserver* on_head) {
  Transfer t;
  t.sink = sink;
  t.on_head = on_head;
  t.start = std::chrono::steady_clock::now();
  t.max_body = max_body;
  const std::string url = base_url + req.path;
  if (needs_trust_store) {
    const std::string pem = load_trust_store(system_trust_store_paths(), config.server);
    curl_blob ca = pem_blob(pem);  // copied by libcurl
    curl_easy_setopt(handle, CURLOPT_CAINFO_BLOB, &ca);
    needs_trust_store = false;
  }
  use_client_certificate(creds);
  curl_slist* headers = set_request(req, url, creds, t);
  error[0] = '\0';
  const CURLcode rc = curl_easy_perform(handle);
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  return outcome(rc, t, req, url);
}

void CurlTransport::Impl::use_client_certificate(const Credentials& creds) {
  if (creds.client_cert_pem == cert_in_use && creds.client_key_pem == key_in_use) return;
  CURL* h = handle;
  // A changed certificate is part of libcurl's connection matching, so it never rides an old connection.
  if (creds.client_cert_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, nullptr);
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, nullptr);
  } else {
    curl_blob cert = pem_blob(creds.client_cert_pem);
    curl_blob key = pem_blob(creds.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
  }
  cert_in_use = creds.client_cert_pem;
  key_in_use = creds.client_key_pem;
}

curl_slist* CurlTransport::Impl::set_request(const HttpRequest& req, const std::string& url, const Credentials& creds,
                                             Transfer& t) {
  CURL* h = handle;
  const bool streaming = t.sink != nullptr;
  // HTTPGET resets the body state a previous POST/PATCH left on the reused handle; the verb itself comes from
  // CUSTOMREQUEST.
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  // libcurl re-sends a request by itself, once, when a kept-alive connection turns out dead after it wrote it
  // (which cannot be switched off): a write that is not safe to repeat (a POST, a DELETE, an unguarded patch)
  // goes on a fresh connection, so it is sent exactly as often as RetryingTransport's attempt count says.
  curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, is_safe_to_retry(req) ? 0L : 1L);
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
  if (!creds.authorization.empty()) add("Authorization: " + creds.authorization);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  // --request-timeout bounds a whole request, but a watch is meant to outlive it (client-go leaves the watch's
  // length to the server's timeoutSeconds): for a stream it bounds only the wait up to the answer's headers,
  // which on_progress enforces.
  // A retry gets what is left of --request-timeout (HttpRequest::timeout), so that all attempts fit in it.
  const std::chrono::milliseconds bound = req.timeout.count() > 0 && (config.request_timeout.count() == 0 ||
                                                                      req.timeout < config.request_timeout)
                                              ? req.timeout
                                              : config.request_timeout;
  const long whole_timeout = streaming ? 0L : static_cast<long>(bound.count());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, whole_timeout);
  t.head_timeout = bound;
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, streaming ? 0L : 1L);
  // Offer gzip, which the API server uses for large lists, but not for a stream: a compressor that does not
  // flush after each event would hold events back.
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, streaming ? nullptr : "");
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  return headers;
}

HttpResponse CurlTransport::Impl::outcome(CURLcode rc, Transfer& t, const HttpRequest& req, const std::string& url) {
  if (t.error) std::rethrow_exception(t.error);
  if (t.aborted) {
    t.resp.aborted = true;
    t.resp.status = t.head_done ? t.status : 0;
    return std::move(t.resp);
  }
  // A password in the server URL (https://user:password@host) is used, never printed.
  const std::string server = redact_url_passwords(config.server);
  if (t.too_big) {
    const std::string bound = max_body % (1024 * 1024) == 0 ? std::to_string(max_body / (1024 * 1024)) + " MiB"
                                                            : std::to_string(max_body) + " bytes";
    throw TransportError("The answer of the server " + server + " to " + req.method + " " + redact_url_passwords(url) +
                             " was longer than " + bound + ", the most kubectl-mindie reads of one answer: stopped",
                         false);
  }
  if (t.head_timed_out) {
    throw TransportError("Unable to connect to the server " + server + ": no answer within " +
                         std::to_string(t.head_timeout.count()) + " ms (" + config.request_timeout_name + ")");
  }
  if (rc != CURLE_OK) {
    const std::string detail = redact_url_passwords(error[0] != '\0' ? error : curl_easy_strerror(rc));
    if (t.sink != nullptr && t.head_done)
      throw TransportError("The stream from the server " + server + " broke: " + detail);
    throw TransportError("Unable to connect to the server " + server + ": " + detail, !permanent(rc));
  }
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  t.resp.status = static_cast<int>(status);
  return std::move(t.resp);
}

}  // namespace mindie::kube
