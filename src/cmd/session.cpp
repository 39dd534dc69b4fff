// cmd::Session and cmd::OfflineTransport (common.h): the connection to the API server.
#include <unistd.h>

#include <ostream>

#include "cmd/common.h"
#include "kube/curl_transport.h"
#include "kube/deadline_transport.h"
#include "kube/logging_transport.h"
#include "kube/retrying_transport.h"

namespace mindie::cmd {

namespace {

// The client's transport chain, owned as one: libcurl below, -v logging above it, retries on top so that -v=6
// shows every attempt.
class TransportChain : public kube::HttpTransport {
 public:
  TransportChain(const kube::RestConfig& rest, int verbosity, std::ostream& log)
      : curl_(std::make_unique<kube::CurlTransport>(rest)) {
    kube::HttpTransport* top = curl_.get();
    if (verbosity >= 6) {
      logging_ = std::make_unique<kube::LoggingTransport>(*curl_, verbosity, log);
      top = logging_.get();
    }
    kube::RetryPolicy policy;
    policy.budget = rest.request_timeout;
    policy.budget_name = rest.request_timeout_name;
    // On a terminal a retry says so, so that a slow command is not mistaken for a hung one; a log or a pipe
    // gets the final outcome only (-v=6 shows every attempt).
    if (isatty(STDERR_FILENO) != 0)
      policy.notice = [out = &log](const std::string& line) { *out << line << std::endl; };
    retrying_ = std::make_unique<kube::RetryingTransport>(*top, std::move(policy));
  }
  /// From now on every request ends by `deadline` (Session::set_deadline).
  void set_deadline(std::chrono::steady_clock::time_point deadline, const std::string& what) {
    deadline_ = std::make_unique<kube::DeadlineTransport>(*retrying_, deadline, what);
    deadline_at_ = deadline;
  }
  void bound_until(std::chrono::steady_clock::time_point deadline, const std::string& what) override {
    // Only ever earlier: a change's bound after a failure never extends a --timeout already set.
    if (deadline_ && deadline_at_ <= deadline) return;
    if (!bounded_) {  // what lift_bound() puts back
      saved_ = std::move(deadline_);
      saved_at_ = deadline_at_;
      bounded_ = true;
    }
    set_deadline(deadline, what);
  }
  void lift_bound() override {
    if (!bounded_) return;
    deadline_ = std::move(saved_);
    deadline_at_ = saved_at_;
    bounded_ = false;
  }
  kube::HttpResponse send(const kube::HttpRequest& req) override { return top().send(req); }
  using kube::HttpTransport::stream;
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override {
    return top().stream(req, sink, on_head);
  }
  std::string server() const override { return retrying_->server(); }

 private:
  kube::HttpTransport& top() { return deadline_ ? *deadline_ : *retrying_; }
  std::unique_ptr<kube::HttpTransport> curl_;
  std::unique_ptr<kube::HttpTransport> logging_;
  std::unique_ptr<kube::HttpTransport> retrying_;
  std::unique_ptr<kube::HttpTransport> deadline_;        // null: no deadline
  std::chrono::steady_clock::time_point deadline_at_{};  // deadline_'s
  bool bounded_ = false;                                 // bound_until() set deadline_; saved_ is what it replaced
  std::unique_ptr<kube::HttpTransport> saved_;
  std::chrono::steady_clock::time_point saved_at_{};
};

}  // namespace

Session::Session(const GlobalFlags& flags, std::ostream& log, std::chrono::milliseconds max_request_timeout)
    : verbosity_(flags.verbosity), log_(log), rest_(kube::load_rest_config(flags.kube)) {
  if (max_request_timeout.count() > 0 &&
      (rest_.request_timeout.count() == 0 || rest_.request_timeout > max_request_timeout)) {
    rest_.request_timeout = max_request_timeout;
    rest_.request_timeout_name = "the " + std::to_string(max_request_timeout.count() / 1000) +
                                 "s bound on each request of a command holding the namespace lock";
  }
  transport_ = std::make_unique<TransportChain>(rest_, verbosity_, log_);
  client_ = std::make_unique<kube::Client>(*transport_);
}

std::unique_ptr<kube::HttpTransport> Session::new_transport() const {
  auto chain = std::make_unique<TransportChain>(rest_, verbosity_, log_);
  if (deadline_) chain->set_deadline(deadline_->first, deadline_->second);
  return chain;
}

void Session::set_deadline(std::chrono::steady_clock::time_point deadline, const std::string& what) {
  deadline_.emplace(deadline, what);
  static_cast<TransportChain&>(*transport_).set_deadline(deadline, what);
}

Session::~Session() = default;

kube::HttpResponse OfflineTransport::send(const kube::HttpRequest& req) {
  throw std::logic_error("--dry-run=client must not contact the server (attempted " + req.method + " " + req.path +
                         ")");
}

kube::HttpResponse OfflineTransport::stream(const kube::HttpRequest& req, const kube::StreamSink&,
                                            const kube::StreamHeadObserver&) {
  return send(req);  // throws the same logic_error
}

}  // namespace mindie::cmd
