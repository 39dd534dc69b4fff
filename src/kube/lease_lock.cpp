#include "kube/lease_lock.h"

#include <algorithm>
#include <ctime>
#include <thread>

#include "util/time.h"

namespace mindie::kube {

namespace json = boost::json;

namespace gvr {
const GVR kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
}

std::string micro_time(std::int64_t seconds_since_epoch) {
  return util::utc_text(seconds_since_epoch, "%Y-%m-%dT%H:%M:%S.000000Z");
}

LeaseClock LeaseClock::wall() {
  return {[] { return std::chrono::system_clock::now(); }, [] { return std::chrono::steady_clock::now(); },
          [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }};
}

LeaseRecord LeaseRecord::from(const json::object& lease, const std::string& holder_annotation) {
  LeaseRecord r;
  const auto string_at = [](const json::object& o, std::string_view key) -> std::string {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  if (const auto* md = lease.if_contains("metadata"); md != nullptr && md->is_object()) {
    r.resource_version = string_at(md->get_object(), "resourceVersion");
    if (const auto* a = md->get_object().if_contains("annotations"); a != nullptr && a->is_object()) {
      for (const auto& [k, v] : a->get_object())
        if (v.is_string()) r.annotations[k] = v;
      const std::string text = string_at(a->get_object(), holder_annotation);
      json::error_code ec;
      json::value parsed = json::parse(text, ec);
      if (!ec && parsed.is_object()) r.holder = std::move(parsed.get_object());
    }
  }
  if (const auto* spec = lease.if_contains("spec"); spec != nullptr && spec->is_object()) {
    const json::object& s = spec->get_object();
    r.identity = string_at(s, "holderIdentity");
    r.acquired = util::parse_rfc3339(string_at(s, "acquireTime"));
    r.renewed = util::parse_rfc3339(string_at(s, "renewTime"));
    if (const auto* d = s.if_contains("leaseDurationSeconds"); d != nullptr && d->is_int64())
      r.duration_seconds = static_cast<int>(std::clamp<std::int64_t>(d->get_int64(), 0, 1 << 30));
  }
  return r;
}

LeaseLock::LeaseLock(Client& client, LeaseLockConfig config, std::function<bool(const LeaseRecord&)> holder_gone,
                     LeaseClock clock)
    : client_(client), config_(std::move(config)), holder_gone_(std::move(holder_gone)), clock_(std::move(clock)) {}

std::int64_t LeaseLock::now_seconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch()).count();
}

json::object LeaseLock::new_lease(std::int64_t now, const json::object& annotations) const {
  json::object metadata{{"name", config_.name}, {"namespace", config_.ns}};
  if (!config_.labels.empty()) metadata["labels"] = config_.labels;
  json::object all = annotations;
  all[config_.holder_annotation] = json::serialize(config_.holder);
  metadata["annotations"] = std::move(all);
  return {{"apiVersion", gvr::kLeases.api_version()},
          {"kind", gvr::kLeases.kind},
          {"metadata", std::move(metadata)},
          {"spec",
           {{"holderIdentity", config_.identity},
            {"leaseDurationSeconds", config_.duration_seconds},
            {"acquireTime", micro_time(now)},
            {"renewTime", micro_time(now)},
            {"leaseTransitions", 0}}}};
}

json::object LeaseLock::take_patch(const LeaseRecord& seen, std::int64_t now, const json::object& extra) const {
  // A merge patch carrying the resourceVersion read: the server refuses it (409) if anyone wrote in between.
  // Annotations a previous holder left (a record of unfinished work) are kept for the caller to read.
  json::object annotations;
  for (const auto& [k, v] : extra)
    if (!seen.annotations.contains(k)) annotations[k] = v;
  annotations[config_.holder_annotation] = json::serialize(config_.holder);
  return {{"metadata", {{"resourceVersion", seen.resource_version}, {"annotations", std::move(annotations)}}},
          {"spec",
           {{"holderIdentity", config_.identity},
            {"leaseDurationSeconds", config_.duration_seconds},
            {"acquireTime", micro_time(now)},
            {"renewTime", micro_time(now)},
            {"leaseTransitions", transitions_ + 1}}}};
}

bool LeaseLock::note(const LeaseRecord* seen) {
  // client-go compares the raw record it read with the one it observed before (observedRawRecord) and restarts
  // observedTime on any difference; the resourceVersion changes with every write, whoever made it.
  std::string record;
  if (seen != nullptr)
    record = seen->identity + "\n" + (seen->renewed ? std::to_string(*seen->renewed) : "-") + "\n" +
             seen->resource_version;
  if (record == seen_record_) return false;
  seen_record_ = std::move(record);
  seen_since_ = clock_.steady();  // after the read returned: the record may have been written just before
  return true;
}

std::chrono::seconds LeaseLock::duration_of(const LeaseRecord& seen) const {
  return std::chrono::seconds(seen.duration_seconds > 0 ? seen.duration_seconds : config_.duration_seconds);
}

void LeaseLock::observe() {
  observed_lease_ = client_.get_if_exists(gvr::kLeases, config_.ns, config_.name);
  const LeaseRecord seen = observed_lease_ ? LeaseRecord::from(*observed_lease_, config_.holder_annotation)
                                           : LeaseRecord{};
  note(observed_lease_ ? &seen : nullptr);
  observed_ = seen.resource_version;
}

namespace {

// A create that failed this way may be tried again after a fresh look (RetryingTransport's statuses).
bool transient(int code) { return code == 429 || code == 500 || code == 502 || code == 503 || code == 504; }
constexpr int kCreateRetries = 4;

}  // namespace

LeaseLock::Acquired LeaseLock::acquire(const std::function<void(const LeaseRecord&)>& on_wait,
                                       const json::object& annotations) {
  const auto deadline = clock_.steady() + config_.wait;
  bool told = false;
  int create_failures = 0;
  bool contended = !observed_.has_value();
  bool changed_while_waiting = false;
  // The first look is observe()'s read: a guarded write fails (409) if the lease changed since, and we look again.
  bool first = observed_.has_value();
  for (;;) {
    const std::int64_t now = now_seconds();
    const auto sent = clock_.steady();
    const std::optional<json::object> live = first ? observed_lease_
                                                   : client_.get_if_exists(gvr::kLeases, config_.ns, config_.name);
    const LeaseRecord look = live ? LeaseRecord::from(*live, config_.holder_annotation) : LeaseRecord{};
    if (!first && note(live ? &look : nullptr) && told) changed_while_waiting = true;
    first = false;
    // Changed since observe() by anyone but us (our own write whose reply was lost changes it too).
    if (observed_ && look.resource_version != *observed_ && look.identity != config_.identity) contended = true;
    if (!live) {
      try {
        record_ = LeaseRecord::from(client_.create(gvr::kLeases, new_lease(now, annotations)),
                                    config_.holder_annotation);
      } catch (const ApiError& e) {
        if (e.reason() == "AlreadyExists" || e.is_conflict()) continue;  // a rival created it first: look again
        if (!transient(e.code()) || ++create_failures > kCreateRetries) throw;
        clock_.sleep(std::chrono::milliseconds(250 << create_failures));
        continue;  // a POST is not repeated blindly: look again (a create whose reply was lost shows as ours)
      } catch (const TransportError&) {
        if (++create_failures > kCreateRetries) throw;
        clock_.sleep(std::chrono::milliseconds(250 << create_failures));
        continue;
      }
      held_ = true;
      last_renewal_ = sent;
      return {std::nullopt, {}, contended};
    }
    const LeaseRecord& seen = look;
    if (seen.identity == config_.identity) {  // our own write, whose reply was lost and whose repeat met a 409
      record_ = seen;
      held_ = true;
      last_renewal_ = sent;
      return {std::nullopt, seen, contended};  // its annotations may hold what an earlier holder left
    }
    const bool free = seen.identity.empty();
    const bool expired = !free && clock_.steady() - seen_since_ >= duration_of(seen);
    if (free || expired || holder_gone_(seen)) {
      if (const auto* spec = live->if_contains("spec"); spec != nullptr && spec->is_object())
        if (const auto* t = spec->get_object().if_contains("leaseTransitions"); t != nullptr && t->is_int64())
          transitions_ = static_cast<int>(std::clamp<std::int64_t>(t->get_int64(), 0, 1 << 30));
      try {
        record_ = LeaseRecord::from(client_.patch(gvr::kLeases, config_.ns, config_.name, PatchType::Merge,
                                                  take_patch(seen, now, annotations)),
                                    config_.holder_annotation);
      } catch (const ApiError& e) {
        if (e.is_conflict() || e.is_not_found()) continue;  // changed or deleted since read: look again
        throw;
      }
      held_ = true;
      last_renewal_ = sent;
      if (free) return {std::nullopt, seen, contended};
      return {TakeOver{seen, expired}, seen, true};
    }
    // A record unchanged since the wait began may be abandoned: wait until it expires (bounded by our duration).
    auto until = deadline;
    const auto judged_by = std::min(duration_of(seen), std::chrono::seconds(config_.duration_seconds));
    if (config_.wait.count() > 0 && !changed_while_waiting) until = std::max(until, seen_since_ + judged_by);
    const auto left = until - clock_.steady();
    if (left <= left.zero()) throw LeaseHeld("lease " + config_.ns + "/" + config_.name + " is held", seen);
    if (!told && on_wait) on_wait(seen);
    told = true;
    contended = true;
    clock_.sleep(std::min(config_.poll, std::chrono::ceil<std::chrono::milliseconds>(left)));
  }
}

void LeaseLock::update(const json::object& annotations) {
  const std::int64_t now = now_seconds();
  const auto sent = clock_.steady();
  const json::object patch{{"metadata", {{"resourceVersion", record_.resource_version}, {"annotations", annotations}}},
                           {"spec", {{"renewTime", micro_time(now)}}}};
  json::object answer;
  try {
    answer = client_.patch(gvr::kLeases, config_.ns, config_.name, PatchType::Merge, patch);
  } catch (const ApiError& e) {
    if (!e.is_conflict() && !e.is_not_found()) throw;
    // A 409 is also what a repeat of our own applied patch gets (a lost reply retried): ours if the identity is.
    const auto live = client_.get_if_exists(gvr::kLeases, config_.ns, config_.name);
    const LeaseRecord seen = live ? LeaseRecord::from(*live, config_.holder_annotation) : LeaseRecord{};
    if (!live || seen.identity != config_.identity) {
      held_ = false;
      // The identity is anyone's to write and reaches the terminal: control characters become '?', 100 bytes.
      std::string who = seen.identity.substr(0, 100);
      for (char& c : who)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      throw LeaseLost(
          "lease " + config_.ns + "/" + config_.name +
          (live ? (who.empty() ? std::string(" was taken over (and freed since)") : " was taken over by " + who)
                : std::string(" was deleted")));
    }
    record_ = seen;  // ours: apply the change again on what is there now
    answer = client_.patch(gvr::kLeases, config_.ns, config_.name, PatchType::Merge,
                           json::object{{"metadata",
                                         {{"resourceVersion", seen.resource_version}, {"annotations", annotations}}},
                                        {"spec", {{"renewTime", micro_time(now)}}}});
  }
  record_ = LeaseRecord::from(answer, config_.holder_annotation);
  last_renewal_ = sent;
}

void LeaseLock::renew_if_due() {
  if (!held_) return;
  if (clock_.steady() - last_renewal_ < std::chrono::seconds(config_.duration_seconds) / 3) return;
  update({});
}

bool LeaseLock::release(const std::vector<std::string>& clear, const json::object& set) {
  if (!held_) return false;
  held_ = false;
  json::object annotations = set;
  annotations[config_.holder_annotation] = nullptr;
  for (const auto& k : clear) annotations[k] = nullptr;
  const json::object patch{{"metadata",
                            {{"resourceVersion", record_.resource_version}, {"annotations", std::move(annotations)}}},
                           {"spec", {{"holderIdentity", nullptr}, {"acquireTime", nullptr}, {"renewTime", nullptr}}}};
  try {
    record_ = LeaseRecord::from(client_.patch(gvr::kLeases, config_.ns, config_.name, PatchType::Merge, patch),
                                config_.holder_annotation);
    return true;
  } catch (const ApiError& e) {
    if (e.is_not_found()) return true;  // gone
    if (!e.is_conflict() && e.code() < 500) throw;
  } catch (const TransportError&) {
  }
  // A 409 (changed since our last write: taken over, or our own applied patch repeated) or no answer: look, and
  // free it again if it is still ours, so that what it records (an intent) does not outlive the command.
  const auto live = client_.get_if_exists(gvr::kLeases, config_.ns, config_.name);
  if (!live) return true;
  const LeaseRecord seen = LeaseRecord::from(*live, config_.holder_annotation);
  if (seen.identity != config_.identity) return true;  // freed by the first try, or taken over
  json::object again = patch;
  again["metadata"].as_object()["resourceVersion"] = seen.resource_version;
  record_ = LeaseRecord::from(client_.patch(gvr::kLeases, config_.ns, config_.name, PatchType::Merge, again),
                              config_.holder_annotation);
  return true;
}

bool LeaseLock::remove() {
  if (!held_) return false;
  held_ = false;
  try {
    client_.remove_if_unchanged(gvr::kLeases, config_.ns, config_.name, record_.resource_version);
  } catch (const ApiError& e) {
    if (e.is_not_found() || e.is_conflict()) return true;
    throw;
  }
  return true;
}

}  // namespace mindie::kube
