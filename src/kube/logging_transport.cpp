#include "kube/logging_transport.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <sstream>

namespace mindie::kube {
namespace {

// kubectl at -v=8 shows the first 1024 characters of a body; -v=9 shows it whole.
constexpr std::size_t kBodyLimitAtV8 = 1024;
// The longest unfinished event line a stream's -v=8 log keeps (an object is at most 1.5 MiB in etcd).
constexpr std::size_t kMaxPartialLine = 16 * 1024 * 1024;

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

// klog's line header: "I1130 10:04:05.123456   12345 kube] ".
std::string klog_prefix() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "I%02d%02d %02d:%02d:%02d.%06lld %7d kube] ", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(micros), static_cast<int>(getpid()));
  return buf;
}

// A value in double quotes with Go-%q-like escaping, so that a body stays on one log line.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string body_for_log(const std::string& body, int verbosity) {
  if (verbosity >= 9 || body.size() <= kBodyLimitAtV8) return quote(redact_credentials(body));
  return quote(redact_credentials(std::string_view(body).substr(0, kBodyLimitAtV8))) + " [truncated " +
         std::to_string(body.size() - kBodyLimitAtV8) + " chars]";
}

std::string status_text(int status) {
  const std::string phrase = reason_phrase(status);
  return std::to_string(status) + (phrase.empty() ? "" : " " + phrase);
}

// Every LoggingTransport of the process shares one lock: the transports of watch threads and of the main thread
// write to the same stream, and a log line must never be interleaved with another.
std::mutex& log_mutex() {
  static std::mutex mu;
  return mu;
}

std::string response_headers_line(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string line = klog_prefix() + "\"Response Headers\"";
  for (const auto& [name, value] : headers) {
    const bool secret = name == "authorization" || name == "proxy-authorization";
    line += ' ' + name + '=' + quote(secret ? "<masked>" : redact_credentials(value));
  }
  return line + '\n';
}

}  // namespace

std::string redact_url_passwords(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  for (std::size_t sep; (sep = text.find("://", i)) != std::string_view::npos;) {
    // The authority ends where the URL's path, query or fragment starts, or where the text around it goes on.
    const std::size_t start = sep + 3;
    std::size_t end = start;
    while (end < text.size() && std::string_view("/?#\"' \t\r\n<>").find(text[end]) == std::string_view::npos) ++end;
    const std::string_view authority = text.substr(start, end - start);
    const std::size_t at = authority.rfind('@');
    const std::size_t colon = authority.find(':');
    out.append(text.substr(i, start - i));
    if (at != std::string_view::npos && colon < at) {
      out.append(authority.substr(0, colon + 1)).append("xxxxx").append(authority.substr(at));
    } else {
      out.append(authority);
    }
    i = end;
  }
  return out.append(text.substr(i));
}

std::string redact_credentials(std::string_view raw) {
  const std::string unmasked = redact_url_passwords(raw);
  const std::string_view text = unmasked;
  const auto is_token_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-._~+/=:%").find(c) != std::string_view::npos;
  };
  // Length of an auth scheme (followed by blanks) starting a word at `i`; 0 when there is none.
  const auto scheme_at = [&text](std::size_t i) -> std::size_t {
    if (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))) return 0;
    for (std::string_view scheme : {"bearer", "basic"}) {
      if (text.size() - i <= scheme.size()) continue;
      bool same = true;
      for (std::size_t k = 0; k < scheme.size() && same; ++k)
        same = std::tolower(static_cast<unsigned char>(text[i + k])) == scheme[k];
      const char next = text[i + scheme.size()];
      if (same && (next == ' ' || next == '\t')) return scheme.size();
    }
    return 0;
  };
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t len = scheme_at(i);
    if (len == 0) {
      out += text[i++];
      continue;
    }
    std::size_t start = i + len;
    while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
    std::size_t end = start;
    while (end < text.size() && is_token_char(text[end])) ++end;
    out.append(text.substr(i, start - i));
    if (end > start) out += "<masked>";
    i = end;
  }
  return out;
}

LoggingTransport::LoggingTransport(HttpTransport& inner, int verbosity, std::ostream& log)
    : inner_(inner), verbosity_(verbosity), log_(log) {}

void LoggingTransport::write(const std::string& lines) {
  std::lock_guard lock(log_mutex());
  log_ << lines << std::flush;
}

std::string LoggingTransport::describe(const HttpRequest& req) const {
  return "verb=\"" + req.method + "\" url=" + quote(redact_credentials(inner_.server() + req.path));
}

void LoggingTransport::log_request(const HttpRequest& req) {
  std::string lines;
  if (verbosity_ >= 7) {
    // Only the headers the client chose; the transport adds Authorization itself, so no token can reach the log.
    lines += klog_prefix() + "\"Request Headers\" " + describe(req) + " Accept=" + quote(req.accept);
    if (!req.content_type.empty()) lines += " Content-Type=" + quote(req.content_type);
    lines += '\n';
  }
  if (verbosity_ >= 8 && !req.body.empty())
    lines += klog_prefix() + "\"Request Body\" body=" + body_for_log(req.body, verbosity_) + '\n';
  if (!lines.empty()) write(lines);
}

void LoggingTransport::log_failure(const HttpRequest& req, long long ms, const TransportError& e) {
  write(klog_prefix() + "\"Response\" " + describe(req) + " status=\"\" milliseconds=" + std::to_string(ms) +
        " error=" + quote(redact_credentials(e.what())) + '\n');
}

void LoggingTransport::log_response(const HttpRequest& req, long long ms, const HttpResponse& resp) {
  std::string lines = klog_prefix() + "\"Response\" " + describe(req) + " status=\"" + status_text(resp.status) +
                      "\" milliseconds=" + std::to_string(ms) + '\n';
  if (verbosity_ >= 8) {
    lines += response_headers_line(resp.headers);
    lines += klog_prefix() + "\"Response Body\" body=" + body_for_log(resp.body, verbosity_) + '\n';
  }
  write(lines);
}

namespace {
long long ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

HttpResponse LoggingTransport::send(const HttpRequest& req) {
  if (verbosity_ < 6) return inner_.send(req);
  log_request(req);
  const auto start = std::chrono::steady_clock::now();
  HttpResponse resp;
  try {
    resp = inner_.send(req);
  } catch (const TransportError& e) {
    log_failure(req, ms_since(start), e);
    throw;
  }
  log_response(req, ms_since(start), resp);
  return resp;
}

HttpResponse LoggingTransport::stream(const HttpRequest& req, const StreamSink& sink,
                                      const StreamHeadObserver& on_head) {
  if (verbosity_ < 6) return inner_.stream(req, sink, on_head);
  log_request(req);
  const auto start = std::chrono::steady_clock::now();
  bool established = false;
  std::string partial;  // -v=8: the start of an event line still arriving
  const auto log_line = [&](std::string_view line) {
    write(klog_prefix() + "\"Response Body\" body=" + body_for_log(std::string(line), verbosity_) + '\n');
  };
  const StreamHeadObserver head = [&](const HttpResponse& h) {
    established = true;
    std::string lines = klog_prefix() + "\"Response\" " + describe(req) + " status=\"" + status_text(h.status) +
                        "\" milliseconds=" + std::to_string(ms_since(start)) + '\n';
    if (verbosity_ >= 8) lines += response_headers_line(h.headers);
    write(lines);
    if (on_head) on_head(h);
  };
  const StreamSink body = [&](std::string_view chunk) {
    if (verbosity_ >= 8 && !chunk.empty()) {
      // One log line per event line, so each is redacted and cut like a whole body of send().
      partial.append(chunk);
      std::size_t begin = 0;
      for (std::size_t nl; (nl = partial.find('\n', begin)) != std::string::npos; begin = nl + 1)
        log_line(std::string_view(partial).substr(begin, nl - begin));
      partial.erase(0, begin);
      // A server that never ends a line must not grow this without bound: log what came so far as one line.
      if (partial.size() > kMaxPartialLine) {
        log_line(partial);
        partial.clear();
      }
    }
    return sink(chunk);
  };
  HttpResponse resp;
  try {
    resp = inner_.stream(req, body, head);
  } catch (const TransportError& e) {
    if (!partial.empty()) log_line(partial);
    log_failure(req, ms_since(start), e);
    throw;
  }
  if (!partial.empty()) log_line(partial);
  if (!established && !resp.aborted) {
    log_response(req, ms_since(start), resp);  // an error answer: logged whole, as send() logs it
  } else {
    write(klog_prefix() + "\"Stream ended\" " + describe(req) + " status=\"" +
          (resp.status == 0 ? std::string() : status_text(resp.status)) +
          "\" milliseconds=" + std::to_string(ms_since(start)) + (resp.aborted ? " aborted=true" : "") + '\n');
  }
  return resp;
}

}  // namespace mindie::kube
