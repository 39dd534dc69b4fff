// libcurl implementation of HttpTransport: one easy handle reused across requests (keep-alive), TLS from
// RestConfig (CA, client certificate/key as in-memory PEM blobs, insecure-skip-tls-verify), bearer token.
#pragma once

#include <memory>

#include "kube/rest_config.h"
#include "kube/transport.h"

namespace mindie::kube {

/// Talks HTTPS (or HTTP) to `config.server`. Not thread-safe: one request at a time. Sends
/// "Authorization: Bearer <token>" when config.token is set, User-Agent kubectl-mindie/<version>; connect timeout
/// 30 s (client-go's dial timeout), whole-request timeout config.request_timeout_seconds (0 = none). send() throws
/// TransportError "Unable to connect to the server <server>: <libcurl's error>" when no response arrives.
class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(RestConfig config);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  HttpResponse send(const HttpRequest& req) override;
  std::string server() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mindie::kube
