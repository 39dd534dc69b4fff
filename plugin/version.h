// kubectl mindie version: the version, git commit, tree state, build date and platform of this binary.
#pragma once

#include "cmd/command.h"

namespace mindie {

/// The version command for the command table (plugin/commands.cpp); `--version` runs it too.
cmd::Command version_command();

}  // namespace mindie
