// HttpResponse::header, the -v logging decorator, and CurlTransport against a one-connection loopback server and
// the TLS test server (streams).
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fake_transport.h"
#include "kube/curl_transport.h"
#include "kube/logging_transport.h"
#include "kube/trust_store.h"
#include "net_test_support.h"
#include "scratch_files.h"

using mindie::kube::CurlTransport;
using mindie::kube::HttpRequest;
using mindie::kube::HttpResponse;
using mindie::kube::LoggingTransport;
using mindie::kube::RestConfig;
using mindie::kube::system_trust_store_paths;
using mindie::kube::TransportError;
using mindie::test::FakeTransport;
using mindie::test::ScopedEnv;
using mindie::test::Socks5Proxy;
using mindie::test::TempDir;
using mindie::test::TlsServer;

namespace {

HttpRequest request(std::string method, std::string path, std::string content_type = {}, std::string body = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("HttpResponse::header is case-insensitive and gives the first match") {
  HttpResponse r;
  r.headers = {{"content-type", "application/json"}, {"warning", "first"}, {"warning", "second"}};
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(r.header("WARNING") == "first");
  CHECK(r.header("retry-after").empty());
}

TEST_CASE("LoggingTransport below -v=6 logs nothing") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 5, log);
  inner.reply(200, "{}");
  CHECK(t.send(request("GET", "/api/v1")).status == 200);
  CHECK(log.str().empty());
  CHECK(t.server() == inner.server());
}

TEST_CASE("LoggingTransport -v=6: one line with verb, full URL, status and latency; no bodies") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 6, log);
  inner.reply(404, "secret-ish body");
  const HttpResponse r = t.send(request("PATCH", "/api/v1/namespaces/ns/configmaps/cm?dryRun=All",
                                        "application/merge-patch+json", "request body"));
  CHECK(r.status == 404);
  CHECK(r.body == "secret-ish body");
  const auto lines = lines_of(log.str());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("I", 0) == 0);  // klog severity letter
  CHECK(contains(lines[0],
                 "] \"Response\" verb=\"PATCH\" "
                 "url=\"https://fake.example:6443/api/v1/namespaces/ns/configmaps/cm?dryRun=All\" "
                 "status=\"404 Not Found\" milliseconds="));
  CHECK_FALSE(contains(log.str(), "body"));
}

TEST_CASE("LoggingTransport -v=8: request headers and body, response headers and body, cut at 1024") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 8, log);
  const std::string big(3000, 'z');
  const std::string body = "{\"kind\":\"ConfigMap\"}\n" + big;  // 3021 characters: 1997 beyond the limit
  inner.reply(200, body, {{"content-type", "application/json"}});
  t.send(request("POST", "/api/v1/namespaces/ns/configmaps", "application/json", R"({"a":"b"})"));
  const std::string out = log.str();
  CHECK(contains(out, "\"Request Headers\" verb=\"POST\""));
  CHECK(contains(out, "Accept=\"application/json\" Content-Type=\"application/json\""));
  CHECK(contains(out, R"("Request Body" body="{\"a\":\"b\"}")"));
  CHECK(contains(out, "status=\"200 OK\""));
  CHECK(contains(out, "\"Response Headers\" content-type=\"application/json\""));
  CHECK(contains(out, R"("Response Body" body="{\"kind\":\"ConfigMap\"}\n)"));  // one line: newline escaped
  const std::size_t shown = 1024 - std::string("{\"kind\":\"ConfigMap\"}\n").size();
  CHECK(contains(out, std::string(shown, 'z') + "\" [truncated 1997 chars]"));
  CHECK_FALSE(contains(out, std::string(shown + 1, 'z')));
  CHECK(lines_of(out).size() == 5);
}

TEST_CASE("LoggingTransport -v=9 logs whole bodies") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 9, log);
  inner.reply(200, std::string(3000, 'z'));
  t.send(request("GET", "/api/v1"));
  CHECK(contains(log.str(), std::string(3000, 'z') + "\"\n"));
  CHECK_FALSE(contains(log.str(), "truncated"));
}

TEST_CASE("LoggingTransport logs a transport failure and rethrows it") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 6, log);
  inner.fail("Unable to connect to the server https://fake.example:6443: Connection refused");
  CHECK_THROWS_AS(t.send(request("GET", "/api/v1")), TransportError);
  CHECK(contains(log.str(), "status=\"\" milliseconds="));
  CHECK(contains(log.str(), "error=\"Unable to connect to the server https://fake.example:6443: Connection refused\""));
}

namespace {

// A plain-HTTP server on 127.0.0.1 that accepts exactly one connection and answers `count` requests on it, so a
// second connection (no keep-alive) leaves the client unanswered until its timeout. Raw requests are recorded.
class OneConnectionServer {
 public:
  explicit OneConnectionServer(int count) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(listen_fd_, 4) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, count] { serve(count); });
  }
  ~OneConnectionServer() {
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Waits for the server to finish its `count` answers (or give up) and returns the raw requests it read.
  std::vector<std::string> take_requests() {
    thread_.join();
    return std::move(requests_);
  }

 private:
  void serve(int count) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::string buffer;
    for (int i = 0; i < count; ++i) {
      std::size_t end;
      while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
        if (!read_more(fd, buffer)) return finish(fd);
      }
      std::size_t length = 0;
      const auto cl = buffer.find("Content-Length: ");
      if (cl != std::string::npos && cl < end) length = std::stoul(buffer.substr(cl + 16));
      while (buffer.size() < end + 4 + length) {
        if (!read_more(fd, buffer)) return finish(fd);
      }
      requests_.push_back(buffer.substr(0, end + 4 + length));
      buffer.erase(0, end + 4 + length);
      const std::string body = "{\"n\":" + std::to_string(i) + "}";
      const std::string reply = "HTTP/1.1 " + std::string(i == 1 ? "404 Not Found" : "200 OK") +
                                "\r\nContent-Type: application/json\r\nX-Mixed-Case: Value \r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
      if (write(fd, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size())) return finish(fd);
    }
    finish(fd);
  }
  static void finish(int fd) { close(fd); }
  static bool read_more(int fd, std::string& buffer) {
    char chunk[4096];
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return false;
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("CurlTransport: verbs, bodies, headers and token over one kept-alive connection") {
  std::vector<std::string> seen;
  std::vector<HttpResponse> answers;
  {
    OneConnectionServer server(3);
    RestConfig cfg;
    cfg.server = server.url();
    cfg.token = "sekrit-token";
    cfg.request_timeout = std::chrono::seconds(20);
    CurlTransport t(cfg);
    CHECK(t.server() == server.url());
    answers.push_back(t.send(request("PATCH", "/apis/g/v1/namespaces/ns/things/x?fieldManager=m",
                                     "application/apply-patch+yaml", R"({"spec":{}})")));
    // A GET after a body-carrying request must not resend the body on the reused handle.
    answers.push_back(t.send(request("GET", "/api/v1/namespaces/ns/pods/p")));
    // An empty body still gets Content-Length: 0 (an apply: safe to repeat, so it keeps the connection).
    answers.push_back(
        t.send(request("PATCH", "/api/v1/namespaces/ns/configmaps/c", "application/apply-patch+yaml", "")));
    seen = server.take_requests();
  }
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].rfind("PATCH /apis/g/v1/namespaces/ns/things/x?fieldManager=m HTTP/1.1\r\n", 0) == 0);
  CHECK(contains(seen[0], "Content-Type: application/apply-patch+yaml\r\n"));
  CHECK(contains(seen[0], "Accept: application/json\r\n"));
  CHECK(contains(seen[0], "Authorization: Bearer sekrit-token\r\n"));
  CHECK(contains(seen[0], "User-Agent: kubectl-mindie/"));
  CHECK(seen[0].substr(seen[0].size() - 11) == R"({"spec":{}})");

  CHECK(seen[1].rfind("GET /api/v1/namespaces/ns/pods/p HTTP/1.1\r\n", 0) == 0);
  CHECK_FALSE(contains(seen[1], "Content-Length"));
  CHECK_FALSE(contains(seen[1], "Content-Type"));
  CHECK(seen[1].substr(seen[1].size() - 4) == "\r\n\r\n");

  CHECK(seen[2].rfind("PATCH /api/v1/namespaces/ns/configmaps/c HTTP/1.1\r\n", 0) == 0);
  CHECK(contains(seen[2], "Content-Length: 0\r\n"));

  REQUIRE(answers.size() == 3);
  CHECK(answers[0].status == 200);
  CHECK(answers[0].body == "{\"n\":0}");
  CHECK(answers[0].header("content-type") == "application/json");
  CHECK(answers[0].headers.at(1).first == "x-mixed-case");  // names stored lower-case, values trimmed
  CHECK(answers[0].headers.at(1).second == "Value");
  CHECK(answers[1].status == 404);  // an error status is a response, not an exception
  CHECK(answers[2].body == "{\"n\":2}");
}

namespace {

// A plain-HTTP server on 127.0.0.1 that answers one request with a 200 whose body never ends (no Content-Length:
// it would last until the connection closes), written until the client goes away or stops reading for 10 s.
class EndlessBodyServer {
 public:
  EndlessBodyServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(listen_fd_, 4) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~EndlessBodyServer() {
    thread_.join();
    close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    const timeval stall{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof stall);
    std::string request;
    char chunk[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      pollfd r{fd, POLLIN, 0};
      if (poll(&r, 1, 10000) != 1) return (void)close(fd);
      const ssize_t n = read(fd, chunk, sizeof chunk);
      if (n <= 0) return (void)close(fd);
      request.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
    const std::string body(64 * 1024, ' ');
    if (send(fd, head.data(), head.size(), MSG_NOSIGNAL) > 0)
      while (send(fd, body.data(), body.size(), MSG_NOSIGNAL) > 0) {
      }
    close(fd);
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("CurlTransport: a body that outgrows the bound is cut off, naming the URL and the bound, not retried") {
  // Issue 30: a tester's endless response body grew the process to 8.5 GB before it failed.
  EndlessBodyServer server;
  RestConfig cfg;
  cfg.server = server.url();
  std::string message;
  bool retryable = true;
  {
    CurlTransport t(cfg, nullptr, 1024 * 1024);
    try {
      t.send(request("GET", "/api/v1/namespaces/ns/pods"));
      FAIL("send() returned");
    } catch (const TransportError& e) {
      message = e.what();
      retryable = e.retryable();
    }
  }  // the connection closes: the server stops writing
  CHECK(contains(message, "GET " + server.url() + "/api/v1/namespaces/ns/pods was longer than 1 MiB"));
  CHECK_FALSE(retryable);  // the same request would get the same endless answer
}

TEST_CASE("CurlTransport: a write that is not safe to repeat never rides a kept-alive connection") {
  // libcurl re-sends a request once by itself when a reused connection turns out dead; a POST must not be sent
  // twice that way, so it opens a fresh connection, which this server (one connection) never accepts.
  std::vector<std::string> seen;
  {
    OneConnectionServer server(3);
    RestConfig cfg;
    cfg.server = server.url();
    cfg.request_timeout = std::chrono::seconds(1);
    {
      CurlTransport t(cfg);
      CHECK(t.send(request("GET", "/api/v1/namespaces/ns/pods/p")).status == 200);
      CHECK_THROWS_AS(t.send(request("POST", "/api/v1/namespaces/ns/configmaps", "application/json", "{}")),
                      TransportError);
    }  // the kept-alive connection closes: the server stops waiting for its third request
    seen = server.take_requests();
  }
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].rfind("GET ", 0) == 0);
}

namespace {

/// A bound socket that does not listen: connecting to its port is refused, and nobody else can take the port.
struct RefusedPort {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  RefusedPort() {
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
  }
  ~RefusedPort() { close(fd); }
  RefusedPort(const RefusedPort&) = delete;
  RefusedPort& operator=(const RefusedPort&) = delete;
};

}  // namespace

TEST_CASE("CurlTransport: a password in the server URL is masked in its errors, as Go's URL.Redacted does") {
  RefusedPort refused;
  RestConfig cfg;
  cfg.server = "http://admin:s3cr%2Ft@127.0.0.1:" + std::to_string(refused.port);
  cfg.request_timeout = std::chrono::seconds(20);
  CurlTransport t(cfg);
  std::string message;
  try {
    t.send(request("GET", "/api/v1"));
  } catch (const TransportError& e) {
    message = e.what();
  }
  CHECK_MESSAGE(contains(message, "http://admin:xxxxx@127.0.0.1:" + std::to_string(refused.port)), message);
  CHECK_FALSE(contains(message, "s3cr"));
  // The -v lines of the same transport.
  std::ostringstream log;
  LoggingTransport logged(t, 6, log);
  CHECK_THROWS_AS(logged.send(request("GET", "/api/v1")), TransportError);
  CHECK_MESSAGE(contains(log.str(), "url=\"http://admin:xxxxx@127.0.0.1:"), log.str());
  CHECK_FALSE(contains(log.str(), "s3cr"));
}

TEST_CASE("CurlTransport: no server listening is a TransportError naming the server") {
  RefusedPort refused;
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(refused.port);
  cfg.request_timeout = std::chrono::seconds(20);
  CurlTransport t(cfg);
  std::string message;
  bool retryable = false;
  try {
    t.send(request("GET", "/api/v1"));
  } catch (const TransportError& e) {
    message = e.what();
    retryable = e.retryable();
  }
  CHECK(retryable);  // a refused connection may be a server restarting
  CHECK(contains(message, cfg.server));
  CHECK(contains(message, "Unable to connect"));
  CHECK(message.size() > std::string("Unable to connect to the server " + cfg.server + ": ").size());
}

TEST_CASE("CurlTransport: a socks5 proxy-url leaves resolving the server's name to the proxy (socks5h)") {
  // ".invalid" never resolves (RFC 6761): only the proxy, which maps it to 127.0.0.1 itself, can reach it.
  const std::string name = "sandbox.mindie.invalid";
  addrinfo* found = nullptr;
  REQUIRE(getaddrinfo(name.c_str(), nullptr, nullptr, &found) != 0);
  TlsServer server;
  const std::string server_url = "https://" + name + ":" + std::to_string(server.port());
  RestConfig c;
  c.ca_pem = server.ca_pem();
  c.token = "via-socks";
  c.request_timeout = std::chrono::seconds(20);

  SUBCASE("verified certificate through tls-server-name") {
    Socks5Proxy proxy({{name, "127.0.0.1"}});
    c.server = server_url;
    c.tls_server_name = "localhost";  // in the certificate; the connection still goes to `name`
    c.proxy_url = proxy.url("socks5");
    {
      CurlTransport t(c);
      CHECK(t.send(request("GET", "/version")).status == 200);
      CHECK(t.server() == server_url);
    }
    const auto seen = proxy.take_request();
    CHECK(seen.atyp == 3);  // a domain name, not an address curl resolved
    CHECK(seen.host == name);
    CHECK(seen.port == server.port());
    CHECK(server.authorizations().back() == "Bearer via-socks");
  }
  SUBCASE("insecure-skip-tls-verify, socks5h:// given as such") {
    Socks5Proxy proxy({{name, "127.0.0.1"}});
    c.server = server_url;
    c.ca_pem.clear();
    c.insecure_skip_tls_verify = true;
    c.proxy_url = proxy.url("socks5h");
    CHECK(CurlTransport(c).send(request("GET", "/version")).status == 200);
    const auto seen = proxy.take_request();
    CHECK(seen.atyp == 3);
    CHECK(seen.host == name);
  }
  SUBCASE("an IP address server is sent as ATYP 1") {
    Socks5Proxy proxy;
    c.server = server.url();
    c.proxy_url = proxy.url("socks5");
    CHECK(CurlTransport(c).send(request("GET", "/version")).status == 200);
    const auto seen = proxy.take_request();
    CHECK(seen.atyp == 1);
    CHECK(seen.host == "127.0.0.1");
  }
  SUBCASE("a name the proxy cannot resolve fails with the server named; no local fallback") {
    Socks5Proxy proxy;  // knows no names
    c.server = server_url;
    c.proxy_url = proxy.url("socks5");
    CHECK_THROWS_WITH_AS(CurlTransport(c).send(request("GET", "/version")), doctest::Contains(server_url.c_str()),
                         TransportError);
    const auto seen = proxy.take_request();
    CHECK(seen.atyp == 3);
    CHECK(seen.host == name);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// stream()

namespace {

// Collects what a stream's sink is given.
struct Collected {
  std::string body;
  int pieces = 0;  // non-empty ones
  int idle = 0;    // empty ones
};

}  // namespace

TEST_CASE("CurlTransport: a server certificate that does not verify fails for good (not retryable)") {
  TlsServer server;
  RestConfig c;
  c.server = server.url();  // no CA given: the fresh CA of the server is unknown
  c.request_timeout = std::chrono::seconds(20);
  CurlTransport t(c);
  try {
    t.send(request("GET", "/api/v1"));
    FAIL("an unverifiable certificate was accepted");
  } catch (const TransportError& e) {
    CHECK_FALSE(e.retryable());
    CHECK(contains(e.what(), "Unable to connect to the server " + c.server));
  }
}

TEST_CASE("CurlTransport: without a kubeconfig CA the host's trust store verifies the server") {
  TlsServer server;
  TempDir dir;
  RestConfig c;
  c.server = server.url();
  c.request_timeout = std::chrono::seconds(20);
  const std::string missing = (dir.path / "missing.pem").string();

  SUBCASE("SSL_CERT_FILE names the bundle") {
    ScopedEnv file("SSL_CERT_FILE", dir.write("bundle.pem", server.ca_pem()));
    CHECK(CurlTransport(c).send(request("GET", "/version")).status == 200);
  }
  SUBCASE("no bundle: every certificate file of the SSL_CERT_DIR folders, other files ignored") {
    ScopedEnv file("SSL_CERT_FILE", missing);
    dir.write("certs/README", "not a certificate");
    dir.write("certs/cluster-ca.pem", server.ca_pem());
    ScopedEnv dirs("SSL_CERT_DIR", (dir.path / "empty").string() + ":" + (dir.path / "certs").string());
    CHECK(CurlTransport(c).send(request("GET", "/version")).status == 200);
  }
  SUBCASE("no certificate anywhere: not retryable, every path tried named") {
    ScopedEnv file("SSL_CERT_FILE", missing);
    dir.write("certs/README", "not a certificate");
    const std::string certs = (dir.path / "certs").string();
    ScopedEnv dirs("SSL_CERT_DIR", certs);
    try {
      CurlTransport(c).send(request("GET", "/version"));
      FAIL("a request went out without any CA");
    } catch (const TransportError& e) {
      CHECK_FALSE(e.retryable());
      CHECK(contains(e.what(), "Unable to connect to the server " + c.server));
      CHECK(contains(e.what(), "no CA certificates on this host (tried " + missing + ", " + certs + ";"));
    }
    CHECK(server.authorizations().empty());
  }
}

TEST_CASE("system_trust_store_paths: the distributions' places unless SSL_CERT_FILE / SSL_CERT_DIR say otherwise") {
  {
    ScopedEnv file("SSL_CERT_FILE", std::nullopt);
    ScopedEnv dirs("SSL_CERT_DIR", std::nullopt);
    const auto paths = system_trust_store_paths();
    CHECK(paths.files.front() == "/etc/ssl/certs/ca-certificates.crt");  // Debian, Ubuntu, Kylin
    CHECK(std::count(paths.files.begin(), paths.files.end(), "/etc/pki/tls/certs/ca-bundle.crt") == 1);  // openEuler
    CHECK(paths.dirs == std::vector<std::string>{"/etc/ssl/certs", "/etc/pki/tls/certs"});
  }
  ScopedEnv file("SSL_CERT_FILE", "/opt/ca.pem");
  ScopedEnv dirs("SSL_CERT_DIR", "/a:/b");
  const auto paths = system_trust_store_paths();
  CHECK(paths.files == std::vector<std::string>{"/opt/ca.pem"});
  CHECK(paths.dirs == std::vector<std::string>{"/a", "/b"});
}

TEST_CASE("CurlTransport::stream hands each chunk to the sink as it arrives, over TLS") {
  TlsServer server;
  RestConfig c;
  c.server = server.url();
  c.ca_pem = server.ca_pem();
  c.token = "stream-token";
  c.request_timeout = std::chrono::seconds(20);
  CurlTransport t(c);
  Collected got;
  std::vector<std::string> heads;
  const HttpResponse r = t.stream(
      request("GET", "/stream/pieces"),
      [&](std::string_view chunk) {
        if (chunk.empty()) {
          ++got.idle;
          return true;
        }
        ++got.pieces;
        got.body.append(chunk);
        // The server sends the next piece only after this: seeing a piece here proves it was not buffered.
        if (got.body.ends_with("\n")) server.advance();
        return true;
      },
      [&](const HttpResponse& head) {
        CHECK(got.body.empty());  // the head comes before any body piece
        heads.push_back(std::to_string(head.status) + " " + head.header("content-type"));
      });
  CHECK(r.status == 200);
  CHECK_FALSE(r.aborted);
  CHECK(r.body.empty());  // a 2xx body goes to the sink only
  CHECK(got.body == "piece-1\npiece-2\npiece-3\n");
  CHECK(got.pieces >= 3);
  CHECK(heads == std::vector<std::string>{"200 application/json"});
  CHECK(server.authorizations().empty());  // the stream routes do not record; the token is checked below
  // The same handle still serves ordinary requests afterwards, with the credentials.
  CHECK(t.send(request("GET", "/version")).status == 200);
  CHECK(server.authorizations().back() == "Bearer stream-token");
}

TEST_CASE("CurlTransport::stream: a sink returning false stops an idle stream; request-timeout spares the body") {
  TlsServer server;
  RestConfig c;
  c.server = server.url();
  c.ca_pem = server.ca_pem();
  // The sink keeps the idle stream open for twice this: a whole-request timeout would end it as an error.
  c.request_timeout = std::chrono::milliseconds(400);
  CurlTransport t(c);
  int idle_after_head = 0;
  bool only_empty = true;  // checked once below: the sink runs as often as the clock lets it
  std::optional<std::chrono::steady_clock::time_point> head;
  const HttpResponse r = t.stream(
      request("GET", "/stream/idle"),
      [&](std::string_view chunk) {
        only_empty = only_empty && chunk.empty();  // the server sends nothing
        if (!head) return true;
        ++idle_after_head;
        return std::chrono::steady_clock::now() - *head < 2 * c.request_timeout;
      },
      [&](const HttpResponse&) { head = std::chrono::steady_clock::now(); });
  CHECK(only_empty);
  CHECK(r.aborted);
  CHECK(r.status == 200);
  CHECK(idle_after_head >= 1);
  server.release();
}

TEST_CASE("CurlTransport::stream: the connection closing mid-body is a TransportError saying the stream broke") {
  TlsServer server;
  RestConfig c;
  c.server = server.url();
  c.ca_pem = server.ca_pem();
  CurlTransport t(c);
  std::string body;
  try {
    t.stream(request("GET", "/stream/break"), [&](std::string_view chunk) {
      body.append(chunk);
      return true;
    });
    FAIL("expected TransportError");
  } catch (const TransportError& e) {
    CHECK(contains(e.what(), "The stream from the server " + server.url() + " broke: "));
  }
  CHECK(body == "{\"partial");
}

TEST_CASE("CurlTransport::stream: an error answer's body is returned, never given to the sink") {
  TlsServer server;
  RestConfig c;
  c.server = server.url();
  c.ca_pem = server.ca_pem();
  CurlTransport t(c);
  std::string seen;
  bool head = false;
  const HttpResponse r = t.stream(
      request("GET", "/stream/forbidden"),
      [&](std::string_view chunk) {
        seen.append(chunk);
        return true;
      },
      [&](const HttpResponse&) { head = true; });
  CHECK(r.status == 403);
  CHECK(contains(r.body, "\"reason\":\"Forbidden\""));
  CHECK(seen.empty());
  CHECK_FALSE(head);
}

TEST_CASE("CurlTransport::stream: request-timeout bounds the wait for the answer's headers") {
  int port = 0;
  const int fd = mindie::test::listen_loopback(false, port);  // accepts connections in the kernel, never answers
  RestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.request_timeout = std::chrono::milliseconds(300);
  CurlTransport t(c);
  int idle = 0;
  CHECK_THROWS_WITH_AS(t.stream(request("GET", "/api/v1/pods?watch=true"),
                                [&](std::string_view) {
                                  ++idle;
                                  return true;
                                }),
                       doctest::Contains(
                           ("Unable to connect to the server " + c.server + ": no answer within 300 ms").c_str()),
                       TransportError);
  close(fd);
}

TEST_CASE("CurlTransport::stream: the sink can stop a stream still waiting for its answer") {
  int port = 0;
  const int fd = mindie::test::listen_loopback(false, port);
  RestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  CurlTransport t(c);  // no request timeout: only the sink can end this
  int idle = 0;
  const HttpResponse r = t.stream(request("GET", "/api/v1/pods?watch=true"), [&](std::string_view chunk) {
    CHECK(chunk.empty());
    return ++idle < 2;
  });
  CHECK(r.aborted);
  CHECK(r.status == 0);
  close(fd);
}

TEST_CASE("LoggingTransport::stream -v=6: status when the headers arrive and again when the stream ends") {
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 6, log);
  inner.stream_reply({"{\"type\":\"ADDED\"}\n"});
  std::string body;
  bool head = false;
  const HttpResponse r = t.stream(
      request("GET", "/api/v1/namespaces/ns/pods?watch=true"),
      [&](std::string_view chunk) {
        // The "Response" line is already out when the first piece arrives.
        CHECK(contains(log.str(), "\"Response\" verb=\"GET\""));
        body.append(chunk);
        return true;
      },
      [&](const HttpResponse& h) { head = h.status == 200; });
  CHECK(r.status == 200);
  CHECK(head);  // the caller's observer still hears of the head
  CHECK(body == "{\"type\":\"ADDED\"}\n");
  const auto lines = lines_of(log.str());
  REQUIRE(lines.size() == 2);
  CHECK(contains(lines[0],
                 "] \"Response\" verb=\"GET\" "
                 "url=\"https://fake.example:6443/api/v1/namespaces/ns/pods?watch=true\" "
                 "status=\"200 OK\" milliseconds="));
  CHECK(contains(lines[1],
                 "] \"Stream ended\" verb=\"GET\" "
                 "url=\"https://fake.example:6443/api/v1/namespaces/ns/pods?watch=true\" "
                 "status=\"200 OK\" milliseconds="));
  CHECK_FALSE(contains(log.str(), "ADDED"));  // bodies only from -v=8

  SUBCASE("a stream stopped by the caller says so") {
    inner.stream_reply({}, FakeTransport::StreamEnd::Idle);
    CHECK(t.stream(request("GET", "/w"), [](std::string_view) { return false; }).aborted);
    CHECK(contains(lines_of(log.str()).back(),
                   "\"Stream ended\" verb=\"GET\" url=\"https://fake.example:6443/w\" "
                   "status=\"200 OK\" milliseconds="));
    CHECK(contains(lines_of(log.str()).back(), " aborted=true"));
  }
  SUBCASE("an error answer is logged as send() logs it") {
    inner.reply(403, "denied");
    CHECK(t.stream(request("GET", "/w"), [](std::string_view) { return true; }).status == 403);
    CHECK(contains(lines_of(log.str()).back(),
                   "\"Response\" verb=\"GET\" url=\"https://fake.example:6443/w\" "
                   "status=\"403 Forbidden\""));
    CHECK(lines_of(log.str()).size() == 3);
  }
  SUBCASE("a broken stream is logged and rethrown") {
    inner.stream_reply({"{\"a\":"}, FakeTransport::StreamEnd::Break, "The stream from the server x broke: reset");
    CHECK_THROWS_AS(t.stream(request("GET", "/w"), [](std::string_view) { return true; }), TransportError);
    CHECK(contains(lines_of(log.str()).back(), "status=\"\" milliseconds="));
    CHECK(contains(lines_of(log.str()).back(), "error=\"The stream from the server x broke: reset\""));
  }
}

TEST_CASE("LoggingTransport::stream -v=8: one body line per event, redacted like send()'s bodies") {
  // A Secret's data in an event: whatever send() would mask in a body is masked in a streamed line too.
  const std::string secret =
      R"({"type":"MODIFIED","object":{"kind":"Secret","metadata":{"name":"s"},)"
      R"("stringData":{"auth":"Authorization: Bearer sekrit-token-123"},"data":{"basic":"Basic dXNlcjpwYXNz"}}})";
  const std::string added = R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p"}}})";
  FakeTransport inner;
  std::ostringstream log;
  LoggingTransport t(inner, 8, log);
  // Split inside both lines, two lines in one piece, and a last line without its newline.
  inner.stream_reply(
      {secret.substr(0, 40), secret.substr(40) + "\n" + added.substr(0, 10), added.substr(10) + "\n" + added});
  std::string body;
  t.stream(request("GET", "/api/v1/secrets?watch=true"), [&](std::string_view chunk) {
    body.append(chunk);
    return true;
  });
  CHECK(body == secret + "\n" + added + "\n" + added);  // the caller gets the bytes untouched
  const std::string out = log.str();
  CHECK_FALSE(contains(out, "sekrit-token-123"));
  CHECK_FALSE(contains(out, "dXNlcjpwYXNz"));

  // send() of the same body as a whole logs the same masked text.
  FakeTransport plain;
  std::ostringstream send_log;
  LoggingTransport s(plain, 8, send_log);
  plain.reply(200, secret);
  s.send(request("GET", "/api/v1/secrets/s"));
  std::string send_body_line;
  for (const auto& line : lines_of(send_log.str()))
    if (contains(line, "\"Response Body\"")) send_body_line = line.substr(line.find("\"Response Body\""));
  REQUIRE_FALSE(send_body_line.empty());
  CHECK(contains(send_body_line, "Bearer <masked>"));
  std::vector<std::string> body_lines;
  for (const auto& line : lines_of(out))
    if (contains(line, "\"Response Body\"")) body_lines.push_back(line.substr(line.find("\"Response Body\"")));
  REQUIRE(body_lines.size() == 3);
  CHECK(body_lines[0] == send_body_line);
  CHECK(contains(body_lines[1], R"(\"kind\":\"Pod\")"));
  CHECK(body_lines[1] == body_lines[2]);
  CHECK(contains(out, "\"Response Headers\" content-type=\"application/json\""));
}

TEST_CASE("LoggingTransport: transports on several threads never interleave log lines") {
  std::ostringstream log;
  std::vector<std::unique_ptr<FakeTransport>> inners;
  std::vector<std::unique_ptr<LoggingTransport>> loggers;
  for (int i = 0; i < 4; ++i) {
    inners.push_back(std::make_unique<FakeTransport>());
    loggers.push_back(std::make_unique<LoggingTransport>(*inners.back(), 8, log));
    for (int k = 0; k < 50; ++k) inners.back()->stream_reply({std::string(100, static_cast<char>('a' + i)) + "\n"});
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) loggers[i]->stream(request("GET", "/w"), [](std::string_view) { return true; });
    });
  }
  for (auto& th : threads) th.join();
  const auto lines = lines_of(log.str());
  CHECK(lines.size() == 4 * 50 * 5);  // Request Headers, Response, Response Headers, Response Body, Stream ended
  for (const auto& line : lines) {
    CHECK(line.rfind("I", 0) == 0);
    if (contains(line, "\"Response Body\"")) {
      const char c = line[line.find("body=\"") + 6];
      CHECK(contains(line, "body=\"" + std::string(100, c) + "\""));
    }
  }
}
