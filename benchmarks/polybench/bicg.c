/* bicg: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double A[N][M], double s[M], double q[N], double p[M], double r[N]) {
  (void)s;
  (void)q;
  for (int i = 0; i < M; i++)
    p[i] = (double)(i % M) / M;
  for (int i = 0; i < N; i++) {
    r[i] = (double)(i % N) / N;
    for (int j = 0; j < M; j++)
      A[i][j] = (double)(i * (j + 1) % N) / N;
  }
}

static void reference(double A[N][M], double s[M], double q[N], double p[M], double r[N]) {
  for (int i = 0; i < M; i++)
    s[i] = 0;
  for (int i = 0; i < N; i++) {
    q[i] = 0.0;
    for (int j = 0; j < M; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}
