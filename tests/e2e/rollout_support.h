// What the rollout e2e tests share: the example in a deploy mode, a deploy followed by an image change that reaches
// no running pod, the check that pods run the new image, and a watch of the fewest ready pods during a rollout.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace e2e::rollout {

inline constexpr const char* kNewImage = "mindie-motor-vllm:next";

/// The shared example, in deploy mode `mode`.
nlohmann::json example(const std::string& mode);

/// kubectl mindie deploy of `cfg` (written into `dir`) with the shared scripts and `extra` flags.
Run deploy(const Cluster& sb, const TempDir& dir, const nlohmann::json& cfg, std::vector<std::string> extra = {});

/// Deploys `cfg` (with `extra` flags), waits until ready, then deploys it again with kNewImage (which reaches no
/// running pod).
void deploy_then_change_image(const Cluster& sb, const TempDir& dir, nlohmann::json cfg,
                              const std::vector<std::string>& extra = {});

/// Every pod of `selector` in the example's namespace that is not being deleted runs kNewImage.
void check_new_image(const Cluster& sb, const std::string& selector);

/// Watches the pods of `selector` (kubectl get -w --output-watch-events, into a file so that the watch never waits
/// for the test to read it), from the state listed at its start, and keeps the fewest ready pods it saw at once:
/// ready is the Ready condition without a deletionTimestamp.
class ReadyWatch {
 public:
  ReadyWatch(const Cluster& sb, const std::string& selector, const TempDir& dir);
  int initial() const { return initial_; }
  /// Stops the watch and returns the fewest ready pods seen.
  int fewest_ready();

 private:
  int count() const;
  std::string events_;
  Background watch_;
  std::map<std::string, bool> ready_;
  int initial_ = 0;
};

}  // namespace e2e::rollout
