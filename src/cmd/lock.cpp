#include "cmd/lock.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "cmd/lock_records.h"
#include "util/time.h"

namespace mindie::cmd {

namespace json = boost::json;

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
  config.holder = {{"format", 1},
                   {"command", command},
                   {"user", user_name()},
                   {"host", host_name()},
                   {"pid", static_cast<std::int64_t>(getpid())},
                   {"pidns", pid_namespace()}};
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

NamespaceLock::~NamespaceLock() { unlock(false, nothing_to_recover_ || !armed_); }

std::string NamespaceLock::intent_text(change::Intent intent) const {
  intent.at = now_seconds();
  // "by": who recorded it, for whoever finds it after the lock was freed (which clears the holder record); a
  // recovery's steps record the intent they recover, whose author stays who left it, not the recovering process.
  intent.by = recovering_ && recovering_by_ ? *recovering_by_
                                            : json::object{{"user", user_name()},
                                                           {"host", host_name()},
                                                           {"pid", static_cast<std::int64_t>(getpid())},
                                                           {"command", command_}};
  if (superseded_ && !recovering_ && !intent.supersedes) {
    json::object earlier = *superseded_;
    // A chain of superseded intents stays small: beyond a few, the oldest is dropped (it is stood for anyway).
    if (json::serialize(earlier).size() > 16 * 1024) earlier.erase("supersedes");
    intent.supersedes = std::move(earlier);
  }
  return json::serialize(change::to_record(intent));
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
  return LockLost("lost the namespace lock: " + std::string(e.what()) + " " + when +
                  " (it had stopped renewing it for " + std::to_string(kLockDurationSeconds) +
                  "s, or its holder was taken for gone)" + holder + ": stopped before its next write");
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
                       " in namespace " + ns_ +
                       " before it writes, so that two commands never change one "
                       "deployment at once, but your user may not " +
                       doing + " leases there (" + err.status_message() +
                       "): it needs get, create and patch on leases.coordination.k8s.io "
                       "in namespace " +
                       ns_ + " (and delete, for kubectl mindie delete); nothing was changed");
  }
}

void NamespaceLock::before_write(const std::optional<change::Intent>& intent) {
  if (!lock_) return;
  check_interrupt(lock_->held() ? "before its next write" : "before its first write: nothing was changed");
  // The lock is known ours as of when its write was sent, not when the answer came: a reply held up (a stopped
  // process, a stalled network) may arrive after a rival took it over.
  const auto sent = std::chrono::steady_clock::now();
  if (lock_->held()) renew_for_write(intent);
  else take(intent);
  armed_ = true;
  last_sure_ = sent;
}

void NamespaceLock::renew_for_write(const std::optional<change::Intent>& intent) {
  const std::string wanted = intent ? intent_key(*intent) : "";
  const auto sent = std::chrono::steady_clock::now();
  try {
    if (wanted != recorded_) {  // a new plan, or a recovery's steps recorded over the intent they recover
      lock_->update({{kLockIntentAnnotation, intent ? json::value(intent_text(*intent)) : json::value(nullptr)}});
      recorded_ = wanted;
      // A change of its own begins (rollback runs several under one lock): an earlier one's settling says nothing
      // of it.
      nothing_to_recover_ = false;
    } else if (sent - last_sure_ > kLockIdleCheck) {
      lock_->update({});  // held up since the last write: make sure the lock is still ours
    } else {
      lock_->renew_if_due();
    }
    // A lease write whose answer was held up proves nothing about now: once more.
    if (std::chrono::steady_clock::now() - sent > kLockIdleCheck) lock_->update({});
  } catch (const kube::LeaseLost& e) {
    throw lost(e, "while this command ran");
  }
}

void NamespaceLock::take(const std::optional<change::Intent>& intent) {
  const std::string wanted = intent ? intent_key(*intent) : "";
  const auto sent = std::chrono::steady_clock::now();
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
          printer_.notice("waiting up to " + util::human_duration(wait_.count() / 1000) + " (--lock-timeout" + longer +
                          ") for " + describe_lock_holder(holder) + " to finish changing namespace " + ns_);
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
                       "unrenewed for " +
                       std::to_string(duration) +
                       "s; or, once you have confirmed that, free it "
                       "now: " +
                       free_lock_hint(ns_) + ". Nothing was changed");
  } catch (...) {
    rethrow_as_command_error(std::current_exception(), "create or update");
  }
  if (got.takeover) {
    const auto& prev = got.takeover->previous;
    printer_.notice(
        "Warning: took over the lock of namespace " + ns_ + " from " + describe_lock_holder(prev) +
        (got.takeover->expired ? ", which had stopped renewing it" : ", whose process on this host is gone"));
  }
  // Our own text is there when a take whose reply was lost was found ours: nothing left by anyone else.
  const json::value* left = got.previous.annotations.if_contains(kLockIntentAnnotation);
  if (left != nullptr && left->is_string() && left->get_string() != text) {
    // An earlier holder stopped half-way: put that right before anything else, then plan from fresh reads.
    printer_.drop_warnings();
    // A rollout's intent is recovered even then: what it changed for the while (infer-operator stopped for every
    // namespace, a temporary instance) is not something a deploy or delete would put right.
    if ((command_ == "deploy" || command_ == "delete") && !text.empty() && !is_rollout_record(*left))
      supersede(got.previous, std::string(left->get_string()), *intent);
    else recover(got.previous, std::string(left->get_string()));
    throw PlanAgain();
  }
  recorded_ = wanted;
  if (got.contended) {
    printer_.drop_warnings();  // what was read may be another command's half-done change
    throw PlanAgain();
  }
  // A signal that came while the take was in flight: the lock is ours, nothing else was written.
  check_interrupt("while taking the namespace lock: nothing was changed");
  // A take whose answer was held up (a stopped process, a stalled network) may be stale by the time it came.
  if (std::chrono::steady_clock::now() - sent > kLockIdleCheck) confirm();
  printer_.release_warnings();
}

bool NamespaceLock::unfinished_change_seen() const {
  if (!lock_ || lock_->held() || !lock_->observed()) return false;
  return kube::LeaseRecord::from(*lock_->observed(), kLockHolderAnnotation).annotations.contains(kLockIntentAnnotation);
}

void NamespaceLock::recover_first() {
  if (!unfinished_change_seen()) return;
  try {
    before_write();
  } catch (const PlanAgain&) {
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
    } else if (superseded_ && (nothing_to_recover_ || !armed_) && !clear_all_) {
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
