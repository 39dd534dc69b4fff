// A transport decorator that logs like kubectl's -v levels: 6 = method, URL, status and latency; 7 = also the
// request's Accept/Content-Type; 8 = also response headers and bodies (cut at 1024 characters); 9 = whole bodies.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/transport.h"

namespace mindie::kube {

/// `text` with every credential after an HTTP auth scheme masked: "Bearer <x>", "Basic <x>" (any case) become
/// "Bearer <masked>", "Basic <masked>", as kubectl masks Authorization values in its -v logs; and every URL's
/// password too (redact_url_passwords).
std::string redact_credentials(std::string_view text);

/// `text` with the password of every URL in it ("scheme://user:password@host") replaced by "xxxxx", the user name
/// kept, as Go's URL.Redacted does (golang/go src/net/url/url.go), which client-go's users print.
std::string redact_url_passwords(std::string_view text);

/// Wraps `inner`, logging each request to `log` at `verbosity` (< 6 logs nothing) in klog's line format.
/// Never prints a token: credentials are added by the inner transport, below this decorator, and everything logged
/// (URL, bodies, response headers, errors) goes through redact_credentials; the values of response headers named
/// Authorization or Proxy-Authorization are masked whole. A TransportError from `inner` is logged (status="" and
/// the error) and rethrown.
/// stream(): the "Response" line (status and milliseconds to the headers; -v=8 also the headers) when a 2xx
/// answer's headers arrive, then at -v=8 one "Response Body" line per event line (redacted and cut as send()'s
/// bodies), and a "Stream ended" line (status, milliseconds, aborted=true when the caller stopped it) at the end;
/// a non-2xx answer is logged as send() logs it. All LoggingTransports of the process share one lock, and each
/// log line is written whole, so transports on several threads can log to one stream.
class LoggingTransport : public HttpTransport {
 public:
  LoggingTransport(HttpTransport& inner, int verbosity, std::ostream& log);
  HttpResponse send(const HttpRequest& req) override;
  using HttpTransport::stream;
  HttpResponse stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) override;
  std::string server() const override { return inner_.server(); }

 private:
  void write(const std::string& lines);
  std::string describe(const HttpRequest& req) const;
  void log_request(const HttpRequest& req);
  void log_response(const HttpRequest& req, long long ms, const HttpResponse& resp);
  void log_failure(const HttpRequest& req, long long ms, const TransportError& e);

  HttpTransport& inner_;
  int verbosity_;
  std::ostream& log_;
};

}  // namespace mindie::kube
