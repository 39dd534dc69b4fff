// The baseline's history: each write of motor-config recorded as an apps/v1 ControllerRevision owned by it, numbered
// as a StatefulSet's revisions are (kubernetes/kubernetes pkg/controller/history/controller_history.go), holding what
// the baseline held and who wrote it. Pure: objects in, objects out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mindie/baseline.h"

namespace mindie::revision {

/// Revisions are named "motor-config-<revision>".
inline constexpr const char* kNamePrefix = "motor-config-";
/// Label on every revision naming the ConfigMap whose history it is (the selector history lists by).
inline constexpr const char* kHistoryLabel = "kubectl-mindie/history-of";
/// Annotations: the command that wrote the baseline ("scale", "rollback to 2"), who ran it, when (RFC 3339 UTC).
inline constexpr const char* kCommandAnnotation = "kubectl-mindie/command";
inline constexpr const char* kUserAnnotation = "kubectl-mindie/user";
inline constexpr const char* kTimeAnnotation = "kubectl-mindie/recorded-at";
/// The key of `data` holding the SHA-256 of the stored scripts (every motor-config key but the three files).
inline constexpr const char* kScriptsDigestKey = "scripts.sha256";
/// Revisions kept when --history-limit is not given (kubectl's revisionHistoryLimit default).
inline constexpr int kDefaultHistoryLimit = 10;

/// What a revision holds of the baseline.
struct Content {
  std::string user_config;               ///< user_config.json, byte for byte
  std::optional<std::string> env;        ///< env.json, when stored
  std::optional<std::string> overrides;  ///< overrides.yaml, when stored
  std::string scripts_digest;            ///< scripts_digest() of the stored scripts
  bool operator==(const Content&) const = default;
};

/// Who wrote a revision, and how.
struct Author {
  std::string command;  ///< "deploy", "scale", "update-config", "rollback to 3"
  std::string user;     ///< "alice@host-1"
  std::int64_t at = 0;  ///< seconds since the epoch
};

/// One recorded revision.
struct Revision {
  std::int64_t number = 0;
  std::string name;
  std::string uid;  ///< metadata.uid as listed: a prune deletes only the revision it listed
  Content content;
  std::string command;
  std::string user;
  std::string at;  ///< RFC 3339 as recorded ("" unknown)
};

/// SHA-256 of `scripts` (key NUL text NUL, in key order); "" when there are none.
std::string scripts_digest(const std::map<std::string, std::string>& scripts);

/// What `stored` holds, as a revision records it; nullopt when it has no user_config.json.
std::optional<Content> content_of(const baseline::Baseline& stored);

/// "motor-config-<number>".
std::string name_of(std::int64_t number);

/// The ControllerRevision recording `content` as revision `number` of `config_map` (motor-config as read: its
/// namespace and uid make the ownerReference, so that deleting motor-config garbage-collects its history).
boost::json::object render(const boost::json::object& config_map, std::int64_t number, const Content& content,
                           const Author& author);

/// Reads a ControllerRevision as listed; nullopt when it is not one of ours (no revision number, no user_config.json).
std::optional<Revision> parse(const boost::json::object& controller_revision);

/// The revisions of a LIST's items, oldest (lowest number) first; what is not ours is left out.
std::vector<Revision> from_items(const boost::json::array& items);

/// The names of the revisions to delete so that `limit` remain, oldest first (`sorted` as from_items gives it).
std::vector<std::string> to_prune(const std::vector<Revision>& sorted, int limit);

/// What `current` changed relative to `previous`: the user_config.json paths that differ (as update-config and scale
/// compare them, policy::comparable), then "env.json", "overrides.yaml", "scripts" when those differ. Without a
/// previous revision: {"(first recorded)"}.
std::vector<std::string> changes(const Revision* previous, const Revision& current);

/// How a rollback goes from the baseline as it is (`current`) to a revision's (`target`), through the commands' own
/// guarded paths: the counts as scale changes them, then the rest as update-config (only its whitelisted paths and
/// env.json differ) or as a deploy of the revision's files.
struct RollbackPlan {
  bool counts = false;    ///< instance counts differ (scale)
  bool settings = false;  ///< beyond the counts only update-config's whitelisted paths and env.json differ
  bool redeploy = false;  ///< anything else differs (other paths, the overrides): a deploy of the revision's files
  std::vector<std::string> redeploy_paths;  ///< what needs the deploy ("overrides.yaml" among them)
  std::string refusal;                      ///< non-empty: only delete + deploy can go there (deploy_mode changes)
  std::vector<std::string> kept;            ///< what it cannot put back, kept as it is (said in a warning)
};

/// The plan from `current` to `target`. Pure.
RollbackPlan plan_rollback(const Content& current, const Content& target);

}  // namespace mindie::revision
