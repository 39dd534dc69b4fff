#include "kube/watch.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "kube/retrying_transport.h"

namespace mindie::kube {

namespace {

// No object comes near this (etcd stores at most 1.5 MiB per object); a longer "line" is a server that never
// sends a newline, which must not grow the buffer without end.
constexpr std::size_t kMaxEventLine = 16 * 1024 * 1024;

using Key = std::pair<std::string, std::string>;  // namespace, name

std::string member_string(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

const boost::json::object* metadata_of(const boost::json::object& obj) {
  const auto* md = obj.if_contains("metadata");
  return md != nullptr && md->is_object() ? &md->get_object() : nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::string_view(" \t\r\n").find(s.front()) != std::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && std::string_view(" \t\r\n").find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

// The start of a line from the server, safe to print on one terminal line.
std::string excerpt(std::string_view line) {
  std::string out(line.substr(0, 200));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (line.size() > 200) out += "...";
  return out;
}

[[noreturn]] void malformed(const HttpRequest& req, const std::string& why, std::string_view line) {
  throw std::runtime_error("GET " + req.path.substr(0, req.path.find('?')) +
                           ": the server sent a malformed watch event (" + why + "): \"" + excerpt(line) + "\"");
}

}  // namespace

std::string watch_path(const WatchTarget& target, std::string_view resource_version, long timeout_seconds) {
  std::string p = Client::path(target.gvr, target.ns) + "?watch=true";
  if (!resource_version.empty()) p += "&resourceVersion=" + url_encode(resource_version);
  p += "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout_seconds);
  if (!target.label_selector.empty()) p += "&labelSelector=" + url_encode(target.label_selector);
  if (!target.field_selector.empty()) p += "&fieldSelector=" + url_encode(target.field_selector);
  return p;
}

struct Informer::Target {
  WatchTarget spec;
  std::unique_ptr<HttpTransport> transport;
  std::map<Key, boost::json::object> cache;  // guarded by mu_
  std::string resource_version;              // guarded by mu_
  std::thread thread;
};

Informer::Informer(TransportFactory factory, std::vector<WatchTarget> targets, InformerOptions options)
    : factory_(std::move(factory)), options_(std::move(options)) {
  if (!options_.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    options_.random = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
  for (auto& spec : targets) {
    auto t = std::make_unique<Target>();
    t->spec = std::move(spec);
    targets_.push_back(std::move(t));
  }
}

Informer::~Informer() { stop(); }

void Informer::start() {
  {
    std::lock_guard lock(mu_);
    if (started_) throw std::logic_error("Informer::start() called twice");
    started_ = true;
  }
  for (auto& t : targets_) {
    t->transport = factory_();
    if (!t->transport) throw std::logic_error("Informer: the transport factory returned no transport");
  }
  for (std::size_t i = 0; i < targets_.size(); ++i) relist(i);
  {
    std::lock_guard lock(mu_);
    changed_ = false;  // the caller shows the listed state itself
  }
  for (std::size_t i = 0; i < targets_.size(); ++i) targets_[i]->thread = std::thread([this, i] { run(i); });
}

void Informer::stop() {
  stopping_ = true;
  {
    // Taking the lock orders the flag before any waiter's predicate check, so no wake-up is lost.
    std::lock_guard lock(mu_);
  }
  cv_.notify_all();
  std::lock_guard join_lock(join_mu_);  // two threads calling stop() must not join the same thread
  for (auto& t : targets_)
    if (t->thread.joinable()) t->thread.join();
}

bool Informer::wait_for_change(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  const auto ready = [this] { return changed_ || fatal_ || stopping_.load(); };
  if (deadline == std::chrono::steady_clock::time_point::max()) {
    cv_.wait(lock, ready);
  } else {
    cv_.wait_until(lock, deadline, ready);
  }
  if (fatal_) std::rethrow_exception(fatal_);
  const bool changed = changed_;
  changed_ = false;
  return changed;
}

std::vector<boost::json::object> Informer::objects(std::size_t target) const {
  const Target& t = *targets_.at(target);
  std::lock_guard lock(mu_);
  std::vector<boost::json::object> out;
  out.reserve(t.cache.size());
  for (const auto& [key, obj] : t.cache) out.push_back(obj);
  return out;
}

std::string Informer::resource_version(std::size_t target) const {
  const Target& t = *targets_.at(target);
  std::lock_guard lock(mu_);
  return t.resource_version;
}

void Informer::set_fatal(std::exception_ptr error) {
  {
    std::lock_guard lock(mu_);
    if (!fatal_) fatal_ = std::move(error);
  }
  cv_.notify_all();
}

bool Informer::pause(std::size_t index, std::chrono::milliseconds wait) {
  if (options_.on_backoff) options_.on_backoff(index, wait);
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, wait, [this] { return stopping_.load(); });
  return !stopping_;
}

std::chrono::milliseconds Informer::backoff(int failures) {
  double r;
  {
    std::lock_guard lock(mu_);
    r = std::clamp(options_.random(), 0.0, 1.0);
  }
  const double base = static_cast<double>(options_.initial_backoff.count()) * std::pow(2.0, std::min(failures - 1, 30));
  const double capped = std::min(base * (1.0 + 0.5 * r), static_cast<double>(options_.max_backoff.count()));
  return std::chrono::milliseconds(static_cast<std::int64_t>(capped));
}

void Informer::relist(std::size_t index) {
  Target& t = *targets_[index];
  Client client(*t.transport);
  boost::json::object list;
  try {
    try {
      list = client.list(t.spec.gvr, t.spec.ns, t.spec.label_selector, options_.list_page_size, t.spec.field_selector);
    } catch (const ApiError& e) {
      // A continue token expired between pages (410): list again in one request, as client-go's pager does.
      if (e.code() != 410 || options_.list_page_size <= 0) throw;
      list = client.list(t.spec.gvr, t.spec.ns, t.spec.label_selector, 0, t.spec.field_selector);
    }
  } catch (...) {
    requests_ += client.requests_sent();
    throw;
  }
  requests_ += client.requests_sent();

  std::map<Key, boost::json::object> fresh;
  for (const auto& item : list["items"].as_array()) {
    const auto* obj = item.if_object();
    const auto* md = obj != nullptr ? metadata_of(*obj) : nullptr;
    if (md == nullptr || member_string(*md, "name").empty()) {
      throw std::runtime_error("GET " + Client::path(t.spec.gvr, t.spec.ns) +
                               ": the server listed an item without metadata.name");
    }
    fresh[{member_string(*md, "namespace"), member_string(*md, "name")}] = *obj;
  }
  std::string rv;
  if (const auto* md = metadata_of(list)) rv = member_string(*md, "resourceVersion");
  bool changed;
  {
    std::lock_guard lock(mu_);
    changed = fresh != t.cache;
    t.cache = std::move(fresh);
    t.resource_version = std::move(rv);
    changed_ = changed_ || changed;
  }
  if (changed) cv_.notify_all();
}

void Informer::handle_line(std::size_t index, const HttpRequest& req, std::string_view line, bool& expired, bool& any) {
  line = trim(line);
  if (line.empty()) return;
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(line, ec);
  if (ec) malformed(req, "not JSON: " + ec.message(), line);
  const auto* event = v.if_object();
  if (event == nullptr) malformed(req, "not a JSON object", line);
  const std::string type = member_string(*event, "type");
  const auto* object_value = event->if_contains("object");
  const auto* object = object_value != nullptr ? object_value->if_object() : nullptr;
  if (type.empty() || object == nullptr) malformed(req, "no \"type\" string or \"object\" object", line);

  if (type == "ERROR") {
    // The object is a Status (API concepts, "Watch"); 410 means our resourceVersion is too old.
    const auto* code_value = object->if_contains("code");
    const std::int64_t code = code_value != nullptr && code_value->is_int64() ? code_value->get_int64() : 0;
    const std::string reason = member_string(*object, "reason");
    if (code == 410 || reason == "Expired" || reason == "Gone") {
      expired = true;
      return;
    }
    HttpResponse as_answer;
    as_answer.status = code >= 100 && code <= 599 ? static_cast<int>(code) : 500;
    as_answer.body = boost::json::serialize(*object);
    throw decode_api_error(req, as_answer);
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK")
    malformed(req, "unknown type \"" + excerpt(type) + "\"", line);

  const auto* md = metadata_of(*object);
  const std::string rv = md != nullptr ? member_string(*md, "resourceVersion") : std::string();
  Target& t = *targets_[index];
  any = true;
  if (type == "BOOKMARK") {
    std::lock_guard lock(mu_);
    if (!rv.empty()) t.resource_version = rv;
    return;
  }
  const std::string name = md != nullptr ? member_string(*md, "name") : std::string();
  if (name.empty()) malformed(req, type + " of an object without metadata.name", line);
  Key key{member_string(*md, "namespace"), name};
  {
    std::lock_guard lock(mu_);
    if (type == "DELETED") {
      t.cache.erase(key);
    } else {
      t.cache[std::move(key)] = *object;
    }
    if (!rv.empty()) t.resource_version = rv;
    changed_ = true;
  }
  cv_.notify_all();
}

Informer::Outcome Informer::watch_once(std::size_t index, bool& any) {
  Target& t = *targets_[index];
  HttpRequest req;
  req.method = "GET";
  {
    std::lock_guard lock(mu_);
    const auto min = std::max<long>(1, static_cast<long>(options_.min_watch_timeout.count()));
    const double r = std::clamp(options_.random(), 0.0, 1.0);
    const long timeout = std::min(2 * min - 1, min + static_cast<long>(std::floor(static_cast<double>(min) * r)));
    req.path = watch_path(t.spec, t.resource_version, std::max(min, timeout));
  }
  std::string buffer;  // the start of an event line still arriving
  bool expired = false;
  any = false;
  const auto feed = [&](std::string_view chunk) {
    buffer.append(chunk);
    std::size_t begin = 0;
    for (std::size_t nl; !expired && (nl = buffer.find('\n', begin)) != std::string::npos; begin = nl + 1)
      handle_line(index, req, std::string_view(buffer).substr(begin, nl - begin), expired, any);
    buffer.erase(0, begin);
    if (buffer.size() > kMaxEventLine) malformed(req, "a line longer than 16 MiB", buffer);
  };
  const StreamSink sink = [&](std::string_view chunk) {
    if (stopping_) return false;
    if (!chunk.empty()) feed(chunk);
    return !expired;
  };
  ++requests_;
  const HttpResponse resp = t.transport->stream(req, sink);
  if (expired) return Outcome::Expired;
  if (resp.aborted) return Outcome::Stopped;
  if (resp.status < 200 || resp.status > 299) {
    ApiError error = decode_api_error(req, resp);
    if (error.code() == 410) return Outcome::Expired;
    throw error;
  }
  // The server's end of the stream (its timeout): a last line may lack its newline.
  if (!trim(buffer).empty()) handle_line(index, req, buffer, expired, any);
  if (expired) return Outcome::Expired;
  return any ? Outcome::Events : Outcome::Quiet;
}

void Informer::run(std::size_t index) {
  int failures = 0;  // attempts failed in a row
  auto failing_since = std::chrono::steady_clock::now();
  // Counts a failed attempt and backs off; false when the thread must end (stopping, or given up: only called
  // inside a catch block when `error`, so the exception in flight becomes the fatal one).
  const auto failed = [&](bool error) {
    const auto now = std::chrono::steady_clock::now();
    if (failures++ == 0) failing_since = now;
    if (error && failures >= 2 && now - failing_since >= options_.give_up_after) {
      set_fatal(std::current_exception());
      return false;
    }
    return pause(index, backoff(failures));
  };
  bool need_list = false;
  while (!stopping_) {
    bool events = false;
    try {
      if (need_list) {
        relist(index);
        need_list = false;
      }
      const auto began = std::chrono::steady_clock::now();
      switch (watch_once(index, events)) {
        case Outcome::Stopped: return;
        case Outcome::Events:  // the server's timeout after a useful watch: resume at once
          failures = 0;
          break;
        case Outcome::Quiet:
          if (std::chrono::steady_clock::now() - began >= options_.min_quiet_watch) {
            failures = 0;
          } else if (!failed(false)) {
            return;
          }
          break;
        case Outcome::Expired:
          need_list = true;
          if (events) {
            failures = 0;
          } else if (!failed(false)) {  // a 410 at once, again and again, must not hammer the server with LISTs
            return;
          }
          break;
      }
    } catch (const ApiError& e) {
      if (!is_retryable_status(e.code())) {
        set_fatal(std::current_exception());
        return;
      }
      if (events) failures = 0;
      if (!failed(true)) return;
    } catch (const TransportError&) {
      if (events) failures = 0;  // the connection dropped after a useful watch: resume soon
      if (!failed(true)) return;
    } catch (...) {
      set_fatal(std::current_exception());
      return;
    }
  }
}

}  // namespace mindie::kube
