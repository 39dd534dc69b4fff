// What `kubectl mindie version` reports; defined in the source cmake/VersionInfo.cmake generates at build time.
#pragma once

namespace mindie::build {
const char* git_commit();      ///< full commit hash, or "unknown" (built outside a git checkout)
const char* git_tree_state();  ///< "clean", "dirty" (uncommitted changes to tracked files) or "unknown"
const char* build_date();      ///< UTC, RFC 3339 ("2025-01-31T12:00:00Z")
}  // namespace mindie::build
