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
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {createRequire} from 'node:module';

const [file, func, shot, viewersArg] = process.argv.slice(2);
if (!file || !func) {
  console.error('usage: node firefox-source-view.mjs PROFILE.json FUNCTION [PNG] [VIEWERS_DIR]');
  process.exit(2);
}
const viewers = path.resolve(viewersArg ?? path.join(import.meta.dirname, '../../../shared/viewers'));
const app = path.join(viewers, 'firefox-profiler');
const {chromium} = createRequire(path.join(viewers, 'package.json'))('playwright-core');

const server = http.createServer((req, res) => {
  const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  let f = p === '/__profile.json' ? path.resolve(file) : path.join(app, path.normalize('/' + p));
  if (f !== path.resolve(file) && !(fs.existsSync(f) && fs.statSync(f).isFile())) f = path.join(app, 'index.html');
  const type = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
    '.wasm': 'application/wasm', '.svg': 'image/svg+xml'}[path.extname(f)] ?? 'application/octet-stream';
  res.writeHead(200, {'Content-Type': type});
  fs.createReadStream(f).pipe(res);
});
await new Promise(r => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking']});
const page = await (await browser.newContext({viewport: {width: 1400, height: 900}})).newPage();
// Nothing but this server: the source must come from the profile itself.
await page.route(u => !u.toString().startsWith(base), r => r.abort());
try {
  // The inverted tree: each function that ran is a root, FUNCTION among them.
  const search = encodeURIComponent(func);
  await page.goto(`${base}/from-url/${encodeURIComponent(base + '/__profile.json')}/calltree/?invertCallstack&search=${search}`);
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
    const source = (document.querySelector('.bottomBoxTitle')?.innerText ?? '').trim();
    return {source, shown: code.length, lines};
  });
  if (shot) await page.screenshot({path: shot});
  console.log(JSON.stringify({file: path.basename(file), function: func, opened, ...view}));
  process.exitCode = opened && view.shown > 0 && view.lines.length > 0 ? 0 : 1;
} finally {
  await browser.close();
  server.close();
}
