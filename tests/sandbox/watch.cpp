#include "watch.h"

#include <algorithm>

#include "table.h"

namespace mindie::sandbox {

using nlohmann::json;

bool watch_selects(const WatchSpec& spec, const json& object) {
  const json& meta = object["metadata"];
  if (!spec.ns.empty() && meta.value("namespace", "") != spec.ns) return false;
  static const json no_labels = json::object();
  const json& labels = meta.contains("labels") ? meta["labels"] : no_labels;
  return spec.labels.matches(labels) && spec.fields.matches(object);
}

std::optional<WatchEvent> watch_event_for(const StoreEvent& change, const WatchSpec& spec) {
  if (change.type_key != spec.type_key) return std::nullopt;
  const bool now_matches = change.type != StoreEvent::Type::Deleted && watch_selects(spec, *change.object);
  const bool matched = change.previous && watch_selects(spec, *change.previous);
  if (now_matches && !matched) return WatchEvent{WatchEvent::Type::Added, change.object, ""};
  if (now_matches) return WatchEvent{WatchEvent::Type::Modified, change.object, ""};
  if (!matched) return std::nullopt;
  if (change.type == StoreEvent::Type::Deleted) return WatchEvent{WatchEvent::Type::Deleted, change.object, ""};
  return WatchEvent{WatchEvent::Type::Deleted, change.previous, std::to_string(change.resource_version)};
}

std::string watch_line(const std::string& type, const json& object) {
  // Written by hand to keep kube-apiserver's field order (type first); nlohmann would sort the keys.
  return "{\"type\":" + json(type).dump() +
         ",\"object\":" + object.dump(-1, ' ', false, json::error_handler_t::replace) + "}\n";
}

Watch::Watch(WatchSpec spec, Clock::time_point start, Clock::time_point deadline, Clock::duration bookmark_interval)
    : spec_(std::move(spec)), deadline_(deadline), bookmark_interval_(bookmark_interval),
      next_bookmark_(start + bookmark_interval) {}

void Watch::push(WatchEvent event) {
  static const char* names[] = {"ADDED", "MODIFIED", "DELETED"};
  {
    std::lock_guard lock(mu_);
    if (aborted_ || ending_) return;
    if (queue_.size() >= kMaxQueued) {
      aborted_ = true;
      queue_.clear();
    } else {
      queue_.push_back({names[static_cast<int>(event.type)], std::move(event.object), std::move(event.resource_version)});
    }
  }
  cv_.notify_all();
}

void Watch::advance(std::uint64_t revision) {
  std::lock_guard lock(mu_);
  revision_ = std::max(revision_, revision);
}

void Watch::push_initial_events_end(std::uint64_t revision) {
  json object = {{"kind", spec_.kind},
                 {"apiVersion", spec_.api_version},
                 {"metadata",
                  {{"resourceVersion", std::to_string(revision)},
                   {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}};
  {
    std::lock_guard lock(mu_);
    queue_.push_back({"BOOKMARK", std::make_shared<const json>(std::move(object)), ""});
  }
  cv_.notify_all();
}

void Watch::fail(const json& status) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back({"ERROR", std::make_shared<const json>(status), ""});
    ending_ = true;
  }
  cv_.notify_all();
}

void Watch::abort() {
  {
    std::lock_guard lock(mu_);
    aborted_ = true;
  }
  cv_.notify_all();
}

void Watch::abandon() {
  {
    std::lock_guard lock(mu_);
    abandoned_ = true;
  }
  cv_.notify_all();
}

bool Watch::done() const {
  std::lock_guard lock(mu_);
  return aborted_ || abandoned_ || ended_;
}

void Watch::render(const Queued& q, std::string& out) {
  if (q.type == "ERROR") {
    out += watch_line(q.type, *q.object);
    return;
  }
  if (q.type == "BOOKMARK") {
    // A Table watch gets its bookmarks as Tables too, so every event decodes as the type the client asked for.
    if (!spec_.as_table) {
      out += watch_line(q.type, *q.object);
    } else {
      out += watch_line(q.type, {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"},
                                 {"metadata", (*q.object)["metadata"]}, {"columnDefinitions", nullptr},
                                 {"rows", nullptr}});
    }
    return;
  }
  const json* object = q.object.get();
  json restamped;
  if (!q.resource_version.empty()) {
    restamped = *q.object;
    restamped["metadata"]["resourceVersion"] = q.resource_version;
    object = &restamped;
  }
  if (!spec_.as_table) {
    out += watch_line(q.type, *object);
    return;
  }
  // Columns go with the first event only (kube-apiserver's watch encoder sets NoHeaders afterwards).
  out += watch_line(q.type, to_table(spec_.kind, {*object}, {{"resourceVersion", (*object)["metadata"].value(
                                                                  "resourceVersion", "")}},
                                     !columns_sent_));
  columns_sent_ = true;
}

Watch::Step Watch::take(std::string& out, Clock::time_point now) {
  std::deque<Queued> batch;
  std::uint64_t revision = 0;
  bool bookmark = false, end = false;
  {
    std::lock_guard lock(mu_);
    if (aborted_) return Step::Abort;
    batch.swap(queue_);
    revision = revision_;
    end = ending_ || now >= deadline_;
    if (!end && spec_.bookmarks && now >= next_bookmark_) {
      bookmark = true;
      next_bookmark_ = now + bookmark_interval_;
    }
    ended_ = end;
  }
  // Serialised outside the lock: the producer (the API server's request lock) never waits for JSON encoding.
  for (const auto& q : batch) render(q, out);
  if (bookmark) {
    const json object = {{"kind", spec_.kind},
                         {"apiVersion", spec_.api_version},
                         {"metadata", {{"resourceVersion", std::to_string(revision)}}}};
    render({"BOOKMARK", std::make_shared<const json>(object), ""}, out);
  }
  return end ? Step::End : Step::Continue;
}

Watch::Step Watch::next(std::string& out, Clock::duration max_wait) {
  {
    std::unique_lock lock(mu_);
    Clock::time_point until = std::min(Clock::now() + max_wait, deadline_);
    if (spec_.bookmarks) until = std::min(until, next_bookmark_);
    cv_.wait_until(lock, until, [&] { return !queue_.empty() || aborted_ || ending_; });
  }
  return take(out, Clock::now());
}

}  // namespace mindie::sandbox
