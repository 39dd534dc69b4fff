// Content digests, for records that must tell whether an object still holds what a command wrote.
#pragma once

#include <string>
#include <string_view>

namespace mindie::util {

/// The SHA-256 of `bytes` as 64 lowercase hex digits (OpenSSL's EVP). Throws std::runtime_error when OpenSSL fails.
std::string sha256_hex(std::string_view bytes);

}  // namespace mindie::util
