// The vocabulary of input validation shared by every file kubectl-mindie reads (user_config.json, env.json, deploy
// --overrides, the StormService config): a Problem at a path, and one error that carries all of them, so an operator
// fixes a file in one round instead of one error per run.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace mindie::validation {

/// One validation problem: `path` is where in the input it is, in util::child_path's syntax
/// ("motor_deploy_config.p_instances_num", `roles.prefill.labels["example.com/team"]`, "volumes[0].name"); "" is the
/// document itself.
struct Problem {
  std::string path;
  std::string message;
};

/// Raised by the parsers when an input is not usable; carries every problem found, not just the first.
/// what() is "<source>: N problem(s)" followed by one "* path: message" line per problem ("(document)" for the
/// path ""), control characters shown as \u00XX.
class ValidationError : public std::runtime_error {
 public:
  ValidationError(std::string source, std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<Problem> problems_;
};

}  // namespace mindie::validation
