// CSV files the usage page offers for download (RFC 4180: comma-separated, CRLF lines, fields quoted when needed),
// built from the numbers on the page. Text that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is
// kept as text by a leading apostrophe: key names and model slugs are the organization's own input.

/** One cell: numbers are written as they are, text quoted where it must be. */
export type CsvCell = string | number;

/** The CSV text of a header row and data rows. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return [header, ...rows].map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}

function csvField(cell: CsvCell): string {
  if (typeof cell === "number") return Number.isFinite(cell) ? String(cell) : "";
  const text = /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Has the browser save `csv` as `fileName` (a Blob URL, so nothing goes to the server or leaves the page's origin). */
export function downloadCsv(fileName: string, csv: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: "text/csv;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has taken the URL by the next turn; keep it a little longer for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
