/* fdtd-2d: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double ex[NX][NY], double ey[NX][NY], double hz[NX][NY], double fict[TMAX]) {
  for (int i = 0; i < TMAX; i++)
    fict[i] = (double)i;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      ex[i][j] = ((double)i * (j + 1)) / NX;
      ey[i][j] = ((double)i * (j + 2)) / NY;
      hz[i][j] = ((double)i * (j + 3)) / NX;
    }
}

static void reference(double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
                      double fict[TMAX]) {
  for (int t = 0; t < TMAX; t++) {
    for (int j = 0; j < NY; j++)
      ey[0][j] = fict[t];
    for (int i = 1; i < NX; i++)
      for (int j = 0; j < NY; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (int i = 0; i < NX; i++)
      for (int j = 1; j < NY; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (int i = 0; i < NX - 1; i++)
      for (int j = 0; j < NY - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}
