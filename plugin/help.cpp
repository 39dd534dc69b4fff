#include "help.h"

#include <algorithm>
#include <sstream>

namespace mindie {

namespace po = boost::program_options;

namespace {

/// The default as kubectl prints it: false for a switch, a number as it is, text between quotes ('' when none).
std::string shown_default(const po::option_description& d) {
  const auto& semantic = *d.semantic();
  if (semantic.max_tokens() == 0) return "false";
  const std::string name = semantic.name();  // "arg (=10m)", "[=arg(=client)] (=none)", "arg"
  std::string value;
  if (name.size() > 1 && name.back() == ')') {
    const auto at = name.rfind(" (=");
    if (at != std::string::npos) value = name.substr(at + 3, name.size() - at - 4);
  }
  const bool number = !value.empty() && std::all_of(value.begin(), value.end(),
                                                    [](char c) { return (c >= '0' && c <= '9') || c == '-'; });
  return number || value == "true" ? value : "'" + value + "'";  // a boolean flag on by default: --watch=true
}

/// `text` wrapped at 80 columns after a tab (8 columns), each line tab-indented.
std::string wrapped(const std::string& text) { return wrap_words(text, "\t", 8, "\t", 8, 80); }

std::size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string wrap_words(const std::string& text, std::string head, std::size_t column, const std::string& indent,
                       std::size_t indent_width, std::size_t limit) {
  std::istringstream words(text);
  std::string word;
  bool first = true;
  while (words >> word) {
    if (!first && column + 1 + word.size() > limit) {
      head += "\n" + indent;
      column = indent_width;
    } else if (!first) {
      head += ' ';
      ++column;
    }
    head += word;
    column += word.size();
    first = false;
  }
  return head;
}

std::string flag_usages(const po::options_description& desc) {
  std::string out;
  for (const auto& d : desc.options()) {
    const std::string longer = d->canonical_display_name(po::command_line_style::allow_long);
    const std::string shorter = d->canonical_display_name(po::command_line_style::allow_dash_for_short);
    const bool has_short = shorter.size() == 2 && shorter[0] == '-' && shorter != longer;
    out += "    " + (has_short ? shorter + ", " : std::string()) + longer + "=" + shown_default(*d) + ":\n" +
           wrapped(d->description()) + "\n\n";
  }
  return out;
}

std::string command_help(const cmd::Command& c, const po::options_description& own) {
  std::string out = c.description + "\n\nExamples:\n" + c.examples + "\nOptions:\n" + flag_usages(own) + "Usage:\n  " +
                    c.synopsis + "\n";
  if (c.global_flags)
    out += "\nUse \"kubectl mindie options\" for a list of global command-line options (applies to all commands).\n";
  return out;
}

std::string options_help(const po::options_description& globals) {
  return "The following options can be passed to any command:\n\n" + flag_usages(globals);
}

std::vector<std::string> suggestions(const std::string& typed, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names)
    if (edits(typed, name) <= 2 || (!typed.empty() && name.rfind(typed, 0) == 0)) out.push_back(name);
  return out;
}

}  // namespace mindie
