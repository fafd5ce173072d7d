/**
 * The bundle the benchmark works on: a copy of the example bundle in a temp folder, plus a ~10 KB
 * text file for the history-growth turn, so nothing in the repository is touched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CleanupStack } from './cleanup-stack';

/** Folder of the example bundle in the repository. */
export const EXAMPLE_BUNDLE = path.resolve(__dirname, '../../bundles/requirements-facilitator');

/** Agent of the example bundle. */
export const EXAMPLE_AGENT = 'facilitator';

/** Tool path of the small file the engine turns read (the bundle's config.yaml). */
export const SMALL_FILE = '{bundle-root}/config.yaml';
/** Tool path of the ~10 KB file the history-growth turn reads. */
export const LARGE_FILE = '{bundle-root}/bench/notes-10k.md';

/** The prepared copy. */
export interface BenchBundle {
  bundlePath: string;
  smallFileBytes: number;
  largeFileBytes: number;
}

/** Copy the example bundle and write the 10 KB file; the temp folder's removal goes onto `cleanup`. */
export function prepareBenchBundle(cleanup: CleanupStack): BenchBundle {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-bench-'));
  cleanup.push('temp folder', () => fs.rmSync(root, { recursive: true, force: true }));
  const bundlePath = path.join(root, 'requirements-facilitator');
  fs.cpSync(EXAMPLE_BUNDLE, bundlePath, { recursive: true });
  fs.mkdirSync(path.join(bundlePath, 'bench'));
  const large = path.join(bundlePath, 'bench', 'notes-10k.md');
  fs.writeFileSync(large, tenKilobytesOfNotes());
  return {
    bundlePath,
    smallFileBytes: fs.statSync(path.join(bundlePath, 'config.yaml')).size,
    largeFileBytes: fs.statSync(large).size,
  };
}

/** About 10 KB of plain, varied lines (quotes and newlines, so JSON escaping costs what it would). */
function tenKilobytesOfNotes(): string {
  const lines = ['# Interview notes', ''];
  for (let i = 1; lines.join('\n').length < 10 * 1024 - 80; i++) {
    lines.push(`${String(i).padStart(3, '0')}. Stakeholder "${i % 7}" asked for item ${i * 37} to be ready before review ${i % 5}.`);
  }
  return `${lines.join('\n')}\n`;
}
