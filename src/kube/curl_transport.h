// libcurl implementation of HttpTransport: one easy handle reused across requests (keep-alive), TLS from
// RestConfig (CA bundle, else the host's trust store; client certificate/key as in-memory PEM blobs,
// insecure-skip-tls-verify, tls-server-name),
// proxy with client-go's precedence, credentials from an AuthProvider.
#pragma once

#include <memory>
#include <string>

#include "kube/auth.h"
#include "kube/limits.h"
#include "kube/rest_config.h"
#include "kube/transport.h"

namespace mindie::kube {

/// The proxy client-go would use for `config.server`, in libcurl's syntax ("" = connect directly):
/// - cluster proxy-url, when set, wins over the environment (client-go's http.ProxyURL); socks5:// becomes
///   socks5h:// so that the proxy resolves the server's name, as Go's SOCKS5 dialer does;
/// - else http.ProxyFromEnvironment: HTTPS_PROXY/https_proxy for https servers, HTTP_PROXY/http_proxy for http
///   ones (a value without scheme is http://), none for localhost and loopback addresses, none when NO_PROXY/
///   no_proxy is "*" or lists the host (a name also matches its subdomains, ".name" only subdomains), its IP or
///   a CIDR containing it, with an optional :port that must match.
std::string effective_proxy(const RestConfig& config);

/// Talks HTTPS (or HTTP) to `config.server`. Not thread-safe: one request at a time. Each request carries the
/// credentials `auth` gives (Authorization header, client certificate); after a 401, auth->refresh() and, when it
/// says the credentials changed, the request is sent once more. User-Agent kubectl-mindie/<version>; connect
/// timeout 30 s (client-go's dial timeout), whole-request timeout config.request_timeout (0 = none); TCP
/// keep-alive probes every 30 s.
/// tls-server-name: the URL names that host (SNI and certificate check) and CURLOPT_CONNECT_TO sends the
/// connection to the real one. The proxy is effective_proxy(config), and libcurl's own proxy environment handling
/// is switched off. send() throws TransportError "Unable to connect to the server <server>: <libcurl's error>"
/// when no response arrives; exec plugin failures pass through as ExecCredentialError. A collected body (send(), a
/// stream's non-2xx answer) longer than `max_body_bytes` is cut off: TransportError (not retryable) naming the URL
/// and the bound.
/// stream(): the same TLS, proxy, credentials and 401 renewal; config.request_timeout bounds only the wait for
/// the answer's headers (connection included), never the stream itself, whose length the server's
/// timeoutSeconds decides (client-go's rule for watches). The sink gets its idle calls from libcurl's progress
/// callback (about once a second). No compression is offered for a stream (events must not wait in a
/// compressor's buffer). A break after the headers throws TransportError "The stream from the server
/// <server> broke: <libcurl's error>".
class CurlTransport : public HttpTransport {
 public:
  /// `auth` = nullptr uses ConfigAuthProvider(config). `max_body_bytes`: tests pass a small bound.
  explicit CurlTransport(RestConfig config, std::unique_ptr<AuthProvider> auth = nullptr,
                         std::size_t max_body_bytes = kMaxResponseBodyBytes);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  HttpResponse send(const HttpRequest& req) override;
  using HttpTransport::stream;
  HttpResponse stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) override;
  std::string server() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mindie::kube
