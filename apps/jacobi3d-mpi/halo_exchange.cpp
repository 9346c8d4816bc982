#include "halo_exchange.hpp"

namespace jacobi3d_mpi {

namespace {

// A box of the padded storage as a datatype: starts and sizes per axis, in x, y, z order.
MPI_Datatype box_type(const block_layout& l, std::array<int, 3> start, std::array<int, 3> count) {
    // MPI's C order lists the slowest axis first.
    const int sizes[3] = {static_cast<int>(l.size().z + 2), static_cast<int>(l.size().y + 2), static_cast<int>(l.size().x + 2)};
    const int subsizes[3] = {count[2], count[1], count[0]};
    const int starts[3] = {start[2], start[1], start[0]};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

}  // namespace

halo_exchange::halo_exchange(MPI_Comm comm, const decomposition& d, const block& b, const block_layout& l) : comm_(comm) {
    const auto [cx, cy, cz] = b.coords;
    const int at[6][3] = {{cx - 1, cy, cz}, {cx + 1, cy, cz}, {cx, cy - 1, cz}, {cx, cy + 1, cz}, {cx, cy, cz - 1}, {cx, cy, cz + 1}};
    for (int s = 0; s < 6; ++s) {
        const int r = d.rank_at(at[s][0], at[s][1], at[s][2]);
        neighbour_[static_cast<std::size_t>(s)] = r < 0 ? MPI_PROC_NULL : r;
    }
    // Padded indices: owned points 1..size, ghosts 0 and size + 1.
    const std::array<int, 3> n{static_cast<int>(l.size().x), static_cast<int>(l.size().y), static_cast<int>(l.size().z)};
    for (int axis = 0; axis < 3; ++axis) {
        for (int upper = 0; upper < 2; ++upper) {
            const auto side = static_cast<std::size_t>(2 * axis + upper);
            std::array<int, 3> start{1, 1, 1};
            std::array<int, 3> count = n;
            count[static_cast<std::size_t>(axis)] = 1;
            start[static_cast<std::size_t>(axis)] = upper != 0 ? n[static_cast<std::size_t>(axis)] : 1;
            send_type_[side] = box_type(l, start, count);
            start[static_cast<std::size_t>(axis)] = upper != 0 ? n[static_cast<std::size_t>(axis)] + 1 : 0;
            recv_type_[side] = box_type(l, start, count);
        }
    }
    requests_.fill(MPI_REQUEST_NULL);
}

halo_exchange::~halo_exchange() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    for (MPI_Datatype& t : send_type_) MPI_Type_free(&t);
    for (MPI_Datatype& t : recv_type_) MPI_Type_free(&t);
}

void halo_exchange::post(double* grid) {
    // The message that travels towards side s carries tag s: the receiver on the other side
    // takes it from its ghost layer's side s ^ 1.
    for (std::size_t s = 0; s < 6; ++s)
        MPI_Irecv(grid, 1, recv_type_[s], neighbour_[s], static_cast<int>(s ^ 1U), comm_, &requests_[s]);
    for (std::size_t s = 0; s < 6; ++s)
        MPI_Isend(grid, 1, send_type_[s], neighbour_[s], static_cast<int>(s), comm_, &requests_[6 + s]);
}

void halo_exchange::wait() { MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE); }

}  // namespace jacobi3d_mpi
