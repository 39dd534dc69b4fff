// mindie-sandbox: an in-memory, HTTPS Kubernetes API server for kubectl-mindie's end-to-end tests.
//
//   mindie-sandbox --listen 127.0.0.1:0 --kubeconfig-out FILE [--request-log FILE] [--no-crd]
//                  [--simulate-operator] [--crd FILE]... [--namespace NS]...
//                  [--fault METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]]... [--pod-state ROLE[:INSTANCE]=STATE]...
//                  [--bookmark-interval SECONDS] [--min-request-timeout SECONDS]
//
// KIND is an HTTP error code, `hang` (no answer until the client gives up, at most 5 s) or `drop` (the
// connection is closed without an answer); see Fault in api_server.h. Every collection can be watched
// (?watch=1, see watch.h); the POST /sandbox/{close-watches,compact,pod-state} control endpoints are described at
// ApiServer::handle and in kUsage.
//
// Prints `ready https://127.0.0.1:PORT` once the kubeconfig is written and the socket accepts connections; runs
// until SIGTERM/SIGINT and exits 0.
#include <httplib.h>
#include <openssl/rand.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api_server.h"
#include "base64.h"
#include "support/openapi_schema.h"
#include "tls.h"

namespace {

using mindie::sandbox::ApiServer;
using nlohmann::json;

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string kubeconfig_out;
  std::string request_log;
  bool no_crd = false;
  std::vector<std::string> crds;
  mindie::sandbox::ServerOptions server;
};

constexpr const char* kUsage =
    "usage: mindie-sandbox --listen HOST:PORT|[IPV6]:PORT --kubeconfig-out FILE [--request-log FILE] [--no-crd]\n"
    "                      [--simulate-operator] [--crd FILE]... [--namespace NS]...\n"
    "                      [--fault METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]]... [--pod-state ROLE[:INSTANCE]=STATE]...\n"
    "                      [--bookmark-interval SECONDS] [--min-request-timeout SECONDS]\n"
    "KIND: an HTTP code 400..599, hang or drop; METHOD * matches any method\n"
    "--pod-state: simulated pods of ROLE (* = every role; INSTANCE: only that instance) start in STATE, one of\n"
    "  Ready, NotReady, ContainerCreating, Unschedulable, ImagePullBackOff, CrashLoopBackOff, OOMKilled, Terminating\n"
    "  (the last matching rule wins)\n"
    "--bookmark-interval: seconds between BOOKMARK events of watches with allowWatchBookmarks=true (default 1)\n"
    "--min-request-timeout: a watch without timeoutSeconds ends after [T, 2T) seconds (default 180)\n"
    "Control endpoints (POST, the kubeconfig's bearer token; not logged by --request-log, never faulted):\n"
    "  /sandbox/close-watches  drop every open watch connection without ending its chunked body\n"
    "  /sandbox/compact        drop the change history: watches from an older resourceVersion get ERROR 410\n"
    "  /sandbox/pod-state      {\"namespace\":NS, \"pod\":NAME, \"state\":STATE} or\n"
    "                          {\"namespace\":NS, \"role\":ROLE, \"instance\":K (optional), \"state\":STATE}:\n"
    "                          set pods' state and record their Events; answers {\"pods\":[...]}, 404 if none\n";

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "mindie-sandbox: " << error << "\n" << kUsage;
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (a == "--listen") {
      const std::string v = value();
      // HOST:PORT, or [IPV6]:PORT with the address in brackets.
      const auto close = v.starts_with('[') ? v.find(']') : std::string::npos;
      const auto colon = v.starts_with('[') ? (close == std::string::npos ? close : close + 1) : v.rfind(':');
      if (colon == std::string::npos || colon >= v.size() || v[colon] != ':') usage("--listen expects HOST:PORT");
      o.host = v.starts_with('[') ? v.substr(1, close - 1) : v.substr(0, colon);
      try {
        o.port = std::stoi(v.substr(colon + 1));
      } catch (const std::exception&) {
        usage("--listen expects HOST:PORT");
      }
    } else if (a == "--kubeconfig-out") {
      o.kubeconfig_out = value();
    } else if (a == "--request-log") {
      o.request_log = value();
    } else if (a == "--no-crd") {
      o.no_crd = true;
    } else if (a == "--simulate-operator") {
      o.server.simulate_operator = true;
    } else if (a == "--crd") {
      o.crds.push_back(value());
    } else if (a == "--namespace") {
      o.server.namespaces.push_back(value());
    } else if (a == "--pod-state") {
      try {
        o.server.pod_states.push_back(mindie::sandbox::parse_pod_state_rule(value()));
      } catch (const std::exception& e) {
        usage(std::string("--pod-state: ") + e.what());
      }
    } else if (a == "--bookmark-interval") {
      const std::string v = value();
      double seconds = 0;
      try {
        seconds = std::stod(v);
      } catch (const std::exception&) {
      }
      if (!(seconds >= 0.01 && seconds <= 3600)) usage("--bookmark-interval expects seconds (0.01..3600)");
      o.server.bookmark_interval = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    } else if (a == "--min-request-timeout") {
      const std::string v = value();
      if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) == 0)
        usage("--min-request-timeout expects a number of seconds > 0");
      o.server.min_request_timeout = std::chrono::seconds(std::stoi(v));
    } else if (a == "--fault") {
      try {
        o.server.faults.push_back(mindie::sandbox::parse_fault(value()));
      } catch (const std::exception& e) {
        usage(std::string("--fault: ") + e.what());
      }
    } else {
      usage("unknown argument " + a);
    }
  }
  if (o.kubeconfig_out.empty()) usage("--kubeconfig-out is required");
  return o;
}

std::string random_token() {
  unsigned char raw[24];
  if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("RAND_bytes failed");
  std::string hex;
  for (unsigned char c : raw) {
    hex.push_back("0123456789abcdef"[c >> 4]);
    hex.push_back("0123456789abcdef"[c & 15]);
  }
  return hex;
}

// Written to a temporary file and renamed, so a reader never sees half a kubeconfig.
void write_kubeconfig(const std::string& path, const std::string& server, const std::string& ca_pem,
                      const std::string& token) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: sandbox\n"
           "  cluster:\n"
           "    server: " << server << "\n"
           "    certificate-authority-data: " << mindie::sandbox::base64_encode(ca_pem) << "\n"
           "users:\n"
           "- name: sandbox\n"
           "  user:\n"
           "    token: " << token << "\n"
           "contexts:\n"
           "- name: sandbox\n"
           "  context:\n"
           "    cluster: sandbox\n"
           "    user: sandbox\n"
           "    namespace: default\n"
           "current-context: sandbox\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

// A hang fault holds the response at most this long: longer than the 1 s --request-timeout the e2e tests use, short
// enough that a client without a timeout sees a dropped connection instead of waiting forever.
constexpr int kHangLimitMs = 5000;

// The socket of the connection `req` arrived on. httplib hands handlers no socket, so the descriptors of the
// process are searched for the one whose peer is the request's remote address and port; -1 if none matches.
int connection_socket(const httplib::Request& req) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (entry->d_name[0] == '.' || fd == dirfd(dir)) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    char host[INET6_ADDRSTRLEN] = {};
    int port = -1;
    if (peer.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
      inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
      port = ntohs(in->sin_port);
    } else if (peer.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
      inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
      port = ntohs(in6->sin6_port);
    }
    if (port == req.remote_port && req.remote_addr == host) {
      found = fd;
      break;
    }
  }
  closedir(dir);
  return found;
}

// Carries out a hang or drop fault on the connection of `req`. shutdown() rather than close(): the descriptor stays
// httplib's, which closes it as usual; its attempt to write the response fails on the shut socket.
void disrupt(const httplib::Request& req, mindie::sandbox::Disruption how) {
  const int fd = connection_socket(req);
  if (fd < 0) return;
  if (how == mindie::sandbox::Disruption::Hang) {
    // Until the client closes its end (readable EOF, or its TLS close_notify) or the limit passes.
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    while (poll(&p, 1, kHangLimitMs) < 0 && errno == EINTR) {
    }
  }
  shutdown(fd, SHUT_RDWR);
}

// Streams a watch as kube-apiserver does: chunked application/json, one event per line. The watch's deadline ends it
// with the final chunk; close-watches and shutdown cut the connection without it, as a dropped connection would.
void stream_watch(const httplib::Request& req, httplib::Response& res, std::shared_ptr<mindie::sandbox::Watch> watch) {
  using mindie::sandbox::Watch;
  const int fd = connection_socket(req);
  res.set_chunked_content_provider(
      "application/json",
      [watch, fd](size_t, httplib::DataSink& sink) {
        std::string chunk;
        const Watch::Step step = watch->next(chunk, std::chrono::milliseconds(250));
        if (step == Watch::Step::Abort) {
          // No TLS close_notify and no final chunk: the client sees its transfer broken off.
          if (fd >= 0) shutdown(fd, SHUT_RDWR);
          return false;
        }
        if (!chunk.empty() && !sink.write(chunk.data(), chunk.size())) return false;
        if (step == Watch::Step::End) {
          sink.done();
          return true;
        }
        // A client that hangs up ends its watch (Go's server learns it from its background read).
        if (fd >= 0) {
          pollfd p{fd, POLLRDHUP, 0};
          if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return false;
        }
        return true;
      },
      [watch](bool) { watch->abandon(); });
}

// httplib's default pool has max(8, cores - 1) threads and an open watch holds one for its whole life, so a handful
// of watches would starve every other request. This pool grows a thread whenever a connection finds none idle.
class GrowingPool : public httplib::TaskQueue {
 public:
  explicit GrowingPool(std::size_t limit) : limit_(limit) {}
  ~GrowingPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < limit_) threads_.emplace_back([this] { work(); });
    cv_.notify_one();
  }

  // Called once the accept loop has ended, so nothing enqueues any more.
  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    std::unique_lock lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      auto fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const std::size_t limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stop_ = false;
};

mindie::sandbox::HttpRequest to_request(const httplib::Request& r) {
  mindie::sandbox::HttpRequest out;
  out.method = r.method;
  out.path = r.path;
  out.params.insert(r.params.begin(), r.params.end());
  out.content_type = r.get_header_value("Content-Type");
  out.authorization = r.get_header_value("Authorization");
  out.accept = r.get_header_value("Accept");
  out.body = r.body;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = parse_args(argc, argv);

  // Signals are taken synchronously by one thread; block them before any other thread exists.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    mindie::sandbox::Registry registry(!opts.no_crd);
    for (const auto& file : opts.crds)
      for (const auto& crd : mindie::testing::load_crd_schemas(file)) {
        if (opts.no_crd && crd.group == "mindcluster.huawei.com") continue;
        registry.add_crd(crd.group, crd.version, crd.kind, crd.plural, crd.namespaced, crd.status_subresource,
                         crd.schema);
      }
    opts.server.token = random_token();
    const std::string token = opts.server.token;
    ApiServer api(std::move(registry), std::move(opts.server));

    const mindie::sandbox::TlsMaterial tls = mindie::sandbox::generate_tls();
    httplib::SSLServer http(tls.server_cert.get(), tls.server_key.get());
    if (!http.is_valid()) throw std::runtime_error("cannot set up the TLS server");
    // Without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK add ~40 ms to every response
    // (kube-apiserver, written in Go, sets it by default).
    http.set_tcp_nodelay(true);

    std::ofstream request_log;
    std::mutex log_mu;
    if (!opts.request_log.empty()) {
      request_log.open(opts.request_log, std::ios::app);
      if (!request_log) throw std::runtime_error("cannot open " + opts.request_log);
    }
    // The log line is written before the response goes out (for a watch: when it starts), so a client that has its
    // answer (and a test that then reads the log) always finds the request logged.
    const auto log_request = [&](const httplib::Request& req, int status) {
      if (!request_log.is_open()) return;
      const auto q = req.target.find('?');
      const json line = {{"method", req.method},
                         {"path", req.path},
                         {"query", q == std::string::npos ? "" : req.target.substr(q + 1)},
                         {"contentType", req.get_header_value("Content-Type")},
                         {"body", req.body},
                         {"status", status}};
      std::lock_guard lock(log_mu);
      request_log << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
    };

    const auto handler = [&api, &log_request](const httplib::Request& req, httplib::Response& res) {
      const mindie::sandbox::HttpResponse out = api.handle(to_request(req));
      // httplib would compress any JSON with whatever the client accepts (brotli at its slowest setting, seconds
      // for a page of 500 pods); kube-apiserver only gzips responses of at least 128 KiB
      // (responsewriters.defaultGzipThresholdBytes) and never a watch. httplib reads the request's header after
      // this handler, so the header is adjusted to say what kube-apiserver would do.
      auto& headers = const_cast<httplib::Request&>(req).headers;
      const bool gzip = req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
      headers.erase("Accept-Encoding");
      if (gzip && !out.watch && out.body.size() >= 128 * 1024) headers.emplace("Accept-Encoding", "gzip");
      // Control requests are the test's side channel: tests counting API requests must not see them.
      if (req.path.rfind("/sandbox/", 0) != 0) log_request(req, out.status);
      // Outside the API server's lock: a hanging request must not stall the client's retry on a new connection.
      if (out.disruption != mindie::sandbox::Disruption::None) {
        disrupt(req, out.disruption);
        res.status = 500;
        return;
      }
      res.status = out.status;
      for (const auto& [k, v] : out.headers) res.set_header(k, v);
      if (out.watch) stream_watch(req, res, out.watch);
      else res.set_content(out.body, out.content_type);
    };
    http.new_task_queue = [] { return new GrowingPool(1024); };
    for (auto reg : {&httplib::Server::Get, &httplib::Server::Post, &httplib::Server::Put,
                     &httplib::Server::Patch, &httplib::Server::Delete})
      (http.*reg)(".*", handler);

    const int port = opts.port == 0 ? http.bind_to_any_port(opts.host) : opts.port;
    if (port <= 0 || (opts.port != 0 && !http.bind_to_port(opts.host, opts.port)))
      throw std::runtime_error("cannot listen on " + opts.host + ":" + std::to_string(opts.port));
    const std::string url_host = opts.host.find(':') != std::string::npos ? "[" + opts.host + "]" : opts.host;
    const std::string server = "https://" + url_host + ":" + std::to_string(port);
    write_kubeconfig(opts.kubeconfig_out, server, tls.ca_pem(), token);

    std::atomic<bool> signalled{false};
    std::thread stopper([&] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      signalled = true;
      api.shutdown();  // open watches end now instead of at their timeouts
      http.stop();
    });
    // The socket is bound and listening, so connections made after this line queue until the loop accepts them.
    std::cout << "ready " << server << std::endl;
    http.listen_after_bind();
    if (!signalled) {
      std::cerr << "mindie-sandbox: the server loop ended unexpectedly\n";
      kill(getpid(), SIGTERM);  // releases the stopper thread
    }
    stopper.join();
    return signalled ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "mindie-sandbox: " << e.what() << "\n";
    return 1;
  }
}
