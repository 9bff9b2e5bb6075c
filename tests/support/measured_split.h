// Workloads that measure the CPU time each of their functions took, with their thread's own
// clock around every call: the accuracy tests compare a profile's shares with that measured
// split. On a shared machine the time an iteration takes changes during a run, and that
// change is not the profiler's error.
//  - tests/programs/measured_split: func_a/b/c/d, 4/3/2/1 units of work a round.
//  - tests/programs/measured_shlib: lib_hot 5, main_local 3, lib_cold 2 units a round;
//    main_local in the executable, lib_hot and lib_cold in libmeasuredshlib.so.
#pragma once

#include <map>
#include <string>

namespace tally::test {

std::string measured_split_program();
std::string measured_shlib_program();

// The CPU time (ms) per NAME from the program's line "cpu_ns NAME=N NAME=N ..." anywhere
// in `output`, and the shares (percent of their sum); a test failure and an empty map
// when there is no such line or it measured nothing.
std::map<std::string, double> measured_cpu_ms(const std::string& output);
std::map<std::string, double> measured_cpu_shares(const std::string& output);

// The same for measured_split, keyed func_a..func_d (it prints "cpu_ns a=N b=N c=N d=N").
std::map<std::string, double> measured_split_ms(const std::string& output);
std::map<std::string, double> measured_split_shares(const std::string& output);

}  // namespace tally::test
