#include "rank_record.hpp"

#include "common/json_writer.hpp"

#include <stdexcept>

namespace jacobi3d_mpi {

void rank_record::reserve(int steps) {
    for (std::vector<double>* v : {&compute_s, &wait_s, &halo_s, &step_s}) v->reserve(static_cast<std::size_t>(steps));
}

std::string rank_record::json() const {
    aloe_apps::json_writer j;
    j.begin_object().key("rank").value(rank).key("host").value(host);
    j.key("cpus").begin_array();
    for (const int c : cpus) j.value(c);
    j.end_array();
    j.key("thread_cpus").begin_array();
    for (const int c : thread_cpus) j.value(c);
    j.end_array();
    j.key("threads").value(threads);
    j.key("coords").begin_array().value(where.coords[0]).value(where.coords[1]).value(where.coords[2]).end_array();
    j.key("offset").begin_array().value(where.offset.x).value(where.offset.y).value(where.offset.z).end_array();
    j.key("block").begin_array().value(where.size.x).value(where.size.y).value(where.size.z).end_array();
    const auto series = [&](const char* key, const std::vector<double>& v) {
        j.key(key).begin_array();
        for (const double x : v) j.value(x);
        j.end_array();
    };
    series("compute_s", compute_s);
    series("wait_s", wait_s);
    series("halo_s", halo_s);
    series("step_s", step_s);
    j.key("noise").value(noise).key("noise_seed").value(static_cast<std::int64_t>(noise_seed));
    j.key("noise_events").value(noise_events).key("noise_injected_s").value(noise_injected_s);
    j.key("background").value(background);
    j.end_object();
    return j.text();
}

std::vector<std::string> gather_text(MPI_Comm comm, const std::string& text) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (text.size() > static_cast<std::size_t>(1) << 30) throw std::runtime_error("a rank's record is too large to gather");
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
    std::vector<int> displacements(lengths.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        displacements[r] = static_cast<int>(total);
        total += static_cast<std::size_t>(lengths[r]);
        if (total > static_cast<std::size_t>(1) << 30) throw std::runtime_error("the ranks' records are too large to gather");
    }
    std::string all(total, '\0');
    MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(), MPI_CHAR, 0, comm);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r)
        out.push_back(all.substr(static_cast<std::size_t>(displacements[r]), static_cast<std::size_t>(lengths[r])));
    return out;
}

}  // namespace jacobi3d_mpi
