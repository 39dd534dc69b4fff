// kubectl_complete-mindie: kubectl (>= 1.26) runs it with the words typed after `kubectl mindie` to complete them.
// It execs `kubectl-mindie __complete WORDS...`, which prints Cobra's completion protocol. kubectl-mindie is looked up
// beside this executable's real path first (a release archive or krew's store holds both), then on PATH.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> args;
  std::string self = "kubectl-mindie";
  std::string sub = "__complete";
  args.push_back(self.data());
  args.push_back(sub.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);

  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    std::string path(buf, static_cast<std::size_t>(n));
    const auto slash = path.rfind('/');
    if (slash != std::string::npos) {
      const std::string sibling = path.substr(0, slash + 1) + "kubectl-mindie";
      if (access(sibling.c_str(), X_OK) == 0) execv(sibling.c_str(), args.data());
    }
  }
  execvp("kubectl-mindie", args.data());
  std::fprintf(stderr, "kubectl_complete-mindie: cannot run kubectl-mindie: %s\n", std::strerror(errno));
  // Cobra's protocol: an error directive, so the shell offers nothing rather than file names.
  std::puts(":1");
  return 1;
}
