/* syr2k: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double C[N][N], double A[N][M],
                 double B[N][M]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i * j + 2) % M) / M;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = (double)((i * j + 3) % N) / M;
}

static void reference(double alpha, double beta, double C[N][N], double A[N][M],
                      double B[N][M]) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}
