// Size limits the API server enforces, checked before any request so a too-large object fails with the numbers.
#pragma once

#include <cstddef>

namespace mindie::kube {

/// All annotations of one object together, keys and values (apimachinery ValidateAnnotations:
/// TotalAnnotationSizeLimitB, 256 KiB).
inline constexpr std::size_t kMaxAnnotationsBytes = 256 * 1024;

/// The data of one ConfigMap, all keys together (core validation ValidateConfigMap: at most MaxSecretSize, 1 MiB).
inline constexpr std::size_t kMaxConfigMapBytes = 1024 * 1024;

}  // namespace mindie::kube
