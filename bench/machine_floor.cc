// What this machine charges for the two things the invoke path does most besides its own work:
// waking another process, and making a write durable. Every hop of a call wakes a process that
// was waiting (a stage, nats-server, Redis, PostgreSQL, a worker), and every hold, capture and
// ledger commit ends in an fdatasync, so these two figures bound what any design of the path can
// reach here (docs/benchmarks.md, "What one wake-up and one fsync cost").
//
//   bench_machine_floor [round_trips=50000] [fsyncs=5000] [dir=/tmp]
//
// Prints, per operation, wall time and the CPU time of every process involved:
//   - a one-byte pipe round trip between two processes, placed by the scheduler, then both
//     pinned to one core (no core has to be woken: the cost of the switch alone);
//   - a 200-byte append and fdatasync of a file in dir, with its voluntary context switches.
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "toolgate/base/time.h"

namespace {

using toolgate::MonotonicUs;

int64_t CpuUs(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1'000'000 + u.ru_utime.tv_usec +
         u.ru_stime.tv_usec;
}

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof set, &set);
}

// One process writes a byte, the other answers it, n times. pinned: both on core 0.
void PipeRoundTrips(int n, bool pinned) {
  int ping[2], pong[2];
  if (::pipe(ping) != 0 || ::pipe(pong) != 0) std::exit(1);
  const int64_t children_before = CpuUs(RUSAGE_CHILDREN);
  const int64_t self_before = CpuUs(RUSAGE_SELF);
  pid_t child = ::fork();
  if (child == 0) {
    if (pinned) Pin(0);
    char c;
    for (int i = 0; i < n; ++i) {
      if (::read(ping[0], &c, 1) != 1 || ::write(pong[1], &c, 1) != 1) ::_exit(1);
    }
    ::_exit(0);
  }
  if (pinned) Pin(0);
  char c = 'x';
  const int64_t start = MonotonicUs();
  for (int i = 0; i < n; ++i) {
    if (::write(ping[1], &c, 1) != 1 || ::read(pong[0], &c, 1) != 1) std::exit(1);
  }
  const int64_t wall = MonotonicUs() - start;
  ::waitpid(child, nullptr, 0);
  const int64_t cpu = CpuUs(RUSAGE_SELF) - self_before + CpuUs(RUSAGE_CHILDREN) - children_before;
  std::printf("pipe round trip (%s): wall %.1f us, cpu of both processes %.1f us\n",
              pinned ? "both on one core" : "placed by the scheduler",
              static_cast<double>(wall) / n, static_cast<double>(cpu) / n);
  for (int fd : {ping[0], ping[1], pong[0], pong[1]}) ::close(fd);
  if (pinned) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long i = 0; i < ::sysconf(_SC_NPROCESSORS_ONLN); ++i) CPU_SET(i, &all);
    ::sched_setaffinity(0, sizeof all, &all);
  }
}

void AppendAndSync(int n, const std::string& dir) {
  std::string path = dir + "/bench_machine_floor.XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  ::unlink(path.c_str());
  char record[200] = {};
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  const int64_t start = MonotonicUs();
  for (int i = 0; i < n; ++i) {
    if (::write(fd, record, sizeof record) != static_cast<ssize_t>(sizeof record) ||
        ::fdatasync(fd) != 0) {
      std::perror("write/fdatasync");
      std::exit(1);
    }
  }
  const int64_t wall = MonotonicUs() - start;
  ::getrusage(RUSAGE_SELF, &after);
  ::close(fd);
  auto us = [](const timeval& t) { return t.tv_sec * 1'000'000.0 + t.tv_usec; };
  std::printf(
      "append + fdatasync in %s: wall %.1f us, user %.1f us, system %.1f us, %.1f voluntary "
      "switches\n",
      dir.c_str(), static_cast<double>(wall) / n, (us(after.ru_utime) - us(before.ru_utime)) / n,
      (us(after.ru_stime) - us(before.ru_stime)) / n,
      static_cast<double>(after.ru_nvcsw - before.ru_nvcsw) / n);
}

}  // namespace

int main(int argc, char** argv) {
  const int round_trips = argc > 1 ? std::atoi(argv[1]) : 50000;
  const int fsyncs = argc > 2 ? std::atoi(argv[2]) : 5000;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  if (round_trips <= 0 || fsyncs <= 0) {
    std::fprintf(stderr, "usage: bench_machine_floor [round_trips] [fsyncs] [dir]\n");
    return 2;
  }
  PipeRoundTrips(round_trips, /*pinned=*/false);
  PipeRoundTrips(round_trips, /*pinned=*/true);
  AppendAndSync(fsyncs, dir);
  return 0;
}
