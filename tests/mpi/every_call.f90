! Fortran (mpif.h) calls reach libaloe-mpi: OpenMPI's Fortran bindings call PMPI_* directly,
! so these are counted only by its Fortran wrappers. Results checked as in every_call.c,
! MPI_IN_PLACE included (its address must reach the library unchanged).
program every_call_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, x, y, left, right, got
  integer :: requests(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  x = -1
  if (rank == 0) x = 42
  call MPI_BCAST(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (x /= 42) call fail('MPI_BCAST')
  call MPI_ALLREDUCE(rank, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (y /= nranks * (nranks - 1) / 2) call fail('MPI_ALLREDUCE')
  y = rank
  call MPI_ALLREDUCE(MPI_IN_PLACE, y, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (y /= nranks - 1) call fail('MPI_ALLREDUCE (MPI_IN_PLACE)')
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 1, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_WAITALL(2, requests, statuses, ierr)
  if (got /= left .or. statuses(MPI_SOURCE, 1) /= left) call fail('MPI_WAITALL')
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_RECV(got, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, status, ierr)
  if (got /= left .or. status(MPI_TAG) /= 2) call fail('MPI_RECV')
  call MPI_WAIT(requests(2), MPI_STATUS_IGNORE, ierr)
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print *, 'every_call_f: wrong result of ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
