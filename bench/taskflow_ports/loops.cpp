// The two plain-loop benchmarks, one aloe::parallel_for each:
//
// for_each (taskflow/benchmarks/for_each): v[i] = tan(v[i]) over a vector of N doubles,
// refilled with rand() before every round (untimed); N = 10, 100, … 10^8.
//
// reduce_sum (taskflow/benchmarks/reduce_sum): the sum of a vector of N doubles (all zero:
// theirs is only ever resized); N = 10, 100, … 10^9 (8 GB at the last size). Each thread
// adds its subranges into its own cache line, and the caller adds the team's partial sums.
//
// Bodies take subranges (step 1: a plain index loop over [first, bound)). --schedule names
// the schedule; the defaults are below.
#include "ports.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/team.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace taskflow_ports {
namespace {

// for_each: `guided,divisor=4` (chunks of remaining/(4·threads); Taskflow's default guided
// partitioner cuts remaining/(2·threads)). The iterations cost the same, but the threads do
// not run at the same speed on a shared machine, and a static block cannot give its excess
// away: on the 2-vCPU VM static took 1.18× Taskflow's time and this 0.99× oneTBB's (3
// interleaved runs, bench/results/taskflow-ports-20261126-quiet/schedules.md).
constexpr const char* for_each_schedule = "guided,divisor=4";
// reduce_sum: `guided,divisor=4` too. It is bound by memory bandwidth, but on the 2-vCPU VM
// the two halves of the 8 GB vector are not read at the same speed: in 6 of 10 static runs
// one thread waited 23-69 ms for the other at the largest size (loop statistics), guided
// never more than 0.1 ms; 10 alternated runs: static 335 ms median (251-378), guided 306
// (258-334).
constexpr const char* reduce_sum_schedule = "guided,divisor=4";

aloe::schedule loop_schedule(const options& o, const char* benchmark, const char* default_text) {
    const std::string text = o.schedule.empty() ? default_text : o.schedule;
    aloe::schedule s;
    std::string why;
    if (!aloe::schedule::try_parse(text, s, why)) bad_choice(benchmark, "schedule", text, why);
    return s;
}

struct alignas(std::hardware_destructive_interference_size) partial_sum {
    double value = 0;
};

// A sink the compiler cannot see through, so the sum is computed.
volatile double reduce_sink = 0;

}  // namespace

void run_for_each(const options& o) {
    const aloe::schedule s = loop_schedule(o, "for_each", for_each_schedule);
    std::vector<double> values;
    print_header();
    for (std::size_t n = 10; n <= 100000000; n *= 10) {
        values.resize(n);
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            for (double& v : values) v = std::rand();
            const double probe = values[n / 2];
            total_us += static_cast<double>(time_us([&] {
                            double* data = values.data();
                            aloe::parallel_for(0, static_cast<std::int64_t>(n), s, [data](aloe::subrange r, int) {
                                for (std::int64_t i = r.first(); i < r.bound(); ++i) data[i] = std::tan(data[i]);
                            });
                        }).count());
            if (values[n / 2] != std::tan(probe)) fail("for_each", "element " + std::to_string(n / 2) + " was not updated once");
        }
        print_row(n, total_us, o.num_rounds);
    }
}

void run_reduce_sum(const options& o) {
    const aloe::schedule s = loop_schedule(o, "reduce_sum", reduce_sum_schedule);
    std::vector<double> values;
    std::vector<partial_sum> partial(static_cast<std::size_t>(aloe::team::global().size()));
    print_header();
    for (std::size_t n = 10; n <= 1000000000; n *= 10) {
        values.resize(n);
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            double sum = 0;
            total_us += static_cast<double>(time_us([&] {
                            for (partial_sum& p : partial) p.value = 0;
                            const double* data = values.data();
                            partial_sum* out = partial.data();
                            aloe::parallel_for(0, static_cast<std::int64_t>(n), s, [data, out](aloe::subrange r, int thread) {
                                double local = 0;
                                for (std::int64_t i = r.first(); i < r.bound(); ++i) local += data[i];
                                out[thread].value += local;
                            });
                            for (const partial_sum& p : partial) sum += p.value;
                        }).count());
            reduce_sink = sum;
            if (sum != 0.0) fail("reduce_sum", "the sum of zeros is " + std::to_string(sum));
        }
        print_row(n, total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports
