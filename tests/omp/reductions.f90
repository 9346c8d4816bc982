! Fortran reductions on loops whose schedules reach the runtime: + on integer, integer(8)
! and real(8) (values that sum exactly in any order), * on integer(8), max and min,
! .and. .or. .eqv. .neqv., iand ior ieor, an array reduction, a combined PARALLEL DO
! reduction, a reduction on a nowait loop, lastprivate and firstprivate, an ORDERED loop
! printing in order and a doacross prefix sum (both forwarded to libgomp). Each result is
! compared with the serial one and printed; the exit status is 1 when anything failed.
module red_conf
  implicit none
  integer :: failures = 0
  integer, volatile :: v_offset = 0
contains
  subroutine report_i8(label, got, want)
    character(*), intent(in) :: label
    integer(8), intent(in) :: got, want
    if (got /= want) then
      write (0, '("FAIL ",a,": got ",i0,", serial value ",i0)') label, got, want
      failures = failures + 1
    end if
    write (*, '(a,": ",i0)') label, got
  end subroutine

  subroutine report_r8(label, got, want)
    character(*), intent(in) :: label
    real(8), intent(in) :: got, want
    if (abs(got - want) > 0.0_8) then
      write (0, '("FAIL ",a,": got ",es24.17,", serial value ",es24.17)') label, got, want
      failures = failures + 1
    end if
    write (*, '(a,": ",f0.2)') label, got
  end subroutine

  subroutine report_l(label, got, want)
    character(*), intent(in) :: label
    logical, intent(in) :: got, want
    if (got .neqv. want) then
      write (0, '("FAIL ",a,": got ",l1,", serial value ",l1)') label, got, want
      failures = failures + 1
    end if
    write (*, '(a,": ",l1)') label, got
  end subroutine

  integer function value_of(i)
    integer, intent(in) :: i
    value_of = int(mod(int(i, 8) * 7919_8 + 13_8, 10007_8))
  end function
end module red_conf

program fortran_reductions
  use omp_lib
  use red_conf
  implicit none
  integer, parameter :: nmax = 3000
  integer :: n, i, which
  integer :: isum, imax, imin, iand_r, ior_r, ieor_r
  integer(8) :: lsum, prod
  real(8) :: dsum, dmax, dmin
  logical :: land, lor, leqv, lneqv
  integer :: e_isum, e_imax, e_imin, e_iand, e_ior, e_ieor
  integer(8) :: e_lsum, e_prod
  real(8) :: e_dsum, e_dmax, e_dmin
  logical :: e_land, e_lor, e_leqv, e_lneqv
  integer(8) :: hist(0:15), e_hist(0:15)
  integer :: v(nmax)
  real(8) :: d(nmax)
  character(len=16) :: tag
  integer(8) :: pre(nmax), s8
  integer :: last_val, fp, bad

  n = nmax + v_offset
  do i = 1, n
    v(i) = value_of(i)
    d(i) = 0.5_8 * real(mod(i * 37, 200) - 100, 8)
  end do

  ! The serial values.
  e_isum = 0; e_lsum = 0; e_prod = 1; e_dsum = 0; e_imax = -1; e_imin = huge(1)
  e_dmax = -huge(1.0_8); e_dmin = huge(1.0_8); e_iand = not(0); e_ior = 0; e_ieor = 0
  e_land = .true.; e_lor = .false.; e_leqv = .true.; e_lneqv = .false.
  do i = 1, n
    e_isum = e_isum + mod(v(i), 7)
    e_lsum = e_lsum + int(v(i), 8) * v(i)
    if (mod(i, 75) == 0) e_prod = e_prod * 2
    e_dsum = e_dsum + d(i)
    e_imax = max(e_imax, v(i))
    e_imin = min(e_imin, v(i))
    e_dmax = max(e_dmax, d(i))
    e_dmin = min(e_dmin, d(i))
    if (mod(i, 101) == 0) e_iand = iand(e_iand, not(ishft(1, mod(i / 101, 31))))
    if (mod(i, 89) == 0) e_ior = ior(e_ior, ishft(1, mod(i, 31)))
    e_ieor = ieor(e_ieor, v(i) * 3)
    e_land = e_land .and. v(i) /= 4321
    e_lor = e_lor .or. v(i) == 4321
    e_leqv = e_leqv .eqv. (mod(v(i), 2) == 0)
    e_lneqv = e_lneqv .neqv. (mod(v(i), 3) == 0)
  end do

  do which = 1, 3
    isum = 0; lsum = 0; prod = 1; dsum = 0; imax = -1; imin = huge(1)
    dmax = -huge(1.0_8); dmin = huge(1.0_8); iand_r = not(0); ior_r = 0; ieor_r = 0
    land = .true.; lor = .false.; leqv = .true.; lneqv = .false.
    !$omp parallel
    if (which == 1) then
      !$omp do schedule(dynamic, 3) reduction(+: isum, lsum, dsum) reduction(*: prod) reduction(max: imax, dmax) &
      !$omp& reduction(min: imin, dmin) reduction(iand: iand_r) reduction(ior: ior_r) reduction(ieor: ieor_r) &
      !$omp& reduction(.and.: land) reduction(.or.: lor) reduction(.eqv.: leqv) reduction(.neqv.: lneqv)
      do i = 1, n
        isum = isum + mod(v(i), 7)
        lsum = lsum + int(v(i), 8) * v(i)
        if (mod(i, 75) == 0) prod = prod * 2
        dsum = dsum + d(i)
        imax = max(imax, v(i))
        imin = min(imin, v(i))
        dmax = max(dmax, d(i))
        dmin = min(dmin, d(i))
        if (mod(i, 101) == 0) iand_r = iand(iand_r, not(ishft(1, mod(i / 101, 31))))
        if (mod(i, 89) == 0) ior_r = ior(ior_r, ishft(1, mod(i, 31)))
        ieor_r = ieor(ieor_r, v(i) * 3)
        land = land .and. v(i) /= 4321
        lor = lor .or. v(i) == 4321
        leqv = leqv .eqv. (mod(v(i), 2) == 0)
        lneqv = lneqv .neqv. (mod(v(i), 3) == 0)
      end do
    else if (which == 2) then
      !$omp do schedule(guided) reduction(+: isum, lsum, dsum) reduction(*: prod) reduction(max: imax, dmax) &
      !$omp& reduction(min: imin, dmin) reduction(iand: iand_r) reduction(ior: ior_r) reduction(ieor: ieor_r) &
      !$omp& reduction(.and.: land) reduction(.or.: lor) reduction(.eqv.: leqv) reduction(.neqv.: lneqv)
      do i = n, 1, -1
        isum = isum + mod(v(i), 7)
        lsum = lsum + int(v(i), 8) * v(i)
        if (mod(i, 75) == 0) prod = prod * 2
        dsum = dsum + d(i)
        imax = max(imax, v(i))
        imin = min(imin, v(i))
        dmax = max(dmax, d(i))
        dmin = min(dmin, d(i))
        if (mod(i, 101) == 0) iand_r = iand(iand_r, not(ishft(1, mod(i / 101, 31))))
        if (mod(i, 89) == 0) ior_r = ior(ior_r, ishft(1, mod(i, 31)))
        ieor_r = ieor(ieor_r, v(i) * 3)
        land = land .and. v(i) /= 4321
        lor = lor .or. v(i) == 4321
        leqv = leqv .eqv. (mod(v(i), 2) == 0)
        lneqv = lneqv .neqv. (mod(v(i), 3) == 0)
      end do
    else
      ! runtime, nowait: the results are read after the region's barrier.
      !$omp do schedule(runtime) reduction(+: isum, lsum, dsum) reduction(*: prod) reduction(max: imax, dmax) &
      !$omp& reduction(min: imin, dmin) reduction(iand: iand_r) reduction(ior: ior_r) reduction(ieor: ieor_r) &
      !$omp& reduction(.and.: land) reduction(.or.: lor) reduction(.eqv.: leqv) reduction(.neqv.: lneqv)
      do i = 1, n
        isum = isum + mod(v(i), 7)
        lsum = lsum + int(v(i), 8) * v(i)
        if (mod(i, 75) == 0) prod = prod * 2
        dsum = dsum + d(i)
        imax = max(imax, v(i))
        imin = min(imin, v(i))
        dmax = max(dmax, d(i))
        dmin = min(dmin, d(i))
        if (mod(i, 101) == 0) iand_r = iand(iand_r, not(ishft(1, mod(i / 101, 31))))
        if (mod(i, 89) == 0) ior_r = ior(ior_r, ishft(1, mod(i, 31)))
        ieor_r = ieor(ieor_r, v(i) * 3)
        land = land .and. v(i) /= 4321
        lor = lor .or. v(i) == 4321
        leqv = leqv .eqv. (mod(v(i), 2) == 0)
        lneqv = lneqv .neqv. (mod(v(i), 3) == 0)
      end do
      !$omp end do nowait
    end if
    !$omp end parallel
    tag = merge("dynamic,3       ", "guided downwards", which == 1)
    if (which == 3) tag = "runtime nowait"
    call report_i8(trim(tag)//" + integer", int(isum, 8), int(e_isum, 8))
    call report_i8(trim(tag)//" + integer(8)", lsum, e_lsum)
    call report_r8(trim(tag)//" + real(8)", dsum, e_dsum)
    call report_i8(trim(tag)//" * integer(8)", prod, e_prod)
    call report_i8(trim(tag)//" max integer", int(imax, 8), int(e_imax, 8))
    call report_i8(trim(tag)//" min integer", int(imin, 8), int(e_imin, 8))
    call report_r8(trim(tag)//" max real(8)", dmax, e_dmax)
    call report_r8(trim(tag)//" min real(8)", dmin, e_dmin)
    call report_i8(trim(tag)//" iand", int(iand_r, 8), int(e_iand, 8))
    call report_i8(trim(tag)//" ior", int(ior_r, 8), int(e_ior, 8))
    call report_i8(trim(tag)//" ieor", int(ieor_r, 8), int(e_ieor, 8))
    call report_l(trim(tag)//" .and.", land, e_land)
    call report_l(trim(tag)//" .or.", lor, e_lor)
    call report_l(trim(tag)//" .eqv.", leqv, e_leqv)
    call report_l(trim(tag)//" .neqv.", lneqv, e_lneqv)
  end do

  ! An array reduction and a combined PARALLEL DO reduction.
  hist = 0
  e_hist = 0
  !$omp parallel
  !$omp do schedule(nonmonotonic: dynamic, 5) reduction(+: hist)
  do i = 1, n
    hist(mod(v(i), 16)) = hist(mod(v(i), 16)) + 1 + mod(i, 3)
  end do
  !$omp end parallel
  do i = 1, n
    e_hist(mod(v(i), 16)) = e_hist(mod(v(i), 16)) + 1 + mod(i, 3)
  end do
  call report_i8("array reduction(+: hist) bin 0", hist(0), e_hist(0))
  call report_i8("array reduction(+: hist) total", sum(hist), sum(e_hist))
  if (any(hist /= e_hist)) then
    write (0, '("FAIL array reduction: bins differ")')
    failures = failures + 1
  end if

  dsum = 0
  !$omp parallel do schedule(guided, 2) reduction(+: dsum)
  do i = 1, n
    dsum = dsum + 2.0_8 * d(i)
  end do
  call report_r8("parallel do guided,2 reduction(+: real(8))", dsum, 2.0_8 * e_dsum)

  ! lastprivate and firstprivate.
  last_val = -1
  fp = 100
  bad = 0
  !$omp parallel
  !$omp do schedule(dynamic, 4) lastprivate(last_val) firstprivate(fp) reduction(+: bad)
  do i = 1, n
    if (fp < 100) bad = bad + 1
    fp = fp + 1
    last_val = v(i) + i
  end do
  !$omp end parallel
  call report_i8("lastprivate scalar", int(last_val, 8), int(v(n) + n, 8))
  call report_i8("firstprivate copies started from the original", int(bad, 8), 0_8)
  call report_i8("firstprivate original unchanged", int(fp, 8), 100_8)

  ! ORDERED output in iteration order, and a doacross prefix sum (forwarded to libgomp).
  !$omp parallel
  !$omp do ordered schedule(guided)
  do i = 1, 12 + v_offset
    !$omp ordered
    write (*, '("ordered guided: ",i0," -> ",i0)') i, v(i)
    !$omp end ordered
  end do
  !$omp end parallel

  do i = 1, 120
    pre(i) = mod(v(i), 10)
  end do
  !$omp parallel
  !$omp do ordered(1) schedule(dynamic, 3)
  do i = 2, 120 + v_offset
    !$omp ordered depend(sink: i - 1)
    pre(i) = pre(i) + pre(i - 1)
    !$omp ordered depend(source)
  end do
  !$omp end parallel
  s8 = 0
  bad = 0
  do i = 1, 120
    s8 = s8 + mod(v(i), 10)
    if (pre(i) /= s8) bad = bad + 1
  end do
  call report_i8("doacross prefix sum", pre(120), s8)
  call report_i8("doacross prefix sums wrong", int(bad, 8), 0_8)

  if (failures > 0) then
    write (0, '("fortran_reductions: ",i0," check(s) failed")') failures
    stop 1
  end if
  write (*, '("fortran_reductions: all checks passed")')
end program fortran_reductions
