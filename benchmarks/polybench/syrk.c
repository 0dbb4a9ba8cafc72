/* syrk: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double C[N][N], double A[N][M]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      A[i][j] = (double)((i * j + 1) % N) / N;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = (double)((i * j + 2) % M) / M;
}

static void reference(double alpha, double beta, double C[N][N], double A[N][M]) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
}
