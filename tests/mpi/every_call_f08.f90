! The same calls through `use mpi_f08` (mpi_*_f08_ entry points, derived-type handles, the
! optional ierror left out), results checked as in every_call.f90.
program every_call_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, x, y, left, right, got, i, index, outcount, done, ierr
  integer :: all(64), mine(64), indices(2)
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
  ! The rest of the calls that wait politely when the rank lends, as in every_call.f90; here
  ! the optional ierror is given to some and left out of others (f08 passes a null for it).
  call MPI_Reduce(rank, y, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. (rank == 0 .and. y /= nranks * (nranks - 1) / 2)) call fail('MPI_Reduce')
  call MPI_Allgather(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD)
  if (any(all(1:nranks) /= [(i, i = 0, nranks - 1)])) call fail('MPI_Allgather')
  mine(1:nranks) = [(100 * rank + i, i = 0, nranks - 1)]
  call MPI_Alltoall(mine, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(all(1:nranks) /= [(100 * i + rank, i = 0, nranks - 1)])) call fail('MPI_Alltoall')
  all = -1
  call MPI_Gather(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD)
  if (rank == nranks - 1 .and. any(all(1:nranks) /= [(i, i = 0, nranks - 1)])) call fail('MPI_Gather')
  call MPI_Scatter(mine, 1, MPI_INTEGER, x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. x /= rank) call fail('MPI_Scatter')
  got = -1
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 3, got, 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, status, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left .or. status%MPI_SOURCE /= left .or. status%MPI_TAG /= 3) &
    call fail('MPI_Sendrecv')
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 4, got, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (got /= left) call fail('MPI_Sendrecv (MPI_STATUS_IGNORE)')
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, requests(2))
  done = 0
  do while (done < 2)
    call MPI_Waitany(2, requests, index, status, ierr)
    if (ierr /= MPI_SUCCESS .or. index < 1 .or. index > 2) call fail('MPI_Waitany')
    if (requests(index) /= MPI_REQUEST_NULL) call fail('MPI_Waitany (request not freed)')
    if (index == 1 .and. (got /= left .or. status%MPI_TAG /= 5)) call fail('MPI_Waitany (status)')
    done = done + 1
  end do
  call MPI_Waitany(2, requests, index, status)
  if (index /= MPI_UNDEFINED) call fail('MPI_Waitany (no active request)')
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 6, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, requests(2))
  done = 0
  do while (done < 2)
    call MPI_Waitsome(2, requests, outcount, indices, statuses, ierr)
    if (ierr /= MPI_SUCCESS .or. outcount < 1 .or. outcount > 2) call fail('MPI_Waitsome')
    done = done + outcount
  end do
  if (got /= left) call fail('MPI_Waitsome (result)')
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, requests(2))
  call MPI_Probe(left, 7, MPI_COMM_WORLD, status)
  if (status%MPI_SOURCE /= left .or. status%MPI_TAG /= 7) call fail('MPI_Probe')
  call MPI_Recv(got, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left) call fail('MPI_Recv (MPI_STATUS_IGNORE)')
  call MPI_Wait(requests(2), MPI_STATUS_IGNORE)
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 8, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 8, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left) call fail('MPI_Waitall (MPI_STATUSES_IGNORE)')
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print *, 'every_call_f08: wrong result of ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine
end program
