// Base64 (RFC 4648, standard alphabet, padded) for the sandbox: kubeconfig certificate data, protobuf bytes fields
// shown as JSON (as kube-apiserver encodes []byte), and opaque continue tokens. Backed by OpenSSL's EVP codec.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mindie::sandbox {

/// `in` encoded as padded standard base64, no line breaks.
std::string base64_encode(std::string_view in);

/// The bytes of padded standard base64 `in`; std::nullopt when `in` is not valid base64 (wrong length, a character
/// outside the alphabet, misplaced padding).
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace mindie::sandbox
