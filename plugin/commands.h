// The command table of kubectl-mindie: every subcommand, in the order --help lists them.
#pragma once

#include <string>
#include <vector>

#include "cmd/command.h"

namespace mindie {

/// The subcommands (cmd::Command), in --help's order. A new subcommand is its own file pair plus one line here.
const std::vector<cmd::Command>& commands();

/// The command named `name`, or nullptr.
const cmd::Command* find_command(const std::string& name);

/// `kubectl mindie --help`: what the plugin does, the command list (name and summary from the table) and how to
/// get a command's help.
std::string usage();

}  // namespace mindie
