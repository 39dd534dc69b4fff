// Loopback servers for connection tests: a scripted plain-HTTP server, an HTTPS server with fresh
// certificates, a minimal HTTP CONNECT proxy and a minimal SOCKS5 proxy. Every wait is bounded by poll timeouts;
// nothing sleeps.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/tls.h"

namespace mindie::test {

/// A listening loopback TCP socket (127.0.0.1 or ::1) on a free port.
inline int listen_loopback(bool ipv6, int& port) {
  const int fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  }
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&storage), len) == 0);
  REQUIRE(listen(fd, 8) == 0);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &len) == 0);
  port = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  return fd;
}

/// Reads into `buffer` once, waiting at most 10 s; false on timeout, EOF or error.
inline bool read_some(int fd, std::string& buffer) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return false;
  char chunk[4096];
  const ssize_t n = read(fd, chunk, sizeof chunk);
  if (n <= 0) return false;
  buffer.append(chunk, static_cast<std::size_t>(n));
  return true;
}

/// Copies bytes both ways between two connected sockets until either side closes or 10 s pass without traffic.
inline void relay(int a, int b) {
  pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  char buf[16384];
  while (poll(fds, 2, 10000) > 0) {
    bool closed = false;
    for (int i = 0; i < 2 && !closed; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      closed = n <= 0 || write(fds[1 - i].fd, buf, static_cast<std::size_t>(n)) != n;
    }
    if (closed) return;
  }
}

/// Plain HTTP on loopback answering requests with `answers` (status, body) in order, over as many connections as
/// the client opens, then stops. The raw requests (head and body) are recorded.
class ScriptedHttpServer {
 public:
  explicit ScriptedHttpServer(std::vector<std::pair<int, std::string>> answers, bool ipv6 = false)
      : ipv6_(ipv6), answers_(std::move(answers)) {
    listen_fd_ = listen_loopback(ipv6, port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedHttpServer() {
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }
  std::string url() const {
    return std::string("http://") + (ipv6_ ? "[::1]" : "127.0.0.1") + ":" + std::to_string(port_);
  }
  /// Waits until every answer was given (or the server gave up) and returns the requests read.
  std::vector<std::string> take_requests() {
    thread_.join();
    return std::move(requests_);
  }

 private:
  void serve() {
    std::size_t next = 0;
    while (next < answers_.size()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) return;
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::string buffer;
      while (next < answers_.size()) {
        std::size_t end;
        bool ok = true;
        while (ok && (end = buffer.find("\r\n\r\n")) == std::string::npos) ok = read_some(fd, buffer);
        if (!ok) break;
        std::size_t length = 0;
        if (const auto cl = buffer.find("Content-Length: "); cl != std::string::npos && cl < end)
          length = std::stoul(buffer.substr(cl + 16));
        while (ok && buffer.size() < end + 4 + length) ok = read_some(fd, buffer);
        if (!ok) break;
        requests_.push_back(buffer.substr(0, end + 4 + length));
        buffer.erase(0, end + 4 + length);
        const auto& [status, body] = answers_[next++];
        const std::string reply = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n" +
                                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        if (write(fd, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size())) break;
      }
      close(fd);
    }
  }
  bool ipv6_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::pair<int, std::string>> answers_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

/// HTTPS on loopback with a fresh CA (server certificate for 127.0.0.1, ::1 and localhost). Answers every
/// GET with 200 {"ok":true} and records the Authorization headers it saw, except the chunked streams:
/// - /stream/pieces: "piece-1\n", then each further piece ("piece-2\n", "piece-3\n") only after advance() was
///   called once more, then the end of the body — so a client can prove it saw a piece before the next was sent;
/// - /stream/break: "{\"partial" and then the connection closes without the body's end;
/// - /stream/idle: the headers, then nothing until release() (or the destructor);
/// - /stream/forbidden: 403 with a Status body.
/// Every wait of the server is bounded (20 s), so a failing test cannot hang it.
class TlsServer {
 public:
  explicit TlsServer(bool ipv6 = false)
      : tls_(generate_tls()), server_(tls_.server_cert.get(), tls_.server_key.get()), ipv6_(ipv6) {
    REQUIRE(server_.is_valid());
    server_.Get("/stream/pieces", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json",
                                       [this, sent = 0](std::size_t, httplib::DataSink& sink) mutable {
                                         if (sent == 3 || !wait_for_gate(sent)) {
                                           sink.done();
                                           return true;
                                         }
                                         const std::string piece = "piece-" + std::to_string(++sent) + "\n";
                                         return sink.write(piece.data(), piece.size());
                                       });
    });
    server_.Get("/stream/break", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [sent = false](std::size_t,
                                                                          httplib::DataSink& sink) mutable {
        if (sent) return false;  // abandons the response mid-body: the connection closes without the last chunk
        sent = true;
        return sink.write("{\"partial", 9);
      });
    });
    server_.Get("/stream/idle", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [this](std::size_t, httplib::DataSink& sink) {
        std::unique_lock lock(mu_);
        gate_cv_.wait_for(lock, std::chrono::seconds(20), [this] { return released_; });
        sink.done();
        return true;
      });
    });
    server_.Get("/stream/forbidden", [](const httplib::Request&, httplib::Response& res) {
      res.status = 403;
      res.set_content(R"({"kind":"Status","status":"Failure","reason":"Forbidden","message":"no","code":403})",
                      "application/json");
    });
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      authorizations_.push_back(req.get_header_value("Authorization"));
      res.set_content("{\"ok\":true}", "application/json");
    });
    port_ = server_.bind_to_any_port(ipv6 ? "::1" : "127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the listen loop runs: wait (bounded) for it, or a quick destructor would hang.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    REQUIRE(server_.is_running());
  }
  ~TlsServer() {
    release();
    server_.stop();
    thread_.join();
  }
  /// Lets /stream/pieces send its next piece.
  void advance() {
    std::lock_guard lock(mu_);
    ++allowed_;
    gate_cv_.notify_all();
  }
  /// Ends every waiting stream.
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    gate_cv_.notify_all();
  }
  std::string url() const {
    return std::string("https://") + (ipv6_ ? "[::1]" : "127.0.0.1") + ":" + std::to_string(port_);
  }
  int port() const { return port_; }
  std::string ca_pem() const { return tls_.ca_pem(); }
  std::vector<std::string> authorizations() {
    std::lock_guard lock(mu_);
    return authorizations_;
  }

 private:
  // True when piece `sent` + 1 may go out (the first always may); false when released or after 20 s.
  bool wait_for_gate(int sent) {
    std::unique_lock lock(mu_);
    return gate_cv_.wait_for(lock, std::chrono::seconds(20), [&] { return released_ || allowed_ >= sent; }) &&
           !released_;
  }

  TlsMaterial tls_;
  httplib::SSLServer server_;
  bool ipv6_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable gate_cv_;
  int allowed_ = 0;
  bool released_ = false;
  std::vector<std::string> authorizations_;
};

/// A one-connection HTTP CONNECT proxy on 127.0.0.1: reads "CONNECT host:port", connects to that IPv4 address,
/// answers 200 and relays bytes both ways until either side closes. Records the CONNECT request line.
class ConnectProxy {
 public:
  ConnectProxy() {
    listen_fd_ = listen_loopback(false, port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~ConnectProxy() {
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Waits until the relayed connection ended and returns the CONNECT request line ("" when none came).
  std::string take_connect_line() {
    thread_.join();
    return connect_line_;
  }

 private:
  void serve() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) return;
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos)
      if (!read_some(client, head)) return (void)close(client);
    connect_line_ = head.substr(0, head.find("\r\n"));
    const auto space = connect_line_.find(' ');
    const std::string target = connect_line_.substr(space + 1, connect_line_.find(' ', space + 1) - space - 1);
    const auto colon = target.rfind(':');
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    const int upstream = socket(AF_INET, SOCK_STREAM, 0);
    if (connect_line_.rfind("CONNECT ", 0) != 0 ||
        inet_pton(AF_INET, target.substr(0, colon).c_str(), &addr.sin_addr) != 1 ||
        connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const std::string refuse = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
      (void)!write(client, refuse.data(), refuse.size());
      close(upstream);
      close(client);
      return;
    }
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    (void)!write(client, ok.data(), ok.size());
    relay(client, upstream);
    close(upstream);
    close(client);
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::string connect_line_;
  std::thread thread_;
};

/// A one-connection SOCKS5 proxy (RFC 1928) on 127.0.0.1: offers only "no authentication", accepts only CONNECT,
/// with an IPv4 (ATYP 1), domain-name (ATYP 3) or IPv6 (ATYP 4) destination. A domain name is resolved by the
/// proxy itself from `hosts` (name -> IP literal) and nowhere else, so an unlisted name is "host unreachable".
/// Records what it was asked for, answers success and relays bytes both ways until either side closes.
class Socks5Proxy {
 public:
  struct Request {
    int atyp = 0;      // 0: no CONNECT request arrived
    std::string host;  // the domain name as sent, or the IP address as text
    int port = 0;
  };
  explicit Socks5Proxy(std::map<std::string, std::string> hosts = {}) : hosts_(std::move(hosts)) {
    listen_fd_ = listen_loopback(false, port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~Socks5Proxy() {
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }
  /// proxy-url for this proxy with `scheme` (socks5 or socks5h).
  std::string url(const std::string& scheme = "socks5") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }
  /// Waits until the relayed connection ended (or the proxy gave up) and returns the CONNECT request it read.
  Request take_request() {
    thread_.join();
    return request_;
  }

 private:
  // Reads until `buffer` holds at least `n` bytes.
  static bool read_exactly(int fd, std::string& buffer, std::size_t n) {
    while (buffer.size() < n)
      if (!read_some(fd, buffer)) return false;
    return true;
  }
  static void reply(int fd, unsigned char code) {
    const unsigned char r[10] = {5, code, 0, 1, 0, 0, 0, 0, 0, 0};  // BND.ADDR 0.0.0.0:0
    (void)!write(fd, r, sizeof r);
  }
  // Connects to an IP literal (v4 or v6); -1 on failure.
  static int connect_ip(const std::string& ip, int port) {
    sockaddr_storage storage{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<uint16_t>(port));
      len = sizeof *v4;
    } else if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<uint16_t>(port));
      len = sizeof *v6;
    } else {
      return -1;
    }
    const int fd = socket(storage.ss_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&storage), len) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
  }
  void serve() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) return;
    handle(client);
    close(client);
  }
  void handle(int client) {
    std::string in;
    const auto byte = [&in](std::size_t i) { return static_cast<unsigned char>(in[i]); };
    // Greeting: VER NMETHODS METHODS...; only method 0 (no authentication) is acceptable.
    if (!read_exactly(client, in, 2) || byte(0) != 5 || !read_exactly(client, in, 2 + byte(1))) return;
    const bool no_auth = in.substr(2, byte(1)).find('\0') != std::string::npos;
    const unsigned char method[2] = {5, static_cast<unsigned char>(no_auth ? 0 : 0xff)};
    if (write(client, method, sizeof method) != 2 || !no_auth) return;
    in.erase(0, 2 + byte(1));
    // Request: VER CMD RSV ATYP DST.ADDR DST.PORT.
    if (!read_exactly(client, in, 5) || byte(0) != 5) return;
    const int atyp = byte(3);
    std::size_t addr_len = atyp == 1 ? 4 : atyp == 4 ? 16 : atyp == 3 ? 1 + byte(4) : 0;
    if (addr_len == 0) return reply(client, 8);  // address type not supported
    if (!read_exactly(client, in, 4 + addr_len + 2)) return;
    Request r;
    r.atyp = atyp;
    r.port = byte(4 + addr_len) << 8 | byte(5 + addr_len);
    std::string ip;
    if (atyp == 3) {
      r.host = in.substr(5, byte(4));
      if (const auto it = hosts_.find(r.host); it != hosts_.end()) ip = it->second;
    } else {
      char text[INET6_ADDRSTRLEN] = {};
      inet_ntop(atyp == 1 ? AF_INET : AF_INET6, in.data() + 4, text, sizeof text);
      r.host = ip = text;
    }
    request_ = r;
    if (byte(1) != 1) return reply(client, 7);  // command not supported: CONNECT only
    const int upstream = ip.empty() ? -1 : connect_ip(ip, r.port);
    if (upstream < 0) return reply(client, 4);  // host unreachable
    reply(client, 0);
    in.erase(0, 4 + addr_len + 2);
    if (in.empty() || write(upstream, in.data(), in.size()) == static_cast<ssize_t>(in.size())) relay(client, upstream);
    close(upstream);
  }
  std::map<std::string, std::string> hosts_;
  int listen_fd_ = -1;
  int port_ = 0;
  Request request_;
  std::thread thread_;
};

}  // namespace mindie::test
