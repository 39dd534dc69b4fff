#include "kube/pod_state.h"

#include <algorithm>

#include "util/json_path.h"
#include "util/time.h"

namespace mindie::kube {

namespace json = boost::json;
using util::find;
using util::num;
using util::str;

namespace {

/// The condition of `type` in `status`.conditions, or nullptr.
const json::value* condition(const json::value* status, std::string_view type) {
  if (const auto* conds = find(status, {"conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == type) return &c;
  }
  return nullptr;
}

}  // namespace

std::string PodState::last_exit() const {
  return last_exit_reason.empty() ? "" : last_exit_reason + " (exit code " + std::to_string(last_exit_code) + ")";
}

PodState read_pod_state(const json::value& pod, std::int64_t now) {
  PodState p;
  const json::value* status = find(&pod, {"status"});
  p.name = str(find(&pod, {"metadata", "name"}));
  p.phase = str(find(status, {"phase"}));
  p.ready = str(find(condition(status, "Ready"), {"status"})) == "True";
  p.terminating = find(&pod, {"metadata", "deletionTimestamp"}) != nullptr;
  p.node = str(find(&pod, {"spec", "nodeName"}));
  std::string waiting, waiting_message, terminated;
  if (const auto* specs = find(&pod, {"spec", "containers"}); specs && specs->is_array())
    p.containers = static_cast<std::int64_t>(specs->as_array().size());
  if (const auto* cs = find(status, {"containerStatuses"}); cs && cs->is_array()) {
    p.containers = std::max<std::int64_t>(p.containers, static_cast<std::int64_t>(cs->as_array().size()));
    for (const auto& c : cs->as_array()) {
      p.restarts += num(find(&c, {"restartCount"}));
      if (const auto* r = find(&c, {"ready"}); r && r->is_bool() && r->as_bool()) ++p.ready_containers;
      if (waiting.empty()) {
        waiting = str(find(&c, {"state", "waiting", "reason"}));
        waiting_message = str(find(&c, {"state", "waiting", "message"}));
      }
      if (terminated.empty()) terminated = str(find(&c, {"state", "terminated", "reason"}));
      if (p.last_exit_reason.empty()) {
        p.last_exit_reason = str(find(&c, {"lastState", "terminated", "reason"}));
        p.last_exit_code = num(find(&c, {"lastState", "terminated", "exitCode"}));
      }
    }
  }
  p.status = p.terminating ? "Terminating" : !waiting.empty() ? waiting : !terminated.empty() ? terminated : p.phase;
  p.created_at = str(find(&pod, {"metadata", "creationTimestamp"}));
  if (const auto created = util::parse_rfc3339(p.created_at)) p.age_seconds = std::max<std::int64_t>(0, now - *created);

  const json::value* scheduled = condition(status, "PodScheduled");
  if (p.terminating) {
    p.reason = "terminating since " + str(find(&pod, {"metadata", "deletionTimestamp"})) +
               " (a pod that stays is usually on an unreachable node or held by a finalizer)";
  } else if (p.ready) {
    // Running: earlier terminations (an OOM kill a restart recovered from) are history, not a reason.
  } else if (scheduled && str(find(scheduled, {"status"})) == "False") {
    p.reason = "unschedulable";
    if (const std::string m = str(find(scheduled, {"message"})); !m.empty()) p.reason += ": " + m;
  } else if (waiting == "ImagePullBackOff" || waiting == "ErrImagePull" || waiting == "InvalidImageName") {
    p.reason = "cannot pull the image (" + waiting + ")";
    if (!waiting_message.empty()) p.reason += ": " + waiting_message;
  } else if (p.last_exit_reason == "OOMKilled" || terminated == "OOMKilled") {
    p.reason = "out of memory: the container was OOM-killed (exit code 137), " + std::to_string(p.restarts) +
               " restarts; raise the memory limit or lower the engine's memory use";
  } else if (waiting == "CrashLoopBackOff") {
    p.reason = "crash loop: " + std::to_string(p.restarts) + " restarts";
    if (!p.last_exit_reason.empty()) p.reason += ", last exit " + p.last_exit();
  } else if (!waiting.empty()) {
    p.reason = "waiting: " + waiting;
    if (!waiting_message.empty()) p.reason += ": " + waiting_message;
  } else if (p.phase == "Failed" || p.phase == "Succeeded") {
    p.reason = "the pod has ended (" + p.phase + ")";
  } else if (p.phase == "Running") {
    p.reason = "running, but not ready (readiness probe failing)";
    // A crash-looping container runs between two crashes: its restarts say so whenever one looks.
    if (p.restarts > 0 && !p.last_exit_reason.empty())
      p.reason += "; " + std::to_string(p.restarts) + " restarts, last exit " + p.last_exit();
  } else {
    p.reason = p.phase.empty() ? "not ready" : "not ready (" + p.phase + ")";
  }
  return p;
}

}  // namespace mindie::kube
