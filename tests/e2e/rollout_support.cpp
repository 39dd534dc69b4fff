#include "rollout_support.h"

#include <doctest/doctest.h>

#include <sstream>

namespace e2e::rollout {

using nlohmann::json;

namespace {

const std::string& kNs = kExampleNamespace;

/// `s` quoted for sh.
std::string sh_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool pod_ready(const json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) return false;
  for (const auto& c : pod["status"].value("conditions", json::array()))
    if (c["type"] == "Ready") return c["status"] == "True";
  return false;
}

int watches = 0;

}  // namespace

json example(const std::string& mode) {
  json cfg = json::parse(read_file(kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = mode;
  return cfg;
}

Run deploy(const Cluster& sb, const TempDir& dir, const json& cfg, std::vector<std::string> extra) {
  std::vector<std::string> args = {"deploy", "-f", dir.write("user_config.json", cfg.dump(2)), "--scripts-dir",
                                   kScripts};
  args.insert(args.end(), extra.begin(), extra.end());
  return sb.mindie(args);
}

void deploy_then_change_image(const Cluster& sb, const TempDir& dir, json cfg, const std::vector<std::string>& extra) {
  auto run = deploy(sb, dir, cfg, extra);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  sb.wait_ready(kNs);
  cfg["motor_deploy_config"]["image_name"] = kNewImage;
  run = deploy(sb, dir, cfg, extra);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

void check_new_image(const Cluster& sb, const std::string& selector) {
  const json pods = kubectl_items(sb, "pods", kNs, selector);
  REQUIRE_FALSE(pods.empty());
  for (const auto& pod : pods) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    CAPTURE(pod["metadata"]["name"]);
    CHECK(pod["spec"]["containers"][0]["image"] == kNewImage);
  }
}

ReadyWatch::ReadyWatch(const Cluster& sb, const std::string& selector, const TempDir& dir)
    : events_(dir.path() + "/watch-" + std::to_string(++watches) + ".json"),
      watch_({"/bin/sh", "-c",
              "exec " + sh_quoted(kubectl_binary()) + " --kubeconfig " + sh_quoted(sb.admin_kubeconfig()) +
                  " get pods -n " + kNs + " -l " + sh_quoted(selector) +
                  " -w --watch-only --output-watch-events -o json >" + sh_quoted(events_)}) {
  for (const auto& pod : kubectl_items(sb, "pods", kNs, selector)) ready_[pod["metadata"]["name"]] = pod_ready(pod);
  initial_ = count();
}

int ReadyWatch::fewest_ready() {
  watch_.stop();
  int fewest = initial_;
  std::istringstream in(read_file(events_));
  // kubectl prints one JSON object per event, one after another; the last may be cut short by the stop.
  while ((in >> std::ws) && in.peek() != std::char_traits<char>::eof()) {
    json event;
    try {
      in >> event;
    } catch (const json::parse_error&) {
      break;
    }
    const json& pod = event["object"];
    if (event["type"] == "DELETED") ready_.erase(pod["metadata"]["name"].get<std::string>());
    else ready_[pod["metadata"]["name"]] = pod_ready(pod);
    fewest = std::min(fewest, count());
  }
  return fewest;
}

int ReadyWatch::count() const {
  int n = 0;
  for (const auto& [name, r] : ready_) n += r ? 1 : 0;
  return n;
}

}  // namespace e2e::rollout
