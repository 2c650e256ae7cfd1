// Reference row sums in f64.

/** out[r] = sum of row r of x: [rows, n]. */
export function sumRowsRef(x: Float32Array, rows: number, n: number): Float32Array {
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += x[r * n + i];
    out[r] = s;
  }
  return out;
}
