// Opens a `jscalls timeline` output in the Firefox Profiler (the built app in ../shared/viewers)
// as a user would, touching nothing, and says which tracks it shows and whether the calls' track
// is among them with samples. With PNG, it then opens the same view with the calls' thread
// selected (through the URL, as a link would) on TAB and saves a screenshot.
//
//   node tests/browser/firefox-timeline.mjs TIMELINE.json [PNG] [TAB] [VIEWERS_DIR]
//
// TAB is one of the app's tabs (calltree, flame-graph, stack-chart, marker-chart; default
// stack-chart). Prints one JSON line: {shown: [track names], threads: [[name, samples, markers]],
// calls: {name, samples, shown}}; exits 0 when the calls' track is shown with samples, 1 if not.
//
// needs: Chromium (apt-get install chromium) and `npm ci` in VIEWERS_DIR (default ../shared/viewers).
import path from 'node:path';
import {openProfiler} from './profiler.mjs';

const [file, shot, tab = 'stack-chart', viewersArg] = process.argv.slice(2);
if (!file) { console.error('usage: node firefox-timeline.mjs TIMELINE.json [PNG] [TAB] [VIEWERS_DIR]'); process.exit(2); }
const {page, from, close} = await openProfiler(file, viewersArg);
try {
  await page.goto(from('calltree/'));
  // The app has loaded the profile once it exposes it and draws the track names.
  await page.waitForFunction(() => { try { return window.profile && document.querySelector('.timelineTrackNameButton'); } catch { return false; } }, null,
    {timeout: 60000});
  await page.waitForTimeout(1000);
  const shown = await page.$$eval('.timelineTrackNameButton', els => els.map(e => e.innerText.split('\n')[0]));
  const threads = await page.evaluate(() => window.profile.threads.map(t => [t.name, t.samples.length, t.markers.length]));
  // The calls' own thread, or for a profile's timeline (one thread) that thread.
  const k = threads.length === 1 ? 0 : threads.findIndex(t => t[0].endsWith('JS calls (jscalls)'));
  const calls = k < 0 ? null
    : {name: threads[k][0], samples: threads[k][1], shown: shown.some(s => threads[k][0].startsWith(s.replace(/…$/, '')))};
  if (shot && k >= 0) {
    const u = new URL(page.url());
    u.searchParams.set('thread', String(k));
    u.pathname = u.pathname.replace(/calltree\/$/, `${tab}/`);
    await page.goto(u.toString());
    await page.waitForFunction(() => { try { return !!window.profile; } catch { return false; } }, null, {timeout: 60000});
    await page.waitForTimeout(2000);
    await page.screenshot({path: shot});
  }
  console.log(JSON.stringify({file: path.basename(file), shown, threads, calls}));
  process.exitCode = calls && calls.shown && calls.samples > 0 ? 0 : 1;
} finally {
  await close();
}
