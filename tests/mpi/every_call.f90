! Fortran (mpif.h) calls reach libaloe-mpi: OpenMPI's Fortran bindings call PMPI_* directly,
! so these are counted only by its Fortran wrappers. Results checked as in every_call.c,
! MPI_IN_PLACE included (its address must reach the library unchanged).
program every_call_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, x, y, left, right, got, i, index, outcount, done
  integer :: requests(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE), indices(2)
  integer :: all(64), mine(64), returns
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
  ! The rest of the calls that wait politely when the rank lends (ALOE_LEND), each result and
  ! ierror checked: the polite form passes statuses, indices and MPI_STATUS(ES)_IGNORE on.
  call MPI_REDUCE(rank, y, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. (rank == 0 .and. y /= nranks * (nranks - 1) / 2)) call fail('MPI_REDUCE')
  call MPI_ALLGATHER(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(all(1:nranks) /= [(i, i = 0, nranks - 1)])) call fail('MPI_ALLGATHER')
  mine(1:nranks) = [(100 * rank + i, i = 0, nranks - 1)]
  call MPI_ALLTOALL(mine, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(all(1:nranks) /= [(100 * i + rank, i = 0, nranks - 1)])) call fail('MPI_ALLTOALL')
  all = -1
  call MPI_GATHER(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. (rank == nranks - 1 .and. any(all(1:nranks) /= [(i, i = 0, nranks - 1)]))) &
    call fail('MPI_GATHER')
  call MPI_SCATTER(mine, 1, MPI_INTEGER, x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. x /= rank) call fail('MPI_SCATTER')
  got = -1
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, right, 3, got, 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, status, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left .or. status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 3) &
    call fail('MPI_SENDRECV')
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, right, 4, got, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left) call fail('MPI_SENDRECV (MPI_STATUS_IGNORE)')
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, requests(2), ierr)
  done = 0
  do while (done < 2)
    call MPI_WAITANY(2, requests, index, status, ierr)
    if (ierr /= MPI_SUCCESS .or. index < 1 .or. index > 2 .or. requests(index) /= MPI_REQUEST_NULL) call fail('MPI_WAITANY')
    if (index == 1 .and. (got /= left .or. status(MPI_TAG) /= 5)) call fail('MPI_WAITANY (status)')
    done = done + 1
  end do
  call MPI_WAITANY(2, requests, index, status, ierr)
  if (ierr /= MPI_SUCCESS .or. index /= MPI_UNDEFINED) call fail('MPI_WAITANY (no active request)')
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 6, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, requests(2), ierr)
  done = 0
  do while (done < 2)
    call MPI_WAITSOME(2, requests, outcount, indices, statuses, ierr)
    if (ierr /= MPI_SUCCESS .or. outcount < 1 .or. outcount > 2) call fail('MPI_WAITSOME')
    done = done + outcount
  end do
  if (got /= left) call fail('MPI_WAITSOME (result)')
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_PROBE(left, 7, MPI_COMM_WORLD, status, ierr)
  if (ierr /= MPI_SUCCESS .or. status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 7) call fail('MPI_PROBE')
  call MPI_RECV(got, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left) call fail('MPI_RECV (MPI_STATUS_IGNORE)')
  call MPI_WAIT(requests(2), MPI_STATUS_IGNORE, ierr)
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 8, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, right, 8, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_WAITALL(2, requests, MPI_STATUSES_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= left) call fail('MPI_WAITALL (MPI_STATUSES_IGNORE)')
  ! Edge cases of the polite forms: nothing to wait for, a null peer, and an error returned.
  call MPI_WAITALL(0, requests, statuses, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_WAITALL (no request)')
  got = -7
  call MPI_RECV(got, 1, MPI_INTEGER, MPI_PROC_NULL, 9, MPI_COMM_WORLD, status, ierr)
  if (ierr /= MPI_SUCCESS .or. got /= -7 .or. status(MPI_SOURCE) /= MPI_PROC_NULL) call fail('MPI_RECV (MPI_PROC_NULL)')
  requests(1) = MPI_REQUEST_NULL
  call MPI_WAIT(requests(1), status, ierr)
  if (ierr /= MPI_SUCCESS .or. requests(1) /= MPI_REQUEST_NULL) call fail('MPI_WAIT (MPI_REQUEST_NULL)')
  call MPI_COMM_DUP(MPI_COMM_WORLD, returns, ierr)
  call MPI_COMM_SET_ERRHANDLER(returns, MPI_ERRORS_RETURN, ierr)
  call MPI_RECV(got, 1, MPI_INTEGER, nranks, 10, returns, status, ierr)  ! no such rank
  if (ierr == MPI_SUCCESS) call fail('MPI_RECV (an invalid rank returns its error)')
  call MPI_COMM_FREE(returns, ierr)
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print *, 'every_call_f: wrong result of ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
