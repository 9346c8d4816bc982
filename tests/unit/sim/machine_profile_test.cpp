// Profiles: the committed one parses, every profile round-trips, bad ones get named errors.
#include "sim/machine_profile.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace aloe::sim {
namespace {

const char* const minimal = R"({"format": "aloe-sim-profile/1", "cores": 4,
  "loop": {"iterations": 100, "iteration_s": 1e-6, "costs": {"kind": "uniform"}},
  "overheads": {"dequeue_s": 1e-8},
  "noise": [],
  "network": {"collective": "binomial", "alpha_s": 1e-6, "beta_s_per_byte": 0}})";

std::string error_of(const std::string& text) {
    try {
        parse_profile(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

std::string with(const std::string& path_json_patch) {
    nlohmann::json j = nlohmann::json::parse(minimal);
    j.merge_patch(nlohmann::json::parse(path_json_patch));
    return j.dump();
}

TEST(MachineProfile, TheCompiledInProfileParses) {
    const machine_profile p = builtin_profile();
    EXPECT_GE(p.cores, 1);
    EXPECT_GT(p.iteration_s, 0);
    EXPECT_FALSE(p.name.empty());
}

TEST(MachineProfile, RoundTrips) {
    machine_profile p = parse_profile(minimal);
    p.name = "round trip";
    p.noise.resize(5);
    p.noise[0].type = noise_source::kind::poisson;
    p.noise[0].rate_hz = 100;
    p.noise[0].length.shape = length_distribution::kind::lognormal;
    p.noise[0].length.mean_s = 1e-5;
    p.noise[0].length.sigma = 0.5;
    p.noise[0].cores = {1, 3};
    p.noise[1].type = noise_source::kind::periodic;
    p.noise[1].period_s = 1e-2;
    p.noise[1].length.shape = length_distribution::kind::bimodal;
    p.noise[1].length.short_s = 1e-5;
    p.noise[1].length.long_s = 1e-4;
    p.noise[1].length.long_fraction = 0.25;
    p.noise[2].type = noise_source::kind::slow_core;
    p.noise[2].core = 2;
    p.noise[2].factor = 1.25;
    p.noise[3].type = noise_source::kind::per_step;
    p.noise[3].probability = 0.5;
    p.noise[3].length.mean_s = 1e-3;
    p.noise[3].delay_s = 1e-4;
    p.noise[4].type = noise_source::kind::trace;
    p.noise[4].traces.push_back({0.5, {{1000, 20}, {250000, 100}}});
    p.halo_dims = 2;
    p.halo_bytes = 4096;
    const std::string once = to_json(p);
    EXPECT_EQ(to_json(parse_profile(once)), once);
}

TEST(MachineProfile, BadProfilesNameTheField) {
    EXPECT_NE(error_of("{").find("not JSON"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"format": "other/2"})")).find("format"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"cores": 0})")).find("cores: value 0 is outside [1, 4096]"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"cores": "four"})")).find("cores: expected an integer"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"loop": {"iteration_s": -1}})")).find("loop.iteration_s"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"loop": {"itertions": 5}})")).find("loop.itertions: unknown field"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"network": {"collective": "ring"}})")).find("network.collective: 'ring' is not one of"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"noise": [{"kind": "poisson", "rate_hz": 5}]})")).find("noise[0].length: missing"), std::string::npos);
    EXPECT_NE(error_of(with(R"({"noise": [{"kind": "poisson", "rate_hz": 5, "length": {"dist": "fixed", "mean_s": 1e-6}, "cores": [9]}]})"))
                  .find("noise[0].cores: core 9 is not below cores = 4"),
              std::string::npos);
    EXPECT_NE(error_of(with(R"({"noise": [{"kind": "periodic", "period_s": 1e-3, "length": {"dist": "fixed", "mean_s": 2e-3}}]})"))
                  .find("never lets the core run"),
              std::string::npos);
    EXPECT_NE(error_of(with(R"({"noise": [{"kind": "trace", "cpus": [{"cpu": 0, "measured_s": 1, "events_us": [[5, 1], [2, 1]]}]}]})"))
                  .find("not sorted"),
              std::string::npos);
    EXPECT_NE(error_of(with(R"({"noise": [{"kind": "trace", "file": "/nonexistent/trace.json"}]})")).find("cannot read"),
              std::string::npos);
    EXPECT_NE(error_of(with(R"({"overheads": {"dequeue_s": "fast"}})")).find("overheads.dequeue_s: expected a number"), std::string::npos);
    EXPECT_EQ(error_of(minimal), "");
}

TEST(MachineProfile, ReadingAMissingFileNamesIt) {
    try {
        read_profile("/nonexistent/profile.json");
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/profile.json"), std::string::npos);
    }
}

}  // namespace
}  // namespace aloe::sim
