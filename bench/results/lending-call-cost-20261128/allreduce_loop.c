#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int c,char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);int n=atoi(v[1]);double x=1,y;
for(int i=0;i<1000;i++) MPI_Allreduce(&x,&y,1,MPI_DOUBLE,MPI_SUM,MPI_COMM_WORLD);
double t=MPI_Wtime(); for(int i=0;i<n;i++) MPI_Allreduce(&x,&y,1,MPI_DOUBLE,MPI_SUM,MPI_COMM_WORLD); t=MPI_Wtime()-t;
if(!r) printf("%.3f us/allreduce\n",t/n*1e6); MPI_Finalize();}
