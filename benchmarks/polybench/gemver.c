/* gemver: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double A[N][N], double u1[N], double v1[N],
                 double u2[N], double v2[N], double w[N], double x[N], double y[N],
                 double z[N]) {
  *alpha = 1.5;
  *beta = 1.2;
  double fn = (double)N;
  for (int i = 0; i < N; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (int j = 0; j < N; j++)
      A[i][j] = (double)(i * j % N) / N;
  }
}

static void reference(double alpha, double beta, double A[N][N], double u1[N], double v1[N],
                      double u2[N], double v2[N], double w[N], double x[N], double y[N],
                      double z[N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];
  for (int i = 0; i < N; i++)
    x[i] = x[i] + z[i];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
}
