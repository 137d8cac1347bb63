// Opens a `jscalls timeline` output in the Firefox Profiler (the built app in ../shared/viewers),
// shows every track, selects the track of jscalls' calls and saves a screenshot of its marker
// chart. Prints one JSON line: the tracks the app lists and whether the calls' track is there.
//
//   node tests/browser/firefox-timeline.mjs TIMELINE.json PNG [VIEWERS_DIR]
//
// needs: Chromium (apt-get install chromium) and `npm ci` in VIEWERS_DIR (default ../shared/viewers).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {createRequire} from 'node:module';

const [file, shot, viewersArg] = process.argv.slice(2);
if (!file || !shot) { console.error('usage: node firefox-timeline.mjs TIMELINE.json PNG [VIEWERS_DIR]'); process.exit(2); }
const viewers = path.resolve(viewersArg ?? path.join(import.meta.dirname, '../../../shared/viewers'));
const app = path.join(viewers, 'firefox-profiler');
const {chromium} = createRequire(path.join(viewers, 'package.json'))('playwright-core');

const server = http.createServer((req, res) => {
  const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  let f = p === '/__timeline.json' ? path.resolve(file) : path.join(app, path.normalize('/' + p));
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
const page = await (await browser.newContext({viewport: {width: 1400, height: 800}})).newPage();
try {
  await page.goto(`${base}/from-url/${encodeURIComponent(base + '/__timeline.json')}/marker-chart/`);
  // The track menu ("2 / 27 tracks"): show them all, then pick the calls' track.
  await page.waitForSelector('.timelineSettingsHiddenTracks', {timeout: 30000});
  if (process.env.DUMP) console.log(await page.$eval('.timelineSettingsHiddenTracks', e => e.outerHTML));
  await page.click('.timelineSettingsHiddenTracks');
  await page.getByText('Show all tracks', {exact: false}).first().click();
  await page.keyboard.press('Escape');
  const labels = await page.$$eval('.timelineTrackThreadRow, .timelineTrackRow', els => els.map(e => e.innerText.split('\n')[0]));
  const calls = page.getByText('JS calls (jscalls)').first();
  const found = await calls.count() > 0;
  if (found) await calls.click();
  await page.waitForTimeout(1500);
  await page.screenshot({path: shot});
  console.log(JSON.stringify({file: path.basename(file), found, tracks: labels}));
  process.exitCode = found ? 0 : 1;
} finally {
  await browser.close();
  server.close();
}
