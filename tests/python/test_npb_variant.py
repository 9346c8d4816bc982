"""npb_variant: which NPB loops become schedule(runtime), on hand-written excerpts shaped like
BT's compute_rhs, MG's zran3 and IS."""
from aloe_harness import npb_variant as nv

# BT rhs.f: a region whose loops end nowait, each reading what the same thread wrote before.
NOWAIT_CHAIN = """\
!$omp parallel default(shared) private(i,j,k,
!$omp&   rho_inv)
!$omp do schedule(static) collapse(2)
      do k = 0, n
      enddo
!$omp end do nowait
!$omp do schedule(static) collapse(2)
      do k = 0, n
      enddo
!$omp end do nowait
!$omp master
      call timer_stop(1)
!$omp end master
!$omp do schedule(static)
      do k = 0, n
      enddo
!$omp end do nowait
!$omp end parallel
!$omp parallel do default(shared) private(i)
      do i = 1, n
      enddo
"""


def test_a_nowait_chain_stays_static_and_a_combined_loop_after_it_does_not():
    text, counts = nv.rewrite_fortran(NOWAIT_CHAIN)
    # the first two end nowait mid-region; the third follows one (its own nowait is harmless)
    assert counts == {"kept: ends nowait": 2, "kept: follows a nowait loop": 1, "rewritten": 1}
    lines = text.split("\n")
    assert lines.count("!$omp do schedule(static) collapse(2)") == 2
    assert "!$omp do schedule(static)" in lines  # the last: after a nowait loop
    # the combined loop: the clause on a continuation line of its own (fixed form ends at 72)
    i = lines.index("!$omp parallel do default(shared) private(i)")
    assert lines[i + 1] == "!$omp& schedule(runtime)"


# MG zran3 and comm3: loops with implied barriers, a last nowait loop right before the end of
# the region (harmless), and an ordered loop.
IMPLIED_BARRIERS = """\
!$omp parallel default(shared) private(i1,i2,i3)
!$omp do collapse(2)
      do i3 = 2, n
      enddo
!$omp do
      do i3 = 2, n
      enddo
!$omp end do nowait
!$omp end parallel
!$omp parallel default(shared)
!$omp do ordered schedule(static)
      do i2 = 1, nt
      enddo
!$omp end parallel
"""


def test_implied_barriers_an_ordered_loop_and_a_harmless_nowait():
    text, counts = nv.rewrite_fortran(IMPLIED_BARRIERS)
    assert counts == {"rewritten": 2, "kept: ordered": 1}
    lines = text.split("\n")
    assert lines[1:3] == ["!$omp do collapse(2)", "!$omp& schedule(runtime)"]
    assert lines[5:7] == ["!$omp do", "!$omp& schedule(runtime)"]
    assert "!$omp do ordered schedule(static)" in lines


def test_a_static_clause_is_taken_out_of_its_line_and_dynamic_is_left_alone():
    text, counts = nv.rewrite_fortran("c$omp do schedule(static, 4) reduction(+:s)\n"
                                      "      do i = 1, n\n      enddo\n"
                                      "!$omp do schedule(dynamic)\n      do i = 1, n\n      enddo\n")
    assert counts == {"rewritten": 1, "not static": 1}
    assert text.split("\n")[:2] == ["c$omp do  reduction(+:s)", "c$omp& schedule(runtime)"]
    assert "!$omp do schedule(dynamic)" in text


IS_EXCERPT = """\
    #pragma omp parallel for
    #pragma omp parallel for private(i) schedule(static,1)
#pragma omp parallel private(i, k)
    #pragma omp for schedule(static)
    #pragma omp for nowait schedule(static)
    #pragma omp for schedule(static)
    #pragma omp barrier
    #pragma omp for schedule(static)
    #pragma omp parallel for schedule(dynamic)
"""


def test_c_pragmas():
    text, counts = nv.rewrite_c(IS_EXCERPT)
    assert counts == {"rewritten": 4, "kept: ends nowait": 1, "kept: follows a nowait loop": 1,
                      "not static": 1}
    lines = text.split("\n")
    assert lines[0] == "    #pragma omp parallel for schedule(runtime)"
    assert lines[1] == "    #pragma omp parallel for private(i) schedule(runtime)"
    assert lines[4:6] == ["    #pragma omp for nowait schedule(static)",
                          "    #pragma omp for schedule(static)"]
    assert lines[7] == "    #pragma omp for schedule(runtime)"


def test_a_tree_leaves_lu_and_the_shared_folders_alone(tmp_path):
    for folder in ("BT", "LU", "common"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.f").write_text("!$omp parallel do\n      do i = 1, n\n      enddo\n")
    report = nv.rewrite_tree(tmp_path)
    assert list(report) == ["BT/x.f"]
    assert "schedule(runtime)" in (tmp_path / "BT/x.f").read_text()
    assert "schedule(runtime)" not in (tmp_path / "LU/x.f").read_text()
    assert nv.main([str(tmp_path / "missing")]) == 2
