#include "cmd/logs_streams.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include "cmd/multi_deployment.h"
#include "mindie/render.h"
#include "mindie/status_report.h"
#include "util/json_path.h"
#include "util/terminal.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

// infer-operator's pod labels (Ascend/mind-cluster component/infer-operator; status_grouping.cpp reads the same).
constexpr const char* kRoleLabel = "infer.huawei.com/instanceset-name";
constexpr const char* kIndexLabel = "infer.huawei.com/instanceset-index";

std::string meta(const json::object& pod, std::initializer_list<std::string_view> path) {
  const json::value v = pod;
  return util::str(util::find(&v, path));
}

}  // namespace

std::string log_selector(const LogTarget& t) {
  std::string selector;
  if (t.plain_deployments) {
    selector = multi_selector(t.workload);
    if (!t.role.empty()) selector += std::string(",") + render::kComponentLabel + "=" + t.role;
    if (t.instance >= 0) selector += std::string(",") + render::kInstanceIndexLabel + "=" + std::to_string(t.instance);
    return selector;
  }
  selector = status::service_selector(t.workload, t.services);
  if (!t.role.empty()) selector += std::string(",") + kRoleLabel + "=" + t.role;
  if (t.instance >= 0) selector += std::string(",") + kIndexLabel + "=" + std::to_string(t.instance);
  return selector;
}

std::string log_role(const json::object& pod, bool plain_deployments) {
  return meta(pod, {"metadata", "labels", plain_deployments ? render::kComponentLabel : kRoleLabel});
}

std::string log_prefix(const json::object& pod, bool plain_deployments) {
  std::string role = log_role(pod, plain_deployments);
  std::string index = meta(pod, {"metadata", "labels", plain_deployments ? render::kInstanceIndexLabel : kIndexLabel});
  if (role.empty()) role = "-";
  if (index.empty()) index = plain_deployments ? "0" : "-";  // status counts controller/coordinator as instance 0
  return "[" + role + "/" + index + "/" + meta(pod, {"metadata", "name"}) + "]";
}

std::string log_container(const json::object& pod) {
  std::string name = meta(pod, {"metadata", "annotations", "kubectl.kubernetes.io/default-container"});
  if (!name.empty()) return name;
  const json::value v = pod;
  const json::value* containers = util::find(&v, {"spec", "containers"});
  if (containers && containers->is_array() && !containers->as_array().empty())
    return util::str(util::find(&containers->as_array().front(), {"name"}));
  return "";
}

namespace {

/// Reads one pod's log, writing each line whole under `mu`; an error is named on `err`. False when it failed.
bool read_one(kube::HttpTransport& transport, const LogTarget& target, const json::object& pod,
              kube::PodLogOptions options, std::mutex& mu, std::ostream& out, std::ostream& err,
              const std::function<bool()>& keep_going) {
  const std::string prefix = log_prefix(pod, target.plain_deployments);
  const std::string name = meta(pod, {"metadata", "name"});
  options.container = log_container(pod);
  try {
    kube::stream_pod_log(
        transport, target.ns, name, options,
        [&](std::string_view line) {
          std::lock_guard lock(mu);
          out << prefix << ' ' << line << '\n' << std::flush;  // whole lines, as they come
        },
        keep_going);
    return true;
  } catch (const std::exception& e) {
    std::lock_guard lock(mu);
    err << "error: pod/" << util::escape_terminal(name) << ": " << e.what() << '\n' << std::flush;
    return false;
  }
}

/// A followed pod's stream on a thread of its own.
struct Stream {
  std::string name;
  std::thread thread;
  std::atomic<bool> done{false};
  bool gone = false;
};

/// The streams of follow_logs, by pod uid (a StatefulSet's pod made again keeps its name, not its uid).
class Follower {
 public:
  Follower(const kube::Informer::TransportFactory& new_transport, const LogTarget& target,
           const kube::PodLogOptions& options, std::size_t max_streams, std::ostream& out, std::ostream& err)
      : new_transport_(new_transport), target_(target), options_(options), max_(max_streams), out_(out), err_(err) {}
  ~Follower() {
    stopping_ = true;
    for (auto& [uid, s] : streams_) s->thread.join();
  }
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  /// Starts the streams of running pods not followed yet and says which followed pods went.
  void sync(const std::vector<json::object>& pods) {
    std::set<std::string> present;
    for (const auto& pod : pods) {
      const std::string uid = meta(pod, {"metadata", "uid"});
      present.insert(uid);
      if (streams_.count(uid) || !meta(pod, {"metadata", "deletionTimestamp"}).empty()) continue;
      const std::string phase = meta(pod, {"status", "phase"});
      if (phase != "Running" && phase != "Succeeded" && phase != "Failed") continue;  // no log before it starts
      start(pod, uid);
    }
    for (auto& [uid, s] : streams_) {
      if (s->gone || present.count(uid)) continue;
      s->gone = true;
      std::lock_guard lock(mu_);
      err_ << "pod/" << util::escape_terminal(s->name) << " is gone\n" << std::flush;
    }
  }

 private:
  void start(const json::object& pod, const std::string& uid) {
    std::size_t open = 0;
    for (const auto& [u, s] : streams_) open += !s->done && !s->gone;
    const std::string name = meta(pod, {"metadata", "name"});
    if (open >= max_) {
      if (refused_.insert(uid).second) {
        std::lock_guard lock(mu_);
        err_ << "warning: not following pod/" << util::escape_terminal(name) << ": " << max_
             << " log streams are open (--max-log-requests)\n"
             << std::flush;
      }
      return;
    }
    auto s = std::make_unique<Stream>();
    s->name = name;
    Stream* raw = s.get();
    s->thread = std::thread([this, raw, pod] {
      auto transport = new_transport_();
      read_one(*transport, target_, pod, options_, mu_, out_, err_, [this] { return !stopping_.load(); });
      raw->done = true;
    });
    streams_.emplace(uid, std::move(s));
  }

  const kube::Informer::TransportFactory& new_transport_;
  const LogTarget& target_;
  kube::PodLogOptions options_;
  std::size_t max_;
  std::ostream& out_;
  std::ostream& err_;
  std::mutex mu_;  // guards out_ and err_: each line is written whole
  std::atomic<bool> stopping_{false};
  std::map<std::string, std::unique_ptr<Stream>> streams_;
  std::set<std::string> refused_;
};

}  // namespace

std::size_t print_logs(const kube::Informer::TransportFactory& new_transport, const LogTarget& target,
                       const std::vector<json::object>& pods, const kube::PodLogOptions& options, std::ostream& out,
                       std::ostream& err) {
  auto transport = new_transport();
  std::mutex mu;
  std::size_t failed = 0;
  for (const auto& pod : pods) failed += !read_one(*transport, target, pod, options, mu, out, err, [] { return true; });
  return failed;
}

void follow_logs(const kube::Informer::TransportFactory& new_transport, const LogTarget& target,
                 const kube::PodLogOptions& options, std::size_t max_streams, std::ostream& out, std::ostream& err) {
  kube::Informer informer(new_transport, {{kube::gvr::kPods, target.ns, log_selector(target), ""}});
  informer.start();
  kube::PodLogOptions follow = options;
  follow.follow = true;
  Follower follower(new_transport, target, follow, max_streams, out, err);
  for (;;) {
    follower.sync(informer.objects(0));
    informer.wait_for_change(std::chrono::steady_clock::now() + std::chrono::seconds(1));
  }
}

}  // namespace mindie::cmd
