! lending_omp.c's program in Fortran (mpif.h): 2 ranks bound one per core, rank 1 three times
! as heavy; each step K parallel regions (no num_threads clause) of a schedule(runtime) loop,
! then a halo swap closed by MPI_WAITALL, where rank 0 waits and lends its core, then an
! MPI_ALLREDUCE. It lends only if libaloe-mpi's Fortran entry points wait politely (OpenMPI's
! Fortran bindings call PMPI_* directly). Rank 1 prints widest, foreign, lost and astray as
! lending_omp.c does (affinity_probe.c reads the CPUs); exit 1 when an iteration ran other
! than once.
program lending_omp_f
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'mpif.h'
  interface
    subroutine probe_remember_own_mask() bind(C)
    end subroutine
    integer(c_int) function probe_outside_own_cpus() bind(C)
      import :: c_int
    end function
    integer(c_int) function probe_threads_astray() bind(C)
      import :: c_int
    end function
  end interface
  integer, parameter :: iterations = 4096, steps = 30, regions_per_step = 4
  integer, parameter :: per_region = iterations / regions_per_step
  integer :: hits(iterations)
  integer :: ierr, rank, nranks, other, weight, s, k, i, at, team, strangers, widest, foreign, lost
  integer :: requests(2), got
  double precision :: sink, total
  integer, external :: omp_get_num_threads
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call probe_remember_own_mask()
  weight = 1
  if (rank == 1) weight = 3
  other = mod(rank + 1, nranks)
  widest = 0
  foreign = 0
  lost = 0
  sink = 0
  do s = 1, steps
    do k = 0, regions_per_step - 1
      hits = 0
      team = 0
      strangers = 0
!$omp parallel reduction(+: sink, strangers) private(at)
!$omp single
      team = omp_get_num_threads()
!$omp end single
      if (probe_outside_own_cpus() /= 0) strangers = 1
!$omp do schedule(runtime)
      do i = 1, per_region
        at = k * per_region + i
!$omp atomic
        hits(at) = hits(at) + 1
        sink = sink + work(i, weight)
      end do
!$omp end do
!$omp end parallel
      widest = max(widest, team)
      if (strangers > 0) foreign = foreign + 1
      do i = k * per_region + 1, (k + 1) * per_region
        if (hits(i) /= 1) lost = lost + 1
      end do
    end do
    call MPI_IRECV(got, 1, MPI_INTEGER, other, s, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_ISEND(rank, 1, MPI_INTEGER, other, s, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_WAITALL(2, requests, MPI_STATUSES_IGNORE, ierr)
    if (got /= other) lost = lost + 1
    call MPI_ALLREDUCE(sink, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)  ! after it, no thread may sit on another rank's CPU
  if (rank == 1) then
    write(*, '(a, i0)') 'widest ', widest
    write(*, '(a, i0)') 'foreign ', foreign
    write(*, '(a, i0)') 'lost ', lost
    write(*, '(a, i0)') 'astray ', probe_threads_astray()
    flush(6)
  end if
  if (lost /= 0) stop 1
contains
  ! About 1 us of arithmetic an iteration, `weight` times over (as lending_omp.c's work()).
  double precision function work(i, weight)
    integer, intent(in) :: i, weight
    integer :: r
    double precision :: x
    x = i
    do r = 1, weight * 300
      x = x * 0.999999d0 + 1d-9
    end do
    work = x
  end function
end program
