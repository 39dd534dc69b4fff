#include "cmd/lock.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "util/time.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_lock_flags(po::options_description& desc, LockFlags& flags) {
  desc.add_options()("lock-timeout", po::value(&flags.lock_timeout)->default_value(flags.lock_timeout),
                     "How long to wait while another kubectl-mindie command changes the same namespace (0: fail at "
                     "once)");
}

std::chrono::milliseconds check_lock_flags(const LockFlags& flags) {
  return parse_duration(flags.lock_timeout, "--lock-timeout");
}

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// This process's PID namespace ("pid:[4026531836]"), "" when unknown: a pid means this process only within it (a
// container sharing the host's network has the host's name but its own pids).
std::string pid_namespace() {
  char buf[64] = {};
  const ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::string user_name() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
  return "uid " + std::to_string(geteuid());
}

// A string field of a holder record, which anyone allowed to write the Lease may have set: control characters
// become '?', so that printing it cannot move the terminal's cursor; at most 100 bytes.
std::string string_of(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return {};
  std::string s(v->get_string().subview(0, std::min<std::size_t>(v->get_string().size(), 100)));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What a lease's renewTime says at `now` (this host's clock), for people: "last renewed 5s ago", or, when the
// holder's clock is ahead of ours (a renewal "in the future"), how far. LeaseLock never compares it with our clock
// (lease_lock.h), so this is all a skewed clock can change.
std::string renewal_text(std::int64_t renewed, std::int64_t now) {
  if (renewed > now + 1)
    return "its lease's renewTime (" + util::utc_text(renewed, "%H:%M:%S UTC") + ") is " +
           util::human_duration(renewed - now) + " ahead of this host's clock";
  return "last renewed " + util::human_duration(std::max<std::int64_t>(0, now - renewed)) + " ago";
}

// How to free the lock of a holder confirmed gone. Clearing the holder keeps the lease's record of an unfinished
// change (kLockIntentAnnotation) for the next command to recover, which deleting the lease would lose.
std::string free_lock_hint(const std::string& ns) {
  return "kubectl patch lease " + std::string(kLockLeaseName) + " -n " + ns +
         " --type=merge -p '{\"spec\":{\"holderIdentity\":null}}'";
}

}  // namespace

std::string describe_lock_holder(const kube::LeaseRecord& r) {
  const std::string command = string_of(r.holder, "command");
  const std::string user = string_of(r.holder, "user");
  const std::string host = string_of(r.holder, "host");
  std::string out = command.empty() ? "holder " + string_of(json::object{{"id", r.identity}}, "id") : command;
  if (!user.empty() || !host.empty()) out += " by " + user + "@" + host;
  if (const auto* pid = r.holder.if_contains("pid"); pid != nullptr && pid->is_int64())
    out += ", pid " + std::to_string(pid->get_int64());
  if (r.acquired) out += ", since " + util::utc_text(*r.acquired, "%H:%M:%S UTC");
  return out;
}

namespace {

// The kind of change and what it moves, of an intent record anyone may have written: "scale" and "prefill 1 → 3",
// or `fallback` and "" for what this version cannot read.
std::pair<std::string, std::string> describe_record(const json::object& record, const std::string& fallback) {
  const auto command = change::known_command(record);
  if (!command) return {fallback, ""};
  try {
    return {*command, change::count_change_text(change::parse_intent(record).change)};
  } catch (const change::UnreadableIntent&) {
    return {*command, ""};
  }
}

}  // namespace

LockNotes lock_notes(const json::object& lease, std::int64_t now) {
  LockNotes notes;
  const kube::LeaseRecord r = kube::LeaseRecord::from(lease, kLockHolderAnnotation);
  const json::value* text = r.annotations.if_contains(kLockIntentAnnotation);
  if (text == nullptr || !text->is_string()) return notes;
  json::error_code ec;
  const json::value intent = json::parse(text->get_string(), ec);
  if (ec || !intent.is_object()) {
    notes.drift.push_back("lease/" + std::string(kLockLeaseName) + " holds an unreadable record of an unfinished "
                          "change; the next mutating kubectl-mindie command in this namespace removes it");
    return notes;
  }
  const json::object& o = intent.get_object();
  const auto [command, change] = describe_record(o, "change");
  std::string when;
  if (const auto* at = o.if_contains("at"); at != nullptr && at->is_int64())
    when = " from " + util::utc_text(at->get_int64(), "%H:%M UTC") + " (" +
           (at->get_int64() > now + 1 ? std::string("ahead of this host's clock")
                                      : util::human_duration(now - at->get_int64()) + " ago") + ")";
  const std::string what = command + when + (change.empty() ? "" : ": " + change);
  std::string stale;  // held, but by the holder's clock not renewed for its duration
  if (!r.identity.empty() && !lock_holder_gone(r)) {
    // One look cannot tell a live holder from one that is gone (LeaseLock watches the record for its duration):
    // renewTime, written by the holder's clock, says which is likely; a clock ahead of ours says neither.
    const int duration = r.duration_seconds > 0 ? r.duration_seconds : kLockDurationSeconds;
    if (r.renewed && *r.renewed > now + 1) {
      notes.converging.push_back(what + ", under way or abandoned (" + describe_lock_holder(r) + "; " +
                                 renewal_text(*r.renewed, now) + ", so one look cannot tell; the next command "
                                 "takes the lock over once the lease has stayed unrenewed for " +
                                 std::to_string(duration) + "s)");
      return notes;
    }
    if (r.renewed && now - *r.renewed <= duration) {
      notes.converging.push_back(what + ", under way (" + describe_lock_holder(r) + ")");
      return notes;
    }
    stale = r.renewed ? ", " + renewal_text(*r.renewed, now) : ", its lease records no renewal";
  }
  notes.drift.push_back("unfinished " + what + " (left by " + describe_lock_holder(intent_left_by(r, o)) + stale +
                        "): the baseline and the "
                        "workload may disagree until the next mutating kubectl-mindie command in this namespace "
                        "finishes or reverts it");
  return notes;
}

bool lock_holder_gone(const kube::LeaseRecord& r) {
  if (string_of(r.holder, "host") != host_name()) return false;
  // Its pid is only ours to look up in our PID namespace (a holder that recorded none is from an older version).
  if (const std::string ns = string_of(r.holder, "pidns"); !ns.empty() && ns != pid_namespace()) return false;
  const auto* pid = r.holder.if_contains("pid");
  if (pid == nullptr || !pid->is_int64() || pid->get_int64() <= 0 || pid->get_int64() > 1 << 30) return false;
  const auto p = static_cast<pid_t>(pid->get_int64());
  if (p == getpid()) return false;
  if (kill(p, 0) != 0) return errno == ESRCH;
  // A zombie (killed, not yet reaped by its parent: a shell job, a test harness) runs no more code either.
  std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');  // the command name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

NamespaceLock::NamespaceLock(kube::Client& client, Printer& printer, const std::string& ns, const std::string& command,
                             std::chrono::milliseconds wait, bool enabled)
    : client_(client), printer_(printer), ns_(ns), command_(command), wait_(wait) {
  if (!enabled) return;
  interrupts_ = std::make_unique<InterruptGuard>();
  kube::LeaseLockConfig config;
  config.ns = ns;
  config.name = kLockLeaseName;
  std::random_device rd;
  char nonce[9];
  std::snprintf(nonce, sizeof nonce, "%08x", rd());
  config.identity = host_name() + "/" + std::to_string(getpid()) + "/" + nonce;
  config.holder_annotation = kLockHolderAnnotation;
  config.holder = {{"format", 1}, {"command", command}, {"user", user_name()}, {"host", host_name()},
                   {"pid", static_cast<std::int64_t>(getpid())}, {"pidns", pid_namespace()}};
  holder_ = config.holder;
  config.labels = {{"app.kubernetes.io/managed-by", "kubectl-mindie"}};
  config.duration_seconds = kLockDurationSeconds;
  config.wait = wait;
  // Waiting for the lock (or between create attempts) ends at a noted signal: nothing was written yet.
  kube::LeaseClock clock = kube::LeaseClock::wall();
  clock.sleep = [](std::chrono::milliseconds d) {
    for (auto left = d; left.count() > 0; left -= std::chrono::milliseconds(100)) {
      check_interrupt("while waiting for the namespace lock: nothing was changed");
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(100)));
    }
  };
  lock_ = std::make_unique<kube::LeaseLock>(client, std::move(config), lock_holder_gone, std::move(clock));
  try {
    lock_->observe();
  } catch (...) {
    rethrow_as_command_error(std::current_exception(), "read");
  }
  printer_.hold_warnings();
}

NamespaceLock::~NamespaceLock() { unlock(false, settled_ || !armed_); }

namespace {

// What an intent records, without when and by whom: two writes that record the same key need one lease update.
std::string intent_key(change::Intent intent) {
  intent.at = 0;
  intent.by = {};
  return json::serialize(change::to_record(intent));
}

}  // namespace

std::string NamespaceLock::intent_text(change::Intent intent) const {
  intent.at = now_seconds();
  // "by": who recorded it, for whoever finds it after the lock was freed (which clears the holder record); a
  // recovery's steps record the intent they recover, whose author stays who left it, not the recovering process.
  intent.by = recovering_ && recovering_by_ ? *recovering_by_
                                           : json::object{{"user", user_name()}, {"host", host_name()},
                                            {"pid", static_cast<std::int64_t>(getpid())}, {"command", command_}};
  if (superseded_ && !recovering_ && !intent.supersedes) {
    json::object earlier = *superseded_;
    // A chain of superseded intents stays small: beyond a few, the oldest is dropped (it is stood for anyway).
    if (json::serialize(earlier).size() > 16 * 1024) earlier.erase("supersedes");
    intent.supersedes = std::move(earlier);
  }
  return json::serialize(change::to_record(intent));
}

kube::LeaseRecord intent_left_by(const kube::LeaseRecord& lease, const json::object& intent) {
  kube::LeaseRecord r = lease;
  if (const auto* by = intent.if_contains("by"); r.holder.empty() && by != nullptr && by->is_object())
    r.holder = by->get_object();
  return r;
}

void NamespaceLock::recover(const kube::LeaseRecord& lease, const std::string& text) {
  json::error_code ec;
  json::value intent = json::parse(text, ec);
  const kube::LeaseRecord previous =
      intent_left_by(lease, intent.is_object() ? intent.get_object() : json::object());
  foreign_intent_ = true;  // whatever happens now, it stays until recovered
  recovering_ = true;
  if (intent.is_object())
    if (const auto* by = intent.get_object().if_contains("by"); by != nullptr && by->is_object())
      recovering_by_ = by->get_object();
  std::string line;
  try {
    line = ec || !intent.is_object()
               ? "Warning: removed an unreadable record of an interrupted command from lease/" +
                     std::string(kLockLeaseName) + " (left by " + describe_lock_holder(previous) + ")"
               : recover_interrupted_change(client_, *this, ns_, intent.get_object(), previous);
  } catch (const Interrupted&) {
    throw;
  } catch (...) {
    throw PartialFailure(std::current_exception(),
                         "kubectl-mindie found a change that " + describe_lock_holder(previous) +
                             " began in namespace " + ns_ + " and never ended, and could not finish or revert it; "
                             "its record stays in lease/" + kLockLeaseName + " for the next command to try again; to drop it "
                             "instead, once you have checked the deployment (kubectl mindie status -n " + ns_ +
                             "): kubectl annotate lease " + kLockLeaseName + " -n " + ns_ + " " +
                             kLockIntentAnnotation + "-");
  }
  lock_->update({{kLockIntentAnnotation, nullptr}});
  recorded_.clear();
  recovering_by_.reset();
  recovering_ = false;
  foreign_intent_ = false;
  settled_ = false;  // the recovery's own, not the command's
  printer_.notice(line);
}

void NamespaceLock::supersede(const kube::LeaseRecord& lease, const std::string& text, const change::Intent& intent) {
  json::error_code ec;
  const json::value left = json::parse(text, ec);
  const json::object none;
  const json::object& o = !ec && left.is_object() ? left.get_object() : none;
  const std::string command = change::known_command(o).value_or("command");
  std::string when;
  if (const auto* at = o.if_contains("at"); at != nullptr && at->is_int64())
    when = " from " + util::utc_text(at->get_int64(), "%H:%M UTC");
  // The earlier intent as it was ("by" included, which names who left it once the holder record is gone).
  superseded_ = o;
  if (!superseded_->contains("by") && !lease.holder.empty()) (*superseded_)["by"] = lease.holder;
  // From here the lease records this command's intent, which carries the earlier one: its recovery puts right
  // whatever either wrote (DeployOptions::recover, DeleteOptions::recover).
  try {
    lock_->update({{kLockIntentAnnotation, intent_text(intent)}});
  } catch (const kube::LeaseLost& e) {
    throw LockLost(std::string(e.what()) + " while this command began: nothing was changed");
  } catch (...) {
    rethrow_as_command_error(std::current_exception(), "update");
  }
  recorded_ = intent_key(intent);
  printer_.notice("found an interrupted " + command + when + " (" + describe_lock_holder(intent_left_by(lease, o)) +
                  "): this " + command_ + " supersedes it (" +
                  (command_ == "delete" ? "it deletes the whole deployment"
                                        : "it writes the baseline and the whole workload again") +
                  ")");
}

LockLost NamespaceLock::lost(const kube::LeaseLost& e, const std::string& when) const {
  std::string holder;
  try {
    if (const auto lease = client_.get_if_exists(kube::gvr::kLeases, ns_, kLockLeaseName)) {
      const kube::LeaseRecord now = kube::LeaseRecord::from(*lease, kLockHolderAnnotation);
      if (!now.identity.empty()) {
        holder = "; it is held by " + describe_lock_holder(now);
      } else if (const auto last = kube::LeaseRecord::from(*lease, kLockLastHolderAnnotation); !last.holder.empty()) {
        holder = "; it was taken by " + describe_lock_holder(last) + ", which has freed it since";
      }
    }
  } catch (const std::exception&) {
    // who holds it is a courtesy: the loss itself is certain
  }
  return LockLost("lost the namespace lock: " + std::string(e.what()) + " " + when + " (it had stopped renewing it for " +
                  std::to_string(kLockDurationSeconds) + "s, or its holder was taken for gone)" + holder +
                  ": stopped before its next write");
}

void NamespaceLock::bound_remaining() {
  client_.bound_until(std::chrono::steady_clock::now() + kLockRecoveryBound,
                      "the change stopped: what it does after a failure must end within " +
                          std::to_string(kLockRecoveryBound.count() / 1000) + "s, inside the namespace lock's " +
                          std::to_string(kLockDurationSeconds) + "s lease");
}

void NamespaceLock::lift_bound() { client_.lift_bound(); }

void NamespaceLock::renew() {
  if (!lock_ || !lock_->held()) return;
  try {
    lock_->renew_if_due();
  } catch (const kube::LeaseLost& e) {
    throw lost(e, "while this command ran");
  }
}

void NamespaceLock::confirm() {
  if (!lock_ || !lock_->held()) return;
  try {
    const auto sent = std::chrono::steady_clock::now();
    lock_->update({});
    if (std::chrono::steady_clock::now() - sent > kLockIdleCheck) lock_->update({});  // its answer was held up
  } catch (const kube::LeaseLost& e) {
    throw lost(e, "while this command waited for the server");
  }
}

void NamespaceLock::rethrow_as_command_error(const std::exception_ptr& e, const std::string& doing) const {
  try {
    std::rethrow_exception(e);
  } catch (const kube::ApiError& err) {
    // The Lease is the command's first write: created in a namespace that does not exist, the server says so.
    const bool taking = !(lock_ && lock_->held());
    if (taking && err.is_not_found() && err.status_message() == "namespaces \"" + ns_ + "\" not found")
      throw CommandError("namespace " + ns_ + " does not exist: create it with `kubectl create namespace " + ns_ +
                         "` and run the command again; nothing was changed");
    if (err.code() != 403) throw;
    throw CommandError("kubectl-mindie takes lease.coordination.k8s.io/" + std::string(kLockLeaseName) +
                       " in namespace " + ns_ + " before it writes, so that two commands never change one "
                       "deployment at once, but your user may not " + doing + " leases there (" +
                       err.status_message() + "): it needs get, create and patch on leases.coordination.k8s.io "
                       "in namespace " + ns_ + " (and delete, for kubectl mindie delete); nothing was changed");
  }
}

void NamespaceLock::before_write(const std::optional<change::Intent>& intent) {
  if (!lock_) return;
  check_interrupt(lock_->held() ? "before its next write" : "before its first write: nothing was changed");
  const std::string wanted = intent ? intent_key(*intent) : "";
  // The lock is known ours as of when its write was sent, not when the answer came: a reply held up (a stopped
  // process, a stalled network) may arrive after a rival took it over.
  const auto sent = std::chrono::steady_clock::now();
  if (lock_->held()) {
    try {
      if (wanted != recorded_) {  // a new plan (or a recovery's steps, recorded over the intent they recover)
        lock_->update({{kLockIntentAnnotation, intent ? json::value(intent_text(*intent)) : json::value(nullptr)}});
        recorded_ = wanted;
      } else if (std::chrono::steady_clock::now() - last_sure_ > kLockIdleCheck) {
        lock_->update({});  // held up since the last write: make sure the lock is still ours
      } else {
        lock_->renew_if_due();
      }
      // A lease write whose answer was held up proves nothing about now: once more.
      if (std::chrono::steady_clock::now() - sent > kLockIdleCheck) lock_->update({});
    } catch (const kube::LeaseLost& e) {
      throw lost(e, "while this command ran");
    }
    armed_ = true;
    last_sure_ = sent;
    return;
  }
  const std::string text = intent ? intent_text(*intent) : "";
  kube::LeaseLock::Acquired got;
  try {
    got = lock_->acquire(
        [&](const kube::LeaseRecord& holder) {
          // LeaseLock waits longer for a lease that stays unrenewed, to take it over (lease_lock.h, acquire()).
          const std::string longer = wait_ < std::chrono::seconds(kLockDurationSeconds)
                                         ? "; up to " + std::to_string(kLockDurationSeconds) +
                                               "s while its lease stays unrenewed, then it is taken over"
                                         : "";
          printer_.notice("waiting up to " + util::human_duration(wait_.count() / 1000) + " (--lock-timeout" +
                          longer + ") for " + describe_lock_holder(holder) + " to finish changing namespace " + ns_);
        },
        text.empty() ? json::object() : json::object{{kLockIntentAnnotation, text}});
  } catch (const kube::LeaseHeld& e) {
    const auto& h = e.holder();
    const std::string renewed = h.renewed ? ", " + renewal_text(*h.renewed, now_seconds()) : "";
    const int duration = h.duration_seconds > 0 ? h.duration_seconds : kLockDurationSeconds;
    throw CommandError("another kubectl-mindie command is changing namespace " + ns_ + ": " + describe_lock_holder(h) +
                       renewed + " (lease.coordination.k8s.io/" + kLockLeaseName + "); " +
                       (wait_.count() == 0 ? std::string("--lock-timeout 0 does not wait")
                                           : "waited " + util::human_duration(wait_.count() / 1000)) +
                       ". Re-run when it has finished. If its holder is gone (killed, or its host down), a command "
                       "waiting for the lock (--lock-timeout above 0) takes it over once its lease has stayed "
                       "unrenewed for " + std::to_string(duration) + "s; or, once you have confirmed that, free it "
                       "now: " + free_lock_hint(ns_) + ". Nothing was changed");
  } catch (...) {
    rethrow_as_command_error(std::current_exception(), "create or update");
  }
  if (got.takeover) {
    const auto& prev = got.takeover->previous;
    printer_.notice("Warning: took over the lock of namespace " + ns_ + " from " + describe_lock_holder(prev) +
                    (got.takeover->expired ? ", which had stopped renewing it"
                                           : ", whose process on this host is gone"));
  }
  // Our own text is there when a take whose reply was lost was found ours: nothing left by anyone else.
  const json::value* left = got.previous.annotations.if_contains(kLockIntentAnnotation);
  if (left != nullptr && left->is_string() && left->get_string() != text) {
    // An earlier holder stopped half-way: put that right before anything else, then plan from fresh reads.
    printer_.drop_warnings();
    if ((command_ == "deploy" || command_ == "delete") && !text.empty())
      supersede(got.previous, std::string(left->get_string()), *intent);
    else recover(got.previous, std::string(left->get_string()));
    throw Replan();
  }
  recorded_ = wanted;
  if (got.contended) {
    printer_.drop_warnings();  // what was read may be another command's half-done change
    throw Replan();
  }
  // A signal that came while the take was in flight: the lock is ours, nothing else was written.
  check_interrupt("while taking the namespace lock: nothing was changed");
  // A take whose answer was held up (a stopped process, a stalled network) may be stale by the time it came.
  if (std::chrono::steady_clock::now() - sent > kLockIdleCheck) confirm();
  printer_.release_warnings();
  armed_ = true;
  last_sure_ = sent;
}

bool NamespaceLock::unfinished_change_seen() const {
  if (!lock_ || lock_->held() || !lock_->observed()) return false;
  return kube::LeaseRecord::from(*lock_->observed(), kLockHolderAnnotation).annotations.contains(kLockIntentAnnotation);
}

void NamespaceLock::recover_first() {
  if (!unfinished_change_seen()) return;
  try {
    before_write();
  } catch (const Replan&) {
    // Recovered, or held by someone meanwhile: either way nothing was read yet, so there is nothing to plan again.
  }
}

void NamespaceLock::done(bool remove) {
  clear_all_ = true;
  unlock(remove, true);
}

json::object NamespaceLock::last_holder() const {
  json::object record = holder_;
  record["freed"] = now_seconds();
  return {{kLockLastHolderAnnotation, json::serialize(record)}};
}

void NamespaceLock::unlock(bool remove, bool clear_intent) {
  printer_.release_warnings();
  if (!lock_ || !lock_->held()) return;
  try {
    if (remove) {
      lock_->remove();
    } else if (superseded_ && (settled_ || !armed_) && !clear_all_) {
      // This command changed nothing after all: what the superseded intent stood for is still to be put right.
      lock_->update({{kLockIntentAnnotation, json::serialize(*superseded_)}});
      lock_->release({}, last_holder());
    } else if (!foreign_intent_ && (clear_intent || recorded_.empty())) {
      lock_->release({kLockIntentAnnotation}, last_holder());
    } else {
      lock_->release({}, last_holder());
    }
  } catch (const std::exception& e) {
    printer_.warning("could not free lease/" + std::string(kLockLeaseName) + " in namespace " + ns_ + " (" + e.what() +
                     "): other kubectl-mindie commands wait for it up to " + std::to_string(kLockDurationSeconds) +
                     "s");
  }
}

}  // namespace mindie::cmd
