/**
 * The browser of the browser tests: Debian's `chromium` (installed by `npm run setup`, as root with
 * apt-get) driven by playwright-core, which downloads no browser of its own. `LOOPWRIGHT_CHROMIUM`
 * names another Chromium or Chrome binary.
 *
 * The tests are skipped, saying why, only where no chromium is installed and only outside CI: CI
 * runs set-up, which installs it, so there a missing browser fails the tests instead of hiding them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where the tests' screenshots go (git-ignored; CI keeps them as artifacts). */
export const SCREENSHOT_DIR = path.resolve(__dirname, '../../test-artifacts/screenshots');

/** The Chromium binary to drive, or undefined when none is installed. */
export function findChromium(): string | undefined {
  const named = process.env.LOOPWRIGHT_CHROMIUM;
  if (named) return named;
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const name of ['chromium', 'chromium-browser']) {
    for (const dir of [...dirs, '/usr/bin']) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
  }
  return undefined;
}

/** Why the browser tests of `suite` cannot run here, announced as a skipped test; undefined when they can (always in CI). */
export function browserTestsSkipped(suite: string): string | undefined {
  if (findChromium() !== undefined || process.env.CI === 'true') return undefined;
  const why = `${suite}: SKIPPED, chromium is not installed here; npm run setup installs it (apt-get install chromium), or set LOOPWRIGHT_CHROMIUM`;
  process.stderr.write(`\n${why}\n`);
  test.skip(why, () => undefined);
  return why;
}

/** Headless Chromium; throws naming the fix when there is none (in CI, where the tests must run). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('No chromium: run npm run setup (it installs Debian chromium as root) or set LOOPWRIGHT_CHROMIUM');
  return chromium.launch({
    executablePath,
    headless: true,
    // Chromium's own sandbox needs user namespaces that containers and root shells often lack.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

/** Save a screenshot of the page as test-artifacts/screenshots/<name>.png; returns the file. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}
