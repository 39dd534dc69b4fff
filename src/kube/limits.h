// Size limits the API server enforces, checked before any request so a too-large object fails with the numbers, and
// the most this client holds of one answer.
#pragma once

#include <cstddef>

namespace mindie::kube {

/// All annotations of one object together, keys and values (apimachinery ValidateAnnotations:
/// TotalAnnotationSizeLimitB, 256 KiB).
inline constexpr std::size_t kMaxAnnotationsBytes = 256 * 1024;

/// The data of one ConfigMap, all keys together (core validation ValidateConfigMap: at most MaxSecretSize, 1 MiB).
inline constexpr std::size_t kMaxConfigMapBytes = 1024 * 1024;

/// The most one collected response body may hold (after decompression; streams hand theirs on piece by piece): a
/// bound against a server or proxy whose body never ends, far above any real answer. One object is at most 1.5 MiB
/// (etcd's default request size limit, etcd.io docs "System limits"), a list this product reads is one namespace's
/// objects or one page of a paged list, tens of MiB on a big cluster; etcd's whole database is 2 GiB by default
/// (--quota-backend-bytes).
inline constexpr std::size_t kMaxResponseBodyBytes = 256 * 1024 * 1024;

}  // namespace mindie::kube
