// Opens a Firefox profile (`jscalls export --to firefox --by-line`) in the Firefox Profiler (the
// built app in ../shared/viewers), double-clicks the call tree's row of FUNCTION, as a user
// opens its source, and reads the source view: the lines of code it shows and the time it puts
// beside each line. With PNG, saves a screenshot of it.
//
//   node tests/browser/firefox-source-view.mjs PROFILE.json FUNCTION [PNG] [VIEWERS_DIR]
//
// Prints one JSON line: {file, function, source: the file the view shows, lines: [[line, total,
// self, code]] for the lines with a time}; exits 0 when the view shows code with times beside
// it, 1 if not.
//
// needs: Chromium (apt-get install chromium) and `npm ci` in VIEWERS_DIR (default ../shared/viewers).
import path from 'node:path';
import {openProfiler} from './profiler.mjs';

const [file, func, shot, viewersArg] = process.argv.slice(2);
if (!file || !func) {
  console.error('usage: node firefox-source-view.mjs PROFILE.json FUNCTION [PNG] [VIEWERS_DIR]');
  process.exit(2);
}
const {page, from, close} = await openProfiler(file, viewersArg, {height: 900});
try {
  // The inverted tree: each function that ran is a root, FUNCTION among them.
  const search = encodeURIComponent(func);
  await page.goto(from(`calltree/?invertCallstack&search=${search}`));
  await page.waitForSelector('.treeViewRow', {timeout: 60000});
  await page.waitForTimeout(1000);
  const names = await page.$$eval('.treeViewRow', rows => rows.map(r => r.innerText));
  const k = names.findIndex(t => t.split('\n').some(c => c.trim().startsWith(func + ' ')));
  const opened = k >= 0;
  if (opened) await page.locator('.treeViewRow').nth(k).dblclick();
  await page.waitForSelector('.cm-content', {timeout: 15000}).catch(() => {});
  await page.waitForTimeout(1500);
  // Each gutter's cells lie level with the line they are for.
  const view = await page.evaluate(() => {
    const at = sel => new Map([...document.querySelectorAll(sel + ' .cm-gutterElement')]
      .filter(e => e.innerText.trim() !== '')
      .map(e => [Math.round(e.getBoundingClientRect().top), e.innerText.trim()]));
    const numbers = at('.cm-lineNumbers');
    const total = at('.cm-total-timings-gutter');
    const self = at('.cm-self-timings-gutter');
    const code = [...document.querySelectorAll('.cm-line')].map(e => [Math.round(e.getBoundingClientRect().top), e.innerText]);
    const lines = [...numbers].filter(([top]) => total.has(top)).map(([top, n]) =>
      [Number(n), Number(total.get(top)), self.has(top) ? Number(self.get(top)) : 0, code.find(c => c[0] === top)?.[1] ?? '']);
    const source = (document.querySelector('.bottom-box-title')?.innerText ?? '').trim();
    return {source, shown: code.length, lines};
  });
  if (shot) await page.screenshot({path: shot});
  console.log(JSON.stringify({file: path.basename(file), function: func, opened, ...view}));
  process.exitCode = opened && view.shown > 0 && view.lines.length > 0 ? 0 : 1;
} finally {
  await close();
}
