// One aloe per process (docs/ARCHITECTURE.md, "One aloe per process"): libaloe.so is the
// only copy that aloe's own libraries link, so a process has one team, one counter registry
// and one set of site tuners however aloe got in. A program that links libaloe.a carries a
// second copy once `aloe run` preloads the interposer (which brings libaloe.so): the two
// cannot see each other's state. That copy says so once, when it makes its team.
#pragma once

namespace aloe::runtime {

/// Whether another copy of aloe's runtime is loaded in this process besides the calling one
/// (a program's static libaloe.a beside libaloe.so). Found through the dynamic symbol table,
/// where only libaloe.so's anchor is visible.
bool another_copy_loaded() noexcept;

/// Warns once (W015) when another copy is loaded: the calling copy keeps its own team,
/// counters and tuners.
void note_other_copies();

}  // namespace aloe::runtime
