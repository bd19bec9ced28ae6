//===- Process.cpp - Run a program without a shell ------------------------===//
//
// `npucc check` builds and runs the generated C. Its --cc/--cflags are split
// at whitespace into arguments (no shell: quotes, `$`, `;` and globs are
// passed through literally) and run with fork/execvp, output to a log file.
//
//===----------------------------------------------------------------------===//
#include <csignal>
#include "Commands.h"

#include <cctype>
#include <cerrno>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace npucc::tool {

std::vector<std::string> splitArgs(const std::string &text) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty())
        r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    r.push_back(cur);
  return r;
}

int runProcess(const std::vector<std::string> &argv, const std::string &cwd,
               const std::string &logPath) {
  if (argv.empty())
    return 127;
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return 127;
  if (pid == 0) {
    int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || chdir(cwd.c_str()) != 0)
      _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    execvp(args[0], args.data());
    const char msg[] = "npucc: cannot run the program (not found or not executable)\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string exitText(int status) {
  if (status == 127)
    return "exit status 127: not run, or command not found";
  if (status <= 128)
    return "exit status " + std::to_string(status);
  int sig = status - 128;
  const char *name = sig == SIGSEGV   ? "SIGSEGV"
                     : sig == SIGFPE  ? "SIGFPE"
                     : sig == SIGABRT ? "SIGABRT"
                     : sig == SIGBUS  ? "SIGBUS"
                     : sig == SIGILL  ? "SIGILL"
                     : sig == SIGKILL ? "SIGKILL"
                                      : nullptr;
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

} // namespace npucc::tool
