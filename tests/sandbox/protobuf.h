// Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf) for the few built-in types
// kubectl's typed clients send that way (`kubectl create configmap|namespace|serviceaccount|role|...`). Field numbers
// follow k8s.io/api's generated.proto files.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace mindie::sandbox {

/// Thrown when the body is not a Kubernetes protobuf envelope or its kind is not one the sandbox can decode.
struct ProtobufError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The JSON form of a "k8s\0"-prefixed runtime.Unknown envelope. Empty strings, zero numbers and empty collections
/// are left out, as Go's JSON encoding (omitempty) would. Throws ProtobufError.
nlohmann::json decode_kubernetes_protobuf(const std::string& body);

}  // namespace mindie::sandbox
