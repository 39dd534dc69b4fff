// Retry a guarded write that met a conflict, as client-go's retry.RetryOnConflict does
// (kubernetes/client-go util/retry/util.go): the caller re-reads and re-checks at the start of each later attempt,
// so a conflict is never answered by overwriting what someone else wrote.
#pragma once

#include <functional>

#include "kube/client.h"

namespace mindie::kube {

/// True for 409 Conflict (a resourceVersion precondition failed).
inline bool conflicted(const ApiError& e) { return e.is_conflict(); }

/// Calls `attempt(n)` for n = 1, 2, ... and returns its result; an ApiError for which `retryable` holds is tried
/// again, at most `attempts` times in all, then rethrown. Anything else propagates at once.
template <class Attempt>
auto retry_on_conflict(int attempts, Attempt&& attempt,
                       const std::function<bool(const ApiError&)>& retryable = conflicted) -> decltype(attempt(1)) {
  for (int n = 1;; ++n) {
    try {
      return attempt(n);
    } catch (const ApiError& e) {
      if (!retryable(e) || n >= attempts) throw;
    }
  }
}

}  // namespace mindie::kube
