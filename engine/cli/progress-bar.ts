// A one-line progress bar on stderr, drawn only when stderr is a terminal.

/** Draws `label [#####-----] 42% 1.2/2.9 GB` in place, throttled to ~10 updates a second. */
export class ProgressBar {
  private lastDraw = 0;
  private readonly enabled = process.stderr.isTTY === true;

  constructor(private readonly label: string) {}

  update(done: number, total: number): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.lastDraw < 100 && done < total) return;
    this.lastDraw = now;
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const width = 30;
    const filled = Math.round(fraction * width);
    const gb = (bytes: number) => (bytes / 1e9).toFixed(2);
    process.stderr.write(`\r${this.label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${gb(done)}/${gb(total)} GB`);
  }

  finish(message?: string): void {
    if (!this.enabled) return;
    process.stderr.write(`\r\x1b[K${message ? `${message}\n` : ""}`);
  }
}
