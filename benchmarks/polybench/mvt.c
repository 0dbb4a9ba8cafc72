/* mvt: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double x1[N], double x2[N], double y_1[N], double y_2[N], double A[N][N]) {
  for (int i = 0; i < N; i++) {
    x1[i] = (double)(i % N) / N;
    x2[i] = (double)((i + 1) % N) / N;
    y_1[i] = (double)((i + 3) % N) / N;
    y_2[i] = (double)((i + 4) % N) / N;
    for (int j = 0; j < N; j++)
      A[i][j] = (double)(i * j % N) / N;
  }
}

static void reference(double x1[N], double x2[N], double y_1[N], double y_2[N],
                      double A[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
}
