#include "base64.h"

#include <openssl/evp.h>

#include <limits>

namespace mindie::sandbox {

std::string base64_encode(std::string_view in) {
  if (in.size() > static_cast<std::size_t>(std::numeric_limits<int>::max() / 4 * 3)) return {};  // beyond EVP's int
  std::string out(4 * ((in.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0 || in.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return std::nullopt;
  std::string out(in.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes that padding stands for; drop them.
  std::size_t pad = 0;
  if (!in.empty() && in.back() == '=') pad = in.size() >= 2 && in[in.size() - 2] == '=' ? 2 : 1;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

}  // namespace mindie::sandbox
