// The halo exchange of one rank's block: each face of owned points goes to the neighbour on
// that side and the neighbour's face comes back into the ghost layer, by MPI_Irecv and
// MPI_Isend with a subarray datatype per face (no packing), completed by one MPI_Waitall. A
// side without a neighbour (the grid's boundary) talks to MPI_PROC_NULL, which completes at
// once. Only faces: the 7-point stencil reads no edge or corner ghosts.
#pragma once

#include "block_decomposition.hpp"
#include "local_block.hpp"

#include <mpi.h>

#include <array>

namespace jacobi3d_mpi {

class halo_exchange {
public:
    /// `comm`'s ranks are the decomposition's ranks.
    halo_exchange(MPI_Comm comm, const decomposition& d, const block& b, const block_layout& l);
    ~halo_exchange();
    halo_exchange(const halo_exchange&) = delete;
    halo_exchange& operator=(const halo_exchange&) = delete;

    /// Posts the receives into `grid`'s ghost layer and the sends of its faces.
    void post(double* grid);
    /// MPI_Waitall on what post() started.
    void wait();

    /// The neighbour on each side (-x, +x, -y, +y, -z, +z), MPI_PROC_NULL at the boundary.
    const std::array<int, 6>& neighbours() const noexcept { return neighbour_; }

private:
    MPI_Comm comm_;
    std::array<int, 6> neighbour_{};
    std::array<MPI_Datatype, 6> send_type_{};  // the owned face on each side
    std::array<MPI_Datatype, 6> recv_type_{};  // the ghost layer on each side
    std::array<MPI_Request, 12> requests_{};
};

}  // namespace jacobi3d_mpi
