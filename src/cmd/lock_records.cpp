// The namespace lock's records (cmd/lock.h): who holds it, what status says of it, and this process's identity.
#include "cmd/lock_records.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "cmd/lock.h"
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

namespace {

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

}  // namespace

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
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

namespace {

/// The roles record `o` scales, from → to, when it is a readable scale intent or a redeploy's that changes counts
/// (the stored baseline's → the new one's), or a rollout's roles given a temporary instance (before → before + 1);
/// none otherwise.
std::map<std::string, std::pair<std::int64_t, std::int64_t>> scaling_of(const json::object& o) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
  const auto command = change::known_command(o);
  if (command != "scale" && command != "rollout" && command != "deploy") return out;
  try {
    const change::Intent intent = change::parse_intent(o);
    if (const auto* s = std::get_if<change::ScaleIntent>(&intent.change))
      for (const auto& role : s->counts.roles) out[role] = {s->counts.from.of(role), s->counts.to.of(role)};
    if (const auto* d = std::get_if<change::DeployIntent>(&intent.change); d != nullptr && d->counts)
      for (const auto& role : d->counts->roles) out[role] = {d->counts->from.of(role), d->counts->to.of(role)};
    if (const auto* r = std::get_if<change::RolloutIntent>(&intent.change))
      for (const auto& [role, before] : r->surged) out[role] = {before, before + 1};
  } catch (const change::UnreadableIntent&) {
  }
  return out;
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
    notes.drift.push_back("lease/" + std::string(kLockLeaseName) +
                          " holds an unreadable record of an unfinished "
                          "change; the next mutating kubectl-mindie command in this namespace removes it");
    return notes;
  }
  const json::object& o = intent.get_object();
  const auto [command, change] = describe_record(o, "change");
  std::string when;
  if (const auto* at = o.if_contains("at"); at != nullptr && at->is_int64())
    when = " from " + util::utc_text(at->get_int64(), "%H:%M UTC") + " (" +
           (at->get_int64() > now + 1 ? std::string("ahead of this host's clock")
                                      : util::human_duration(now - at->get_int64()) + " ago") +
           ")";
  const std::string what = command + when + (change.empty() ? "" : ": " + change);
  std::string stale;  // held, but by the holder's clock not renewed for its duration
  if (!r.identity.empty() && !lock_holder_gone(r)) {
    // One look cannot tell a live holder from one that is gone (LeaseLock watches the record for its duration):
    // renewTime, written by the holder's clock, says which is likely; a clock ahead of ours says neither.
    const int duration = r.duration_seconds > 0 ? r.duration_seconds : kLockDurationSeconds;
    if (r.renewed && *r.renewed > now + 1) {
      notes.converging.push_back(what + ", under way or abandoned (" + describe_lock_holder(r) + "; " +
                                 renewal_text(*r.renewed, now) +
                                 ", so one look cannot tell; the next command "
                                 "takes the lock over once the lease has stayed unrenewed for " +
                                 std::to_string(duration) + "s)");
      return notes;
    }
    if (r.renewed && now - *r.renewed <= duration) {
      notes.converging.push_back(what + ", under way (" + describe_lock_holder(r) + ")");
      notes.scaling = scaling_of(o);
      notes.scaling_by = command;
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

kube::LeaseRecord intent_left_by(const kube::LeaseRecord& lease, const json::object& intent) {
  kube::LeaseRecord r = lease;
  if (const auto* by = intent.if_contains("by"); r.holder.empty() && by != nullptr && by->is_object())
    r.holder = by->get_object();
  return r;
}

// What an intent records, without when and by whom: two writes that record the same key need one lease update.
std::string intent_key(change::Intent intent) {
  intent.at = 0;
  intent.by = {};
  return json::serialize(change::to_record(intent));
}

bool is_rollout_record(const json::value& text) {
  if (!text.is_string()) return false;
  json::error_code ec;
  const json::value record = json::parse(text.get_string(), ec);
  return !ec && record.is_object() && change::known_command(record.get_object()) == "rollout";
}

}  // namespace mindie::cmd
