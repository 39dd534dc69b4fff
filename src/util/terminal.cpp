#include "util/terminal.h"

namespace mindie::util {

std::string escape_terminal(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0xa0) {
      // U+0080..U+009F is 0xC2 0x80..0x9F in UTF-8.
      const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
      if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
        out += std::string("<U+00") + kHex[next >> 4] + kHex[next & 0xf] + ">";
        ++i;
      } else {
        out += static_cast<char>(c);
      }
    } else if (c == 0x1b) {
      out += "^[";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      out += '^';
      out += static_cast<char>(c + 0x40);
    } else if (c == 0x7f) {
      out += "^?";
    } else {
      out += static_cast<char>(c);  // a lone byte 0x80..0x9F: not a character, no terminal reads it as one
    }
  }
  return out;
}

}  // namespace mindie::util
