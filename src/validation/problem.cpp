// ValidationError's message; see problem.h.
#include "validation/problem.h"

#include <sstream>
#include <utility>

namespace mindie::validation {

namespace {

/// `s` with control characters as \u00XX: a key holding NUL would otherwise end what() early (a C string) and an
/// ESC would reach the terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_what(const std::string& source, const std::vector<Problem>& problems) {
  std::ostringstream os;
  os << printable(source) << ": " << problems.size() << (problems.size() == 1 ? " problem" : " problems");
  for (const auto& p : problems)
    os << "\n* " << (p.path.empty() ? "(document)" : printable(p.path)) << ": " << printable(p.message);
  return os.str();
}

}  // namespace

ValidationError::ValidationError(std::string source, std::vector<Problem> problems)
    : std::runtime_error(format_what(source, problems)), source_(std::move(source)), problems_(std::move(problems)) {}

}  // namespace mindie::validation
