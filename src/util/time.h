// Time as the API server writes it, and as kubectl shows it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mindie::util {

/// Seconds since the epoch of an RFC 3339 timestamp as the API server writes them (metav1.Time
/// "2026-11-30T12:00:00Z", metav1.MicroTime with fractional seconds, or any writer's "+08:00" offset); fractions are
/// dropped. nullopt when `s` is not such a timestamp.
std::optional<std::int64_t> parse_rfc3339(const std::string& s);

/// `seconds_since_epoch` in UTC formatted by strftime's `format` ("%H:%M:%S UTC"; at most 63 characters out).
std::string utc_text(std::int64_t seconds_since_epoch, const char* format);

/// kubectl's short age ("45s", "3m20s", "5h", "2d4h") of `seconds`: k8s.io/apimachinery duration.HumanDuration
/// ("<invalid>" below -1 s, "0s" for -1).
std::string human_duration(std::int64_t seconds);

}  // namespace mindie::util
