// Kubernetes' name, label and quantity syntax (apimachinery); see names.h.
#include "kube/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

namespace mindie::kube {

bool is_dns1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool is_dns1035_label(std::string_view s) { return is_dns1123_label(s) && s.front() >= 'a' && s.front() <= 'z'; }

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  // apimachinery's regex: [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* — no per-part length cap.
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    const std::string_view part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back()) ||
        !std::all_of(part.begin(), part.end(), [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool is_qualified_name(std::string_view s) {
  const std::size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!is_dns1123_subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return !name.empty() && is_label_value(name);
}

std::optional<long double> parse_quantity(std::string_view s) {
  // <signedNumber><suffix>, suffix: Ki Mi Gi Ti Pi Ei | m "" k M G T P E | e<signedNumber> / E<signedNumber>.
  std::size_t i = 0;
  if (i < s.size() && s[i] == '+') ++i;  // a leading '-' is a negative quantity: never a valid resource
  const std::size_t digits_begin = i;
  long double value = 0;
  std::size_t int_digits = 0, frac_digits = 0;
  const auto digit = [&] { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); };
  for (; digit(); ++i, ++int_digits) value = value * 10 + (s[i] - '0');
  if (i < s.size() && s[i] == '.') {
    ++i;
    long double scale = 0.1L;
    for (; digit(); ++i, ++frac_digits, scale /= 10) value += scale * (s[i] - '0');
  }
  if (int_digits + frac_digits == 0 || i == digits_begin) return std::nullopt;
  const std::string_view suffix = s.substr(i);
  static const std::array<std::pair<std::string_view, long double>, 14> kSuffixes = {{
      {"", 1.0L},
      {"m", 1e-3L},
      {"k", 1e3L},
      {"M", 1e6L},
      {"G", 1e9L},
      {"T", 1e12L},
      {"P", 1e15L},
      {"E", 1e18L},
      {"Ki", 1024.0L},
      {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L},
      {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L},
      {"Ei", 1152921504606846976.0L},
  }};
  for (const auto& [text, factor] : kSuffixes)
    if (suffix == text) return value * factor;
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::size_t j = 1;
    bool negative = false;
    if (suffix[j] == '+' || suffix[j] == '-') negative = suffix[j++] == '-';
    if (j >= suffix.size() || suffix.size() - j > 3) return std::nullopt;
    int exp = 0;
    for (; j < suffix.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(suffix[j]))) return std::nullopt;
      exp = exp * 10 + (suffix[j] - '0');
    }
    return value * std::pow(10.0L, negative ? -exp : exp);
  }
  return std::nullopt;
}

}  // namespace mindie::kube
