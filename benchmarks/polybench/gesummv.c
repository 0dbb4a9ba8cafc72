/* gesummv: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double A[N][N], double B[N][N], double tmp[N],
                 double x[N], double y[N]) {
  (void)tmp;
  (void)y;
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < N; i++) {
    x[i] = (double)(i % N) / N;
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i * j + 2) % N) / N;
    }
  }
}

static void reference(double alpha, double beta, double A[N][N], double B[N][N],
                      double tmp[N], double x[N], double y[N]) {
  for (int i = 0; i < N; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (int j = 0; j < N; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}
