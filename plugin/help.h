// kubectl's help layout (k8s.io/kubectl pkg/util/templates: templater.go, help_flags_printer.go): a command's
// --help as description, Examples, Options ("    -f, --filename='':" then the usage on a tab-indented line), Usage
// and a pointer to `kubectl mindie options`, which lists the flags every command takes.
#pragma once

#include <boost/program_options.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "cmd/command.h"

namespace mindie {

/// The flags of `desc` as kubectl prints them: "    -f, --filename='':" (or "    --wait=false:"), the default
/// shown as kubectl shows it ('' around text, false for a switch), then the usage wrapped after a tab, a blank
/// line after each.
std::string flag_usages(const boost::program_options::options_description& desc);

/// `kubectl mindie COMMAND --help`: `own` holds the command's own flags (the global ones are on options_help()).
std::string command_help(const cmd::Command& c, const boost::program_options::options_description& own);

/// `kubectl mindie options`: the flags every command takes.
std::string options_help(const boost::program_options::options_description& globals);

/// `head` (`column` columns wide), then the words of `text` wrapped at `limit` columns, each further line starting
/// with `indent` (`indent_width` columns wide).
std::string wrap_words(const std::string& text, std::string head, std::size_t column, const std::string& indent,
                       std::size_t indent_width, std::size_t limit);

/// The commands of `names` within two edits of `typed` or starting with it, as Cobra suggests them ("Did you mean
/// this?"), in `names`' order.
std::vector<std::string> suggestions(const std::string& typed, const std::vector<std::string>& names);

}  // namespace mindie
