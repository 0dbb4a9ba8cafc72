/* symm: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double C[M][N], double A[M][M],
                 double B[M][N]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = (double)((i + j) % 100) / M;
      B[i][j] = (double)((N + i - j) % 100) / M;
    }
  for (int i = 0; i < M; i++) {
    for (int j = 0; j <= i; j++)
      A[i][j] = (double)((i + j) % 100) / M;
    for (int j = i + 1; j < M; j++)
      A[i][j] = -999; /* never read */
  }
}

static void reference(double alpha, double beta, double C[M][N], double A[M][M],
                      double B[M][N]) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}
