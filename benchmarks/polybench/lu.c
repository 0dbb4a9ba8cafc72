/* lu: PolyBench 4.2's initialisation and a plain C reference.
   PolyBench makes A positive semi-definite as B = A A^T, summing over t outermost; here
   each B[r][s] is summed in the same order (t ascending, from 0.0) with s innermost over
   a transposed copy of A, which gives the same bits much faster. */

static void init(double A[N][N]) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      A[i][j] = (double)(-j % N) / N + 1;
    for (int j = i + 1; j < N; j++)
      A[i][j] = 0;
    A[i][i] = 1;
  }
  double (*At)[N] = aligned_alloc(64, sizeof(double) * N * N);
  double (*B)[N] = aligned_alloc(64, sizeof(double) * N * N);
  if (!At || !B) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  for (int r = 0; r < N; r++)
    for (int s = 0; s < N; s++) {
      At[s][r] = A[r][s];
      B[r][s] = 0;
    }
  for (int r = 0; r < N; r++)
    for (int t = 0; t < N; t++)
      for (int s = 0; s < N; s++)
        B[r][s] += A[r][t] * At[t][s];
  for (int r = 0; r < N; r++)
    for (int s = 0; s < N; s++)
      A[r][s] = B[r][s];
  free(At);
  free(B);
}

static void reference(double A[N][N]) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (int j = i; j < N; j++)
      for (int k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
}
