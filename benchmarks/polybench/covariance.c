/* covariance: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *float_n, double data[N][M], double cov[M][M], double mean[M]) {
  (void)cov;
  (void)mean;
  *float_n = (double)N;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      data[i][j] = ((double)i * j) / M;
}

static void reference(double float_n, double data[N][M], double cov[M][M], double mean[M]) {
  for (int j = 0; j < M; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      data[i][j] -= mean[j];
  for (int i = 0; i < M; i++)
    for (int j = i; j < M; j++) {
      cov[i][j] = 0.0;
      for (int k = 0; k < N; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
}
