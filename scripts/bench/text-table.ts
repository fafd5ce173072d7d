/** Plain-text tables for the benchmark's output. */

/** A table indented by three spaces: first column left-aligned, the others right-aligned. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => '   ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Milliseconds with a fixed number of decimals. */
export function ms(value: number, digits: number): string {
  return value.toFixed(digits);
}

/** Bytes with thousands separators. */
export function bytes(value: number): string {
  return value.toLocaleString('en-US');
}
