// Where a code address lies: the module (executable or shared object) and the offset the
// module's symbols know it by, and the "module+0xOFFSET" name that every report gives a
// call site (the OpenMP interposer's regions and loops, libaloe-mpi's MPI calls).
#pragma once

#include <cstdint>
#include <string>

namespace aloe::runtime {

struct code_address {
    std::string module;        ///< path of the executable or shared object; empty: unknown
    std::uint64_t offset = 0;  ///< address as the module's symbols see it (load bias removed)
};

/// The module and offset of `address` (dladdr1); an unknown module keeps the raw address.
code_address locate_code(const void* address);

/// "module+0xOFFSET" with the module's file name alone ("?" when unknown).
std::string code_site_name(const code_address& where);

/// The running executable's path (/proc/self/exe); empty when it cannot be read.
std::string main_program_path();

}  // namespace aloe::runtime
