#include "util/time.h"

#include <cctype>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace mindie::util {

std::optional<std::int64_t> parse_rfc3339(const std::string& s) {
  std::tm tm{};
  std::istringstream in(s);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  std::int64_t t = timegm(&tm);
  if (in.peek() == '.') {
    in.get();
    while (std::isdigit(in.peek())) in.get();
  }
  char c = 0;
  if (!(in >> c)) return std::nullopt;
  if (c == 'Z' || c == 'z') return in.peek() == std::char_traits<char>::eof() ? std::optional(t) : std::nullopt;
  if (c != '+' && c != '-') return std::nullopt;
  int hh = 0, mm = 0;
  char colon = 0;
  if (!(in >> hh >> colon >> mm) || colon != ':' || hh > 23 || mm > 59 || hh < 0 || mm < 0) return std::nullopt;
  if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  const std::int64_t offset = (hh * 60 + mm) * 60;
  return c == '+' ? t - offset : t + offset;
}

std::string utc_text(std::int64_t seconds_since_epoch, const char* format) {
  const std::time_t t = static_cast<std::time_t>(seconds_since_epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  return std::string(buf, std::strftime(buf, sizeof buf, format, &tm));
}

std::string human_duration(std::int64_t seconds) {
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  const std::int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const std::int64_t s = seconds % 60;
    return std::to_string(minutes) + "m" + (s ? std::to_string(s) + "s" : "");
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  const std::int64_t hours = minutes / 60;
  if (hours < 8) {
    const std::int64_t m = minutes % 60;
    return std::to_string(hours) + "h" + (m ? std::to_string(m) + "m" : "");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const std::int64_t h = hours % 24;
    return std::to_string(hours / 24) + "d" + (h ? std::to_string(h) + "h" : "");
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const std::int64_t d = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (d ? std::to_string(d) + "d" : "");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

}  // namespace mindie::util
