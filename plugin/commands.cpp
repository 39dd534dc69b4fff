#include "commands.h"

#include <algorithm>

#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/diff.h"
#include "cmd/doctor.h"
#include "cmd/get_config.h"
#include "cmd/history.h"
#include "cmd/list.h"
#include "cmd/logs.h"
#include "cmd/rollback.h"
#include "cmd/rollout.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "cmd/update_config.h"
#include "cmd/wait.h"
#include "version.h"

namespace mindie {

const std::vector<cmd::Command>& commands() {
  static const std::vector<cmd::Command> table = {
      cmd::deploy_command(),     cmd::diff_command(),     cmd::scale_command(),  cmd::update_config_command(),
      cmd::status_command(),     cmd::list_command(),     cmd::logs_command(),   cmd::wait_command(),
      cmd::rollout_command(),    cmd::delete_command(),   cmd::doctor_command(), cmd::history_command(),
      cmd::get_config_command(), cmd::rollback_command(), version_command(),
  };
  return table;
}

const cmd::Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string usage() {
  std::string out =
      "kubectl mindie deploys, scales and watches MindIE PyMotor inference services on Ascend clusters.\n"
      "\n"
      "Usage:\n"
      "  kubectl mindie COMMAND [flags]\n"
      "\n"
      "Commands:\n";
  for (const auto& c : commands()) {
    std::string name = "  " + c.name;
    name.resize(std::max<std::size_t>(name.size() + 2, 17), ' ');  // kubectl's two-space gutter, names aligned
    out += name + c.summary + "\n";
  }
  return out +
         "\nUse \"kubectl mindie COMMAND --help\" for more information about a command.\n"
         "Use \"kubectl mindie options\" for a list of global command-line options (applies to all commands).\n";
}

}  // namespace mindie
