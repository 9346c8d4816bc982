! The same calls through `use mpi_f08` (mpi_*_f08_ entry points, derived-type handles, the
! optional ierror left out), results checked as in every_call.f90.
program every_call_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, x, y, left, right, got
  type(MPI_Request) :: requests(2)
  type(MPI_Status) :: statuses(2), status
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Barrier(MPI_COMM_WORLD)
  x = -1
  if (rank == 0) x = 42
  call MPI_Bcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (x /= 42) call fail('MPI_Bcast')
  call MPI_Allreduce(rank, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (y /= nranks * (nranks - 1) / 2) call fail('MPI_Allreduce')
  y = rank
  call MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (y /= nranks - 1) call fail('MPI_Allreduce (MPI_IN_PLACE)')
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 1, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, statuses)
  if (got /= left .or. statuses(1)%MPI_SOURCE /= left) call fail('MPI_Waitall')
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, requests(2))
  call MPI_Recv(got, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, status)
  if (got /= left .or. status%MPI_TAG /= 2) call fail('MPI_Recv')
  call MPI_Wait(requests(2), MPI_STATUS_IGNORE)
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print *, 'every_call_f08: wrong result of ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine
end program
