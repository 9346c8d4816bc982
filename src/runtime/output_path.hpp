// Output file names that keep every process of a job apart.
//
// A path given for statistics, a summary or a trace may name the process it belongs to:
//   %p  the process id        %r  the rank in the job (0 when not launched as a rank)
//   %h  the host name         %%  a literal %
// Any other % is kept as written. When the job has more than one rank (mpirun, srun, Hydra
// set their variables; runtime/config reads them) and the name has neither %p nor %r, the rank
// goes in before the file's extension: stats.json becomes stats.rank3.json. So `mpirun -np 4
// aloe run --stats s.json -- ./app` leaves four files, never one file four ranks fought over.
#pragma once

#include <string>
#include <string_view>

namespace aloe::runtime {

struct config;

/// Who is writing: the parts of a name that tell processes apart.
struct process_identity {
    long pid = 0;
    int rank = -1;      ///< -1: not one rank of a job
    int job_size = 0;   ///< ranks in the job; 0: unknown
    std::string host;

    /// This process, with its rank from `cfg`.
    static process_identity of_this_process(const config& cfg);
};

/// `pattern` with the escapes above expanded for `who`, and the rank inserted when the job
/// has several ranks and the pattern names neither the process nor the rank.
std::string expand_output_path(std::string_view pattern, const process_identity& who);

}  // namespace aloe::runtime
