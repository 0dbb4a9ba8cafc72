/* atax: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double A[M][N], double x[N], double y[N], double tmp[M]) {
  (void)y;
  (void)tmp;
  double fn = (double)N;
  for (int i = 0; i < N; i++)
    x[i] = 1 + (i / fn);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (double)((i + j) % N) / (5 * M);
}

static void reference(double A[M][N], double x[N], double y[N], double tmp[M]) {
  for (int i = 0; i < N; i++)
    y[i] = 0;
  for (int i = 0; i < M; i++) {
    tmp[i] = 0.0;
    for (int j = 0; j < N; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < N; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
}
