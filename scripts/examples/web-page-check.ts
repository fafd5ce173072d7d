/**
 * The web page example, checked in a real browser: Debian's chromium through playwright-core (as
 * the chat app's browser tests, test/browser/chromium.ts). It opens the page, starts a session,
 * sends the message in the box, approves the write the agent asks for, and waits for the turn's
 * end and the reply; a screenshot of the page is kept in test-artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { launchChromium, screenshot } from '../../test/browser/chromium';

/** What the page showed, for the runner to print. */
export interface PageRun {
  lines: string[];
  screenshot: string;
}

/** Drive the page at `url` through one turn; `scripted` checks the scripted model's exact reply too. */
export async function checkWebPage(url: string, scripted: boolean, timeoutMs = 90_000): Promise<PageRun> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    try {
      return await drive(page, url, scripted, timeoutMs);
    } catch (error) {
      // What the page showed when it went wrong, and a picture of it.
      const shot = await screenshot(page, 'example-web-page-failed').catch(() => 'none');
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nThe page shows:\n${(await lines(page).catch(() => [])).join('\n')}\nscreenshot: ${shot}`);
    }
  } finally {
    await browser.close();
  }
}

/** Start a session in the page, send its message, approve, wait for the reply, end the session. */
async function drive(page: Page, url: string, scripted: boolean, timeoutMs: number): Promise<PageRun> {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.setDefaultTimeout(timeoutMs);
  await page.goto(url);
  await page.getByText('Model:').waitFor();
  await page.getByRole('button', { name: 'Start a session' }).click();
  await page.getByText(/^Session /).waitFor();
  await page.getByRole('button', { name: 'Send' }).click();
  // Approve each write the agent asks for until the turn has ended.
  const ended = page.locator('.status', { hasText: /^turn 1 / });
  const approve = page.getByRole('button', { name: 'Approve' }).first();
  const deadline = Date.now() + timeoutMs;
  while (!(await ended.isVisible())) {
    if (Date.now() > deadline) throw new Error(`The turn did not end within ${timeoutMs / 1000} s; the page shows:\n${(await lines(page)).join('\n')}`);
    // Whichever comes first; the other wait is dropped.
    await Promise.race([approve.waitFor().catch(() => undefined), ended.waitFor().catch(() => undefined)]);
    if (await approve.isVisible()) {
      await approve.click();
      // The box goes once the server has taken the decision.
      await approve.waitFor({ state: 'detached' });
    }
  }
  const finished = (await ended.textContent()) ?? '';
  if (!finished.includes('completed') && scripted) throw new Error(`The turn did not complete: ${finished}`);
  if (scripted) await page.locator('.reply', { hasText: 'I wrote your first requirements' }).waitFor();
  const shot = await screenshot(page, 'example-web-page');
  await page.getByRole('button', { name: 'End', exact: true }).click();
  await page.getByText('session ended').waitFor();
  if (errors.length > 0) throw new Error(`The page threw: ${errors.join('; ')}`);
  return { lines: await lines(page), screenshot: shot };
}

/** The conversation as the page shows it, one entry a line. */
async function lines(page: Page): Promise<string[]> {
  return (await page.locator('#log > *').allTextContents()).map((line) => line.replace(/\s+/g, ' ').trim());
}
