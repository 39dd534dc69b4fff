// KUBECTL_EXTERNAL_DIFF as kubectl diff honours it (k8s.io/kubectl pkg/cmd/diff/diff.go, DiffProgram): the two
// versions of every object written as files into a LIVE-* and a MERGED-* folder, and the program the variable names
// run on the two folders.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mindie::cmd {

/// One object's two versions as YAML ("" where it does not exist on that side), in the file kubectl names it.
struct DiffFile {
  std::string name;  ///< kube::diff_file_name
  std::string live;
  std::string merged;
};

/// The program and its arguments from KUBECTL_EXTERNAL_DIFF's value, split at spaces as kubectl does; an argument
/// holding anything but letters, digits, '-' and '=' is left out, with a warning in `dropped` (kubectl's rule, which
/// keeps a shell's metacharacters out). nullopt when `value` names no program.
struct ExternalDiff {
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> dropped;
};
std::optional<ExternalDiff> parse_external_diff(const std::string& value);

/// Writes `files` into two new private folders under $TMPDIR (else /tmp), LIVE-XXXXXX and MERGED-XXXXXX (an object
/// absent on one side is an empty file there, as kubectl writes it), runs `diff` with argv = program, the LIVE
/// folder, the MERGED folder, its arguments (kubectl's order), stdout and stderr inherited, found on PATH and
/// started directly, never through a shell; removes both folders; returns its exit status when 0 or 1. Throws
/// CommandError when it cannot start, is killed or exits above 1 (kubectl's "failed to run").
int run_external_diff(const ExternalDiff& diff, const std::vector<DiffFile>& files);

}  // namespace mindie::cmd
