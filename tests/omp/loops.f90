! Fortran worksharing loops (gfortran reaches the same GOMP_loop_* entry points as C):
! every schedule clause, negative and non-unit steps, integer(8) bounds up to huge(),
! collapse(2) and collapse(3), empty and one-iteration loops, nowait chains, lastprivate of
! the DO variable, combined PARALLEL DO with constant and with variable bounds, an ORDERED
! loop writing in iteration order, WORKSHARE, and team queries with NUM_THREADS.
!
! Each loop counts the runs of each iteration; check() prints "<label>: n=<n> sum=<sum>" and
! records a failure (printed to stderr) unless every iteration ran exactly once. The exit
! status is 1 when anything failed.
module conf
  use omp_lib
  implicit none
  integer, parameter :: maxn = 20000
  integer :: hits(0:maxn - 1)
  integer :: stray
  integer(8) :: vsum
  integer :: failures = 0
  integer, volatile :: v_offset = 0
contains
  subroutine begin()
    hits = 0
    stray = 0
    vsum = 0
  end subroutine

  ! One run of logical iteration k (0-based) whose DO variable had value v.
  subroutine hit(k, v)
    integer(8), intent(in) :: k, v
    if (k < 0 .or. k >= maxn) then
      !$omp atomic
      stray = stray + 1
    else
      !$omp atomic
      hits(k) = hits(k) + 1
      !$omp atomic
      vsum = vsum + v
    end if
  end subroutine

  subroutine check(label, n)
    character(*), intent(in) :: label
    integer(8), intent(in) :: n
    integer(8) :: k
    do k = 0, maxn - 1
      if ((k < n .and. hits(k) /= 1) .or. (k >= n .and. hits(k) /= 0)) then
        write (0, '("FAIL ",a,": iteration ",i0," of ",i0," ran ",i0," times")') label, k, n, hits(k)
        failures = failures + 1
        exit
      end if
    end do
    if (stray /= 0) then
      write (0, '("FAIL ",a,": ",i0," runs outside the loop")') label, stray
      failures = failures + 1
    end if
    write (*, '(a,": n=",i0," sum=",i0)') label, n, vsum
  end subroutine

  subroutine expect(ok, label, why)
    logical, intent(in) :: ok
    character(*), intent(in) :: label, why
    if (.not. ok) then
      write (0, '("FAIL ",a,": ",a)') label, why
      failures = failures + 1
    end if
  end subroutine

  integer function vi(x)
    integer, intent(in) :: x
    vi = x + v_offset
  end function

  integer(8) function v8(x)
    integer(8), intent(in) :: x
    v8 = x + v_offset
  end function
end module conf

module loops_under_test
  use conf
  implicit none
contains
  subroutine schedules()
    integer :: i, n
    n = vi(1000)

    call begin()
    !$omp parallel
    !$omp do schedule(dynamic)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end do
    !$omp end parallel
    call check("do dynamic", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(dynamic, 3)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do dynamic,3", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(monotonic: dynamic, 7)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do monotonic:dynamic,7", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(nonmonotonic: dynamic, 2)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do nonmonotonic:dynamic,2", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(guided)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do guided", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(monotonic: guided, 5)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do monotonic:guided,5", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(runtime)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do runtime", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(nonmonotonic: runtime)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do nonmonotonic:runtime", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(static)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do static (control)", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(static, 3)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do static,3 (control)", int(n, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(auto)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do auto (control)", int(n, 8))
  end subroutine

  subroutine steps_and_bounds()
    integer :: i, n, z
    integer(8) :: k, big
    n = vi(1000)
    z = vi(0)

    call begin()
    !$omp parallel
    !$omp do schedule(dynamic, 2)
    do i = n, 1, -3
      call hit(int((n - i) / 3, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do dynamic,2 step -3", int((n - 1) / 3 + 1, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(guided, 4)
    do i = 5, n, 4
      call hit(int((i - 5) / 4, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do guided,4 step 4", int((n - 5) / 4 + 1, 8))

    call begin()
    !$omp parallel
    !$omp do schedule(runtime)
    do i = -n, n, 7
      call hit(int((i + n) / 7, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do runtime -n..n step 7", int(2 * n / 7 + 1, 8))

    big = v8(1000000000000_8)
    call begin()
    !$omp parallel
    !$omp do schedule(dynamic, 4)
    do k = big, big + 2999_8, 3_8
      call hit((k - big) / 3_8, k)
    end do
    !$omp end parallel
    call check("do dynamic,4 integer(8) bounds", 1000_8)

    big = v8(huge(big))
    call begin()
    !$omp parallel
    !$omp do schedule(dynamic)
    do k = big - 300_8, big - 1_8
      call hit(k - (big - 300_8), k)
    end do
    !$omp end parallel
    call check("do dynamic up to huge-1", 300_8)

    call begin()
    !$omp parallel
    !$omp do schedule(guided)
    do k = -big + 300_8, -big, -1_8
      call hit(-big + 300_8 - k, k)
    end do
    !$omp end parallel
    call check("do guided down to -huge", 301_8)

    call begin()
    !$omp parallel
    !$omp do schedule(dynamic)
    do i = 1, z
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do dynamic empty", 0_8)

    call begin()
    !$omp parallel
    !$omp do schedule(guided)
    do i = 10, z, 1
      call hit(int(i - 10, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do guided start>end", 0_8)

    call begin()
    !$omp parallel
    !$omp do schedule(runtime)
    do i = 7, z + 7
      call hit(int(i - 7, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do runtime one iteration", 1_8)

    call begin()
    !$omp parallel
    !$omp do schedule(dynamic)
    do i = 1, z + 2
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel
    call check("do dynamic two iterations", 2_8)
  end subroutine

  subroutine collapsed()
    integer :: i, j, l, a, b, c
    a = vi(23)
    b = vi(29)
    c = vi(7)
    call begin()
    !$omp parallel
    !$omp do collapse(2) schedule(dynamic, 5)
    do j = 1, b
      do i = 1, a
        call hit(int((j - 1) * a + (i - 1), 8), int(j * 100 + i, 8))
      end do
    end do
    !$omp end parallel
    call check("do collapse(2) dynamic,5", int(a * b, 8))

    call begin()
    !$omp parallel
    !$omp do collapse(3) schedule(guided)
    do l = c, 1, -1
      do j = 1, b, 2
        do i = 1, a
          call hit(int(((c - l) * ((b + 1) / 2) + (j - 1) / 2) * a + (i - 1), 8), int(l * 10000 + j * 100 + i, 8))
        end do
      end do
    end do
    !$omp end parallel
    call check("do collapse(3) guided steps -1,2,1", int(c * ((b + 1) / 2) * a, 8))
  end subroutine

  subroutine chains_and_combined()
    integer, parameter :: m = 600
    integer :: i, n, t, last_i, team
    integer :: a(m), b(m), c(m)
    n = vi(m)
    a = 0
    b = 0
    c = 0
    !$omp parallel
    !$omp do schedule(dynamic, 3)
    do i = 1, n
      a(i) = a(i) + 1
    end do
    !$omp end do nowait
    !$omp do schedule(guided)
    do i = n, 1, -1
      b(i) = b(i) + 2
    end do
    !$omp end do nowait
    !$omp do schedule(runtime)
    do i = 1, n
      c(i) = c(i) + 3
    end do
    !$omp end do nowait
    !$omp barrier
    !$omp do schedule(dynamic)
    do i = 1, n
      a(i) = a(i) + b(n + 1 - i) + c(i)
    end do
    !$omp end parallel
    call expect(all(a == 6), "nowait chain + barrier", "values wrong")
    write (*, '("nowait chain + barrier: sum ",i0)') sum(a)

    ! lastprivate of the DO variable: its value after the loop is the one past the last.
    !$omp parallel private(t)
    !$omp do schedule(dynamic, 4) lastprivate(i)
    do i = 3, n, 5
      t = i
    end do
    !$omp end parallel
    last_i = i
    call expect(last_i == 3 + ((n - 3) / 5 + 1) * 5, "lastprivate DO variable", "wrong final value")
    write (*, '("lastprivate DO variable step 5: ",i0)') last_i

    ! Combined PARALLEL DO, constant bounds (GOMP_parallel_loop_*) and variable bounds.
    call begin()
    !$omp parallel do schedule(dynamic)
    do i = 1, 1000
      call hit(int(i - 1, 8), int(i, 8))
    end do
    !$omp end parallel do
    call check("parallel do dynamic const", 1000_8)

    call begin()
    !$omp parallel do schedule(runtime)
    do i = 1, 1000
      call hit(int(i - 1, 8), int(i, 8))
    end do
    call check("parallel do runtime const", 1000_8)

    call begin()
    !$omp parallel do schedule(guided, 3)
    do i = 1000, 1, -1
      call hit(int(1000 - i, 8), int(i, 8))
    end do
    call check("parallel do guided,3 const down", 1000_8)

    call begin()
    !$omp parallel do schedule(monotonic: dynamic, 2)
    do i = 1, 1000
      call hit(int(i - 1, 8), int(i, 8))
    end do
    call check("parallel do monotonic:dynamic,2 const", 1000_8)

    call begin()
    team = 0
    !$omp parallel do schedule(dynamic, 5) num_threads(2)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
      !$omp atomic write
      team = omp_get_num_threads()
    end do
    call check("parallel do dynamic,5 num_threads(2)", int(n, 8))
    call expect(team == 2, "parallel do num_threads(2)", "team size is not 2")
    write (*, '("parallel do num_threads(2) team: ",i0)') team

    call begin()
    !$omp parallel do schedule(nonmonotonic: runtime)
    do i = 1, n
      call hit(int(i - 1, 8), int(i, 8))
    end do
    call check("parallel do nonmonotonic:runtime var", int(n, 8))
  end subroutine

  subroutine ordered_and_workshare()
    integer :: i, n
    real(8) :: x(500), y(500)
    n = vi(10)
    !$omp parallel
    !$omp do ordered schedule(dynamic)
    do i = 1, n
      !$omp ordered
      write (*, '("ordered dynamic: iteration ",i0)') i
      !$omp end ordered
    end do
    !$omp end parallel

    x = [(real(i, 8) * 0.5_8, i = 1, 500)]
    !$omp parallel
    !$omp workshare
    y = x * 2.0_8 + 1.0_8
    !$omp end workshare
    !$omp end parallel
    call expect(maxval(abs(y - [(real(i, 8) + 1.0_8, i = 1, 500)])) < 0.25_8, "workshare", "array assignment wrong")
    write (*, '("workshare: sum ",f0.1)') sum(y)
  end subroutine

  subroutine teams()
    integer :: sizes(8), k, got
    logical :: ok
    do k = 1, 4
      got = -1
      sizes = 0
      !$omp parallel num_threads(k)
      !$omp atomic
      sizes(omp_get_thread_num() + 1) = sizes(omp_get_thread_num() + 1) + 1
      !$omp single
      got = omp_get_num_threads()
      !$omp end single
      !$omp end parallel
      ok = got == k .and. all(sizes(1:k) == 1) .and. all(sizes(k + 1:) == 0)
      call expect(ok, "num_threads", "a num_threads(k) region had the wrong threads")
      write (*, '("num_threads(",i0,"): ",i0," threads")') k, got
    end do
    got = -1
    !$omp parallel
    !$omp single
    got = omp_get_num_threads()
    !$omp end single
    !$omp end parallel
    call expect(got == omp_get_max_threads(), "default region", "size differs from omp_get_max_threads()")
    write (*, '("default region has omp_get_max_threads() threads: ",l1)') got == omp_get_max_threads()
  end subroutine
end module loops_under_test

program fortran_loops
  use conf
  use loops_under_test
  implicit none
  call schedules()
  call steps_and_bounds()
  call collapsed()
  call chains_and_combined()
  call ordered_and_workshare()
  call teams()
  if (failures > 0) then
    write (0, '("fortran_loops: ",i0," check(s) failed")') failures
    stop 1
  end if
  write (*, '("fortran_loops: all checks passed")')
end program fortran_loops
