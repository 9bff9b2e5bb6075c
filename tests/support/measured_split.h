// tests/programs/measured_split: the split workload (func_a/b/c/d, 4/3/2/1 units of work a
// round) that measures the CPU time each function took, with its thread's own clock around
// every call. The accuracy tests compare a profile's shares with that measured split: on a
// shared machine the time an iteration takes changes during a run, and that change is not
// the profiler's error.
#pragma once

#include <map>
#include <string>

namespace tally::test {

std::string measured_split_program();

// The CPU time (ms) each function measured, from the program's line
// "cpu_ns a=N b=N c=N d=N" anywhere in `output`, keyed func_a..func_d; a test failure and
// an empty map when there is no such line.
std::map<std::string, double> measured_split_ms(const std::string& output);

// The shares (percent of the four functions' CPU time) from the program's line
// "cpu_ns a=N b=N c=N d=N" anywhere in `output`, keyed func_a..func_d; a test failure and
// an empty map when there is no such line.
std::map<std::string, double> measured_split_shares(const std::string& output);

}  // namespace tally::test
