#include "sim/lending_report.hpp"
#include "sim/report_text.hpp"

#include "runtime/json_text.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace aloe::sim {
namespace {

namespace rt = aloe::runtime;



}  // namespace

const lending_result* off_run_of(const std::vector<lending_result>& runs, const lending_result& run) noexcept {
    for (const lending_result& x : runs)
        if (x.policy == "off" && x.nodes == run.nodes && x.cores == run.cores && x.ranks == run.ranks &&
            x.rank_work == run.rank_work && x.rank_noise == run.rank_noise && x.regions == run.regions && x.steps == run.steps)
            return &x;
    return nullptr;
}

lending_report report_lending(const std::vector<lending_result>& runs, const std::string& profile_name, std::uint64_t seed) {
    std::ostringstream table, csv, steps, json;
    table << "| nodes | ranks × cores | work | noise | k | policy | time (s) | step p50 / p95 (ms) | efficiency | vs off |"
             " moved (core-ms per node-step) | lends per node-step |\n"
             "|---:|---|---|---|---:|---|---:|---|---:|---:|---:|---:|\n";
    csv << "nodes,cores,ranks,rank_work,rank_noise,regions,policy,steps,rank_iterations,iteration_s,total_s,ideal_s,efficiency,"
           "ratio_to_off,ratio_to_ideal,p50_step_s,p95_step_s,network_s,busy_share,moved_core_s,moved_share,schedule_share,"
           "lends_per_node_step,sized_fraction,guard_trips,work_s,expected_work_s,iterations_run,expected_iterations,noise_events,wall_s\n";
    steps << "nodes,rank_work,rank_noise,regions,policy,step,step_s\n";
    json << "{\"tool\": \"aloe sim\", \"model\": \"ranks that lend cores (issue 19)\", \"version\": \"" << aloe::version()
         << "\", \"profile\": " << rt::json_quote(profile_name) << ", \"seed\": " << seed << ", \"runs\": [";
    bool first = true;
    for (const lending_result& r : runs) {
        const lending_result* off = off_run_of(runs, r);
        const double vs_off = off != nullptr && off->total_s > 0 ? r.total_s / off->total_s : NAN;
        const double p50 = percentile(r.step_s, 0.5), p95 = percentile(r.step_s, 0.95);
        const double node_steps = static_cast<double>(r.nodes) * r.steps;
        const double core_s = r.total_s * static_cast<double>(r.nodes) * r.cores;
        const double efficiency = r.total_s > 0 ? r.ideal_s / r.total_s : 0;
        std::string iterations;
        for (std::size_t i = 0; i < r.rank_iterations.size(); ++i) {
            if (i > 0) iterations += ':';
            iterations += std::to_string(r.rank_iterations[i]);
        }
        const std::string noise = r.rank_noise.empty() ? "-" : r.rank_noise;
        table << "| " << r.nodes << " | " << r.ranks << " × " << r.cores / r.ranks << (r.cores % r.ranks ? "+" : "") << " | "
              << r.rank_work << " | " << noise << " | " << r.regions << " | " << r.policy << " | " << fixed(r.total_s, 4) << " | "
              << fixed(p50 * 1e3, 3) << " / " << fixed(p95 * 1e3, 3) << " | " << fixed(efficiency, 3) << " | "
              << (std::isnan(vs_off) ? std::string("-") : fixed(vs_off, 3)) << " | " << fixed(r.moved_s / node_steps * 1e3, 3) << " | "
              << fixed(static_cast<double>(r.lends) / node_steps, 2) << " |\n";
        csv << r.nodes << ',' << r.cores << ',' << r.ranks << ",\"" << r.rank_work << "\",\"" << r.rank_noise << "\"," << r.regions
            << ",\"" << r.policy << "\"," << r.steps << ",\"" << iterations << "\"," << rt::json_number(r.iteration_s) << ','
            << rt::json_number(r.total_s) << ',' << rt::json_number(r.ideal_s) << ',' << rt::json_number(efficiency) << ','
            << (std::isnan(vs_off) ? std::string() : rt::json_number(vs_off)) << ','
            << rt::json_number(r.ideal_s > 0 ? r.total_s / r.ideal_s : 0) << ',' << rt::json_number(p50) << ',' << rt::json_number(p95)
            << ',' << rt::json_number(r.network_s) << ',' << rt::json_number(r.busy_s / core_s) << ',' << rt::json_number(r.moved_s)
            << ',' << rt::json_number(r.busy_s > 0 ? r.moved_s / r.busy_s : 0) << ',' << rt::json_number(r.schedule_s / core_s) << ','
            << rt::json_number(static_cast<double>(r.lends) / node_steps) << ','
            << rt::json_number(static_cast<double>(r.sized_steps) / node_steps) << ',' << r.guard_trips << ','
            << rt::json_number(r.work_s) << ',' << rt::json_number(r.expected_work_s) << ',' << r.iterations_run << ','
            << r.expected_iterations << ',' << r.noise_events << ',' << rt::json_number(r.wall_s) << '\n';
        for (std::size_t k = 0; k < r.step_s.size(); ++k)
            steps << r.nodes << ",\"" << r.rank_work << "\",\"" << r.rank_noise << "\"," << r.regions << ",\"" << r.policy << "\","
                  << k << ',' << rt::json_number(r.step_s[k]) << '\n';
        json << (first ? "" : ", ") << "{\"nodes\": " << r.nodes << ", \"cores\": " << r.cores << ", \"ranks\": " << r.ranks
             << ", \"rank_work\": " << rt::json_quote(r.rank_work) << ", \"rank_noise\": " << rt::json_quote(r.rank_noise)
             << ", \"regions\": " << r.regions << ", \"policy\": " << rt::json_quote(r.policy) << ", \"steps\": " << r.steps
             << ", \"total_s\": " << rt::json_number(r.total_s) << ", \"ideal_s\": " << rt::json_number(r.ideal_s)
             << ", \"efficiency\": " << rt::json_number(efficiency) << ", \"ratio_to_off\": "
             << (std::isnan(vs_off) ? std::string("null") : rt::json_number(vs_off)) << ", \"p50_step_s\": " << rt::json_number(p50)
             << ", \"p95_step_s\": " << rt::json_number(p95) << ", \"moved_core_s\": " << rt::json_number(r.moved_s)
             << ", \"lends_per_node_step\": " << rt::json_number(static_cast<double>(r.lends) / node_steps)
             << ", \"sized_fraction\": " << rt::json_number(static_cast<double>(r.sized_steps) / node_steps)
             << ", \"guard_trips\": " << r.guard_trips << ", \"work_s\": " << rt::json_number(r.work_s)
             << ", \"expected_work_s\": " << rt::json_number(r.expected_work_s) << ", \"wall_s\": " << rt::json_number(r.wall_s) << "}";
        first = false;
    }
    json << "]}\n";
    return {table.str(), csv.str(), steps.str(), json.str()};
}

}  // namespace aloe::sim
