/* trmm: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double A[M][M], double B[M][N]) {
  *alpha = 1.5;
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < i; j++)
      A[i][j] = (double)((i + j) % M) / M;
    A[i][i] = 1.0;
    for (int j = 0; j < N; j++)
      B[i][j] = (double)((N + (i - j)) % N) / N;
  }
}

static void reference(double alpha, double A[M][M], double B[M][N]) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      for (int k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
}
