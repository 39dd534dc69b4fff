// What the namespace lock (cmd/lock.h) writes of this process and reads of its holders: shared by the lock and
// its recovery.
#pragma once

#include <cstdint>
#include <string>

#include "change/intent.h"

namespace mindie::cmd {

/// This host's name ("unknown-host" when it cannot be read).
std::string host_name();
/// This process's PID namespace ("pid:[4026531836]"), "" when unknown.
std::string pid_namespace();
/// The effective user's name ("uid N" without one).
std::string user_name();
/// Seconds since the epoch by this host's clock.
std::int64_t now_seconds();
/// What a lease's renewTime says at `now`, for people: "last renewed 5s ago", or how far it is ahead of our clock.
std::string renewal_text(std::int64_t renewed, std::int64_t now);
/// The command that frees the lock of a holder confirmed gone, keeping its record of an unfinished change.
std::string free_lock_hint(const std::string& ns);
/// What `intent` records, without when and by whom: two writes with the same key need one lease update.
std::string intent_key(change::Intent intent);

/// Whether `text` (the lock's intent annotation's value) records a rollout.
bool is_rollout_record(const boost::json::value& text);

}  // namespace mindie::cmd
