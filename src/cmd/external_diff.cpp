#include "cmd/external_diff.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cmd/common.h"

extern char** environ;

namespace mindie::cmd {

namespace fs = std::filesystem;

namespace {

bool plain_argument(const std::string& a) {
  for (char c : a)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '=') return false;
  return !a.empty();
}

/// A new folder "<TMPDIR>/<prefix>-XXXXXX", mode 0700 (mkdtemp).
std::string make_folder(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw CommandError("cannot create a folder for KUBECTL_EXTERNAL_DIFF: " + pattern + ": " + std::strerror(errno));
  return pattern;
}

/// Removes the two folders when the diff is done, however it ends.
struct Folders {
  std::string live, merged;
  ~Folders() {
    std::error_code ec;
    if (!live.empty()) fs::remove_all(live, ec);
    if (!merged.empty()) fs::remove_all(merged, ec);
  }
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw CommandError("cannot write " + path + " for KUBECTL_EXTERNAL_DIFF");
}

}  // namespace

std::optional<ExternalDiff> parse_external_diff(const std::string& value) {
  ExternalDiff d;
  std::size_t start = 0;
  bool first = true;
  while (start <= value.size()) {
    const std::size_t sp = value.find(' ', start);
    const std::string word = value.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
    if (first) d.program = word;
    else if (plain_argument(word)) d.args.push_back(word);
    else d.dropped.push_back(word);
    first = false;
    if (sp == std::string::npos) break;
    start = sp + 1;
  }
  if (d.program.empty()) return std::nullopt;
  return d;
}

int run_external_diff(const ExternalDiff& diff, const std::vector<DiffFile>& files) {
  Folders folders;
  folders.live = make_folder("LIVE");
  folders.merged = make_folder("MERGED");
  for (const auto& f : files) {
    write_text(folders.live + "/" + f.name, f.live);
    write_text(folders.merged + "/" + f.name, f.merged);
  }
  std::vector<std::string> argv = {diff.program, folders.live, folders.merged};
  argv.insert(argv.end(), diff.args.begin(), diff.args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  std::cout.flush();  // what was printed so far comes before the program's output
  std::cerr.flush();
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, diff.program.c_str(), nullptr, nullptr, c_argv.data(), environ);
  if (rc != 0) throw CommandError("failed to run \"" + diff.program + "\": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw CommandError("failed to run \"" + diff.program + "\": killed by signal " + std::to_string(WTERMSIG(status)));
  const int code = WEXITSTATUS(status);
  if (code > 1) throw CommandError("failed to run \"" + diff.program + "\": exit status " + std::to_string(code));
  return code;
}

}  // namespace mindie::cmd
