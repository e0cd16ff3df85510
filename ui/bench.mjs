// The web UI's benchmark (printed, not a timed test): a release `strata
// serve` over a data directory of 20M spans, driven by Debian's chromium
// through playwright-core, measures
//   - the first page's JavaScript: the entry script and the chunks
//     index.html preloads, as brotli bytes the server sends;
//   - services page interactive: from navigation start to the services
//     table's rows painted (fresh browser context each run: cold cache;
//     the first visit after the server starts is printed on its own);
//   - a 50,000-span trace (sent by the bench) from navigation start to its
//     waterfall's rows painted;
//   - (the server is left to finish its background work first: compaction
//     and the service map's catch-up after its start and the trace's
//     write; the bench prints how long that took)
//   - scroll frame times in that waterfall and in a log table of 10,000
//     rows: the page is scrolled a fixed distance every animation frame,
//     with the frame rate unthrottled (--disable-frame-rate-limit,
//     --disable-gpu-vsync), and the time between frames is the frame time.
//     Each view is scrolled three times in the same page; the figure is
//     the median of the three passes' p95s (the first pass's is printed
//     and in the JSON as *_first_pass_p95_ms).
// The last line is JSON: first_page_js_kb_br, services_interactive_ms,
// trace50k_open_ms, trace50k_scroll_p95_ms, logs10k_scroll_p95_ms (medians
// of the runs; the targets are 150 KB, 1,000 ms, 1,500 ms, 16 ms, 16 ms).
//
//   node ui/bench.mjs [--binary build/release/strata] [--dir build/ui-bench-data]
//                     [--spans 20000000] [--runs 5] [--rebuild] [--profile DIR]
//   node ui/bench.mjs --analyse DIR
//
// --profile DIR scrolls each view three times, records a Chromium trace
// (categories devtools.timeline, v8 and toplevel) over each scroll, writes
// them to DIR with the frame times, and prints the renderer main thread's
// CPU time per frame by kind (script, style, layout, paint, GC, other):
// what a frame costs, which a busy machine changes less than the time
// between frames. It then prints, for the slow frames (above the scroll's
// 95th percentile) and for the rest, the mean of the same kinds, the main
// thread's costliest events and each group of threads' busy wall time per
// frame (main; the compositor; the renderer's workers and, of those, raster,
// V8's compilers and V8's concurrent GC; viz; the GPU process): what the
// slow frames do that the others do not, on the main thread or off it;
// and the frame times of the frames that laid out (a scroll step changed
// the rows in the page) against the others'.
// `--spans 100000` (a small directory, built in seconds) is enough for
// that comparison. --analyse DIR prints the same again from DIR's traces.
//
// The data directory is built once with `strata bench query --keep` (spans
// over 24 hours, log records in the last hour) and reused while it is less
// than six days old (the pages look at the last seven days). The binary is
// built with the release preset when it is missing. playwright-core comes
// from tests/ui (`bash scripts/setup.sh --tests` installs it).

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStrata } from '../tests/ui/strata_server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DAY_MS = 24 * 3600 * 1000;

function parseArgs(argv) {
  const options = {
    binary: process.env.STRATA_BINARY ?? join(root, 'build/release/strata'),
    dir: join(root, 'build/ui-bench-data'),
    spans: 20_000_000,
    runs: 5,
    rebuild: false,
    profile: null,
    analyse: null,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      i += 1;
      return argv[i];
    };
    if (flag === '--binary') options.binary = resolve(value());
    else if (flag === '--dir') options.dir = resolve(value());
    else if (flag === '--spans') options.spans = Number(value());
    else if (flag === '--runs') options.runs = Number(value());
    else if (flag === '--rebuild') options.rebuild = true;
    else if (flag === '--profile') options.profile = resolve(value());
    else if (flag === '--analyse') options.analyse = resolve(value());
    else throw new Error(`unknown argument ${flag} (see the comment at the top of ui/bench.mjs)`);
  }
  if (!Number.isInteger(options.spans) || options.spans < 100_000) throw new Error('--spans: at least 100000');
  if (!Number.isInteger(options.runs) || options.runs < 1) throw new Error('--runs: at least 1');
  return options;
}

function ensureBinary(binary) {
  if (existsSync(binary)) return;
  console.log(`${binary} is missing: building the release preset's strata`);
  execFileSync('cmake', ['--preset', 'release'], { cwd: root, stdio: 'inherit' });
  execFileSync('cmake', ['--build', '--preset', 'release', '--target', 'strata'], { cwd: root, stdio: 'inherit' });
}

// Builds the data directory unless a recent one of the same size is there.
function ensureData(options) {
  const marker = join(options.dir, 'ui-bench.json');
  if (!options.rebuild && existsSync(marker)) {
    const built = JSON.parse(readFileSync(marker, 'utf8'));
    if (built.spans === options.spans && Date.now() - built.built_at_ms < 6 * DAY_MS) {
      console.log(`data: ${options.dir} (${built.spans} spans, built ${new Date(built.built_at_ms).toISOString()})`);
      return;
    }
  }
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(dirname(options.dir), { recursive: true });
  const batches = Math.max(1, Math.round(options.spans / 100_000));
  console.log(`data: building ${options.spans} spans in ${batches} batches into ${options.dir}`);
  const started = Date.now();
  execFileSync(
    options.binary,
    ['bench', 'query', '--spans', String(options.spans), '--batches', String(batches), '--dir', options.dir,
      '--keep', '--lookups', '10', '--scans', '1'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  writeFileSync(marker, JSON.stringify({ spans: options.spans, built_at_ms: started }));
  console.log(`data: built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// An ingest token and an admin's password link, made by the CLI beside the
// running server (so a reused data directory works as well as a new one).
function credentials(binary, dataDir, api) {
  const id = `${process.pid}-${Date.now()}`;
  const tokenOutput = execFileSync(
    binary, ['token', 'create', '--data-dir', dataDir, '--name', `ui-bench-${id}`, '--scope', 'ingest'],
    { encoding: 'utf8' },
  );
  const token = /(strata_[a-z0-9]+)/.exec(tokenOutput)?.[1];
  const userOutput = execFileSync(
    binary,
    ['user', 'create', '--data-dir', dataDir, '--api-url', api, '--email', `ui-bench-${id}@example.com`,
      '--role', 'admin'],
    { encoding: 'utf8' },
  );
  const link = /password#token=([A-Za-z0-9_-]+)/.exec(userOutput)?.[1];
  if (!token || !link) throw new Error(`could not read a token or a link:\n${tokenOutput}\n${userOutput}`);
  return { token, link };
}

// One trace of `count` spans over four services: a tree whose spans have
// up to eight children, each child inside its parent's interval.
function bigTrace(count) {
  const traceId = `5eed${Date.now().toString(16).padStart(28, '0')}`.slice(0, 32);
  const hex = (n) => n.toString(16).padStart(16, '0');
  const end = BigInt(Date.now()) * 1_000_000n - 60_000_000_000n;
  const start = end - 30_000_000_000n;
  const spans = [{ id: 1, parent: 0, service: 0, start, end, depth: 0 }];
  let random = 42;
  const next = () => {
    random = (random * 1103515245 + 12345) % 2147483648;
    return random / 2147483648;
  };
  for (let parent = 0; spans.length < count; parent += 1) {
    const p = spans[parent];
    const children = Math.min(count - spans.length, 1 + Math.floor(next() * 8));
    const width = (p.end - p.start) / BigInt(children + 1);
    for (let c = 0; c < children; c += 1) {
      const s = p.start + width * BigInt(c) + width / 4n;
      spans.push({
        id: spans.length + 1, parent: p.id, service: Math.floor(next() * 4), start: s,
        end: s + (width * BigInt(2 + Math.floor(next() * 6))) / 8n, depth: p.depth + 1,
      });
    }
  }
  const services = ['frontend', 'checkout', 'inventory', 'payments'];
  const requests = [];
  for (let i = 0; i < spans.length; i += 10_000) {
    const part = spans.slice(i, i + 10_000);
    requests.push({
      resourceSpans: services.map((service, s) => ({
        resource: { attributes: [{ key: 'service.name', value: { stringValue: `ui-bench-${service}` } }] },
        scopeSpans: [{
          spans: part.filter((span) => span.service === s).map((span) => ({
            traceId,
            spanId: hex(span.id),
            parentSpanId: span.parent ? hex(span.parent) : '',
            name: `operation ${span.depth}.${span.id % 13}`,
            kind: span.parent ? 1 : 2,
            startTimeUnixNano: String(span.start),
            endTimeUnixNano: String(span.end),
            attributes: [{ key: 'bench.index', value: { intValue: String(span.id) } }],
          })),
        }],
      })),
    });
  }
  return { traceId, requests };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};
const percentile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};

// The bytes of `url` as sent with Accept-Encoding: br (node:http does not
// decode them, unlike fetch), and the encoding the server chose.
function encodedBytes(url) {
  return new Promise((done, fail) => {
    http.get(url, { headers: { 'Accept-Encoding': 'br' } }, (answer) => {
      let bytes = 0;
      answer.on('data', (chunk) => (bytes += chunk.length));
      answer.on('end', () => done({ status: answer.statusCode, encoding: answer.headers['content-encoding'], bytes }));
      answer.on('error', fail);
    }).on('error', fail);
  });
}

// Brotli bytes of the entry script and the chunks index.html preloads.
async function firstPageJavaScript(api) {
  const html = await (await fetch(`${api}/`)).text();
  const paths = new Set([
    ...[...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]),
    ...[...html.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)].map((m) => m[1]),
  ]);
  if (paths.size === 0) throw new Error(`no script in index.html:\n${html}`);
  let bytes = 0;
  for (const path of paths) {
    const answer = await encodedBytes(`${api}${path}`);
    if (answer.status !== 200 || answer.encoding !== 'br') {
      throw new Error(`${path}: ${answer.status}, encoding ${answer.encoding}`);
    }
    bytes += answer.bytes;
  }
  return { bytes, files: paths.size };
}

// Milliseconds from navigation start until `selector` matches (checked on
// every DOM change) and the frame after that is painted.
async function timeToSelector(page, url, selector, timeoutMs = 120_000) {
  await page.goto(url, { waitUntil: 'commit' });
  return page.evaluate(
    ({ selector: wanted, timeoutMs: limit }) => new Promise((done, fail) => {
      const finish = () => requestAnimationFrame(() => setTimeout(() => done(performance.now()), 0));
      if (document.querySelector(wanted)) return finish();
      const timer = setTimeout(() => fail(new Error(`${wanted} did not appear`)), limit);
      const observer = new MutationObserver(() => {
        if (!document.querySelector(wanted)) return;
        observer.disconnect();
        clearTimeout(timer);
        finish();
      });
      observer.observe(document, { childList: true, subtree: true });
    }),
    { selector, timeoutMs },
  );
}

// Frame times while `selector`'s element scrolls `step` pixels per frame
// for `frames` frames (from the top, wrapping at the end).
// With `mark`, each frame also leaves a console.timeStamp('bench-frame')
// in a trace being recorded (slowFrames finds the frames by them).
async function scrollFrameTimes(page, selector, { frames = 240, step = 180, mark = false } = {}) {
  return page.evaluate(
    ({ selector: wanted, frames: count, step: distance, mark: marked }) => new Promise((done, fail) => {
      const element = document.querySelector(wanted);
      if (!element) return fail(new Error(`${wanted} not found`));
      element.scrollTop = 0;
      const times = [];
      let last = null;
      const frame = (now) => {
        if (marked) console.timeStamp('bench-frame');
        if (last !== null) times.push(now - last);
        last = now;
        if (times.length >= count) return done({ times, height: element.scrollHeight });
        const limit = element.scrollHeight - element.clientHeight;
        element.scrollTop = element.scrollTop + distance > limit ? 0 : element.scrollTop + distance;
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }),
    { selector, frames, step, mark },
  );
}

// The kind of main-thread work a trace event is (its self time is counted
// there; an event of no kind passes its self time to the nearest enclosing
// event that has one, else to "other").
const KINDS = new Map([
  ...['FunctionCall', 'EventDispatch', 'FireAnimationFrame', 'TimerFire', 'RunMicrotasks', 'EvaluateScript',
    'v8.evaluateModule', 'FireIdleCallback', 'ResizeObserverLoop', 'HitTest'].map((n) => [n, 'script']),
  ...['UpdateLayoutTree', 'RecalculateStyles', 'ParseAuthorStyleSheet'].map((n) => [n, 'style']),
  ...['Layout', 'UpdateLayerTree', 'IntersectionObserverController::computeIntersections'].map((n) => [n, 'layout']),
  ...['Paint', 'PrePaint', 'Layerize', 'PaintImage', 'CompositeLayers', 'Commit', 'UpdateLayer'].map((n) => [n, 'paint']),
  ...['MinorGC', 'MajorGC', 'BlinkGC.AtomicPhase', 'V8.GCScavenger', 'V8.GCFinalizeMC', 'V8.GC_SCAVENGER',
    'V8.GCIncrementalMarking', 'V8.GC_MC_INCREMENTAL', 'BlinkGC.IncrementalMarkingStep', 'V8.GCCompactor',
    'ThreadState::performIdleLazySweep', 'BlinkGC.LazySweepInIdle'].map((n) => [n, 'gc']),
]);
const kindOf = (name) => KINDS.get(name) ?? (/^(V8\.GC|BlinkGC|MinorGC|MajorGC|CppGC)/.test(name) ? 'gc' : null);

// Complete events of every thread of a Chromium trace ({name, cat, start,
// end, cpu} in µs; B/E pairs joined) by "pid/tid", and the threads' names.
function traceSpans(trace) {
  const events = JSON.parse(trace).traceEvents ?? [];
  const names = new Map();
  const processes = new Map();
  const byThread = new Map();
  const open = new Map();
  for (const e of events) {
    const thread = `${e.pid}/${e.tid}`;
    if (e.ph === 'M' && e.name === 'thread_name') names.set(thread, e.args?.name ?? '');
    if (e.ph === 'M' && e.name === 'process_name') processes.set(e.pid, e.args?.name ?? '');
    let span = null;
    // Thread time (tdur) where the event has it: the CPU the frame took,
    // which other processes on the machine change less than its wall time.
    if (e.ph === 'X' && e.dur !== undefined) {
      span = { name: e.name, cat: e.cat, start: e.ts, end: e.ts + e.dur, cpu: e.tdur ?? e.dur, args: e.args };
    } else if (e.ph === 'I' || e.ph === 'i' || e.ph === 'R') {
      span = { name: e.name, cat: e.cat, start: e.ts, end: e.ts, cpu: 0, args: e.args };
    } else if (e.ph === 'B') {
      if (!open.has(thread)) open.set(thread, []);
      open.get(thread).push(e);
    } else if (e.ph === 'E') {
      const begin = open.get(thread)?.pop();
      if (begin) {
        const cpu = begin.tts !== undefined && e.tts !== undefined ? e.tts - begin.tts : e.ts - begin.ts;
        span = { name: begin.name, cat: begin.cat, start: begin.ts, end: e.ts, cpu, args: begin.args };
      }
    }
    if (!span) continue;
    if (!byThread.has(thread)) byThread.set(thread, []);
    byThread.get(thread).push(span);
  }
  for (const spans of byThread.values()) spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const group = (thread) => threadGroup(processes.get(Number(thread.split('/')[0])) ?? '', names.get(thread) ?? '');
  return { names, byThread, group };
}

// The renderer main thread with the most time in kinds of work.
function rendererMain({ names, byThread }) {
  let best = null;
  for (const [thread, spans] of byThread) {
    if (names.get(thread) !== 'CrRendererMain') continue;
    const busy = spans.reduce((sum, s) => sum + (isTask(s) ? 0 : s.cpu), 0);
    if (!best || busy > best.busy) best = { thread, spans, busy };
  }
  return best;
}

// The "toplevel" category's task events (every task of every thread):
// they say how busy a thread is; the kinds below leave them out, so a main
// thread's per-kind times are those of the devtools.timeline events alone.
const isTask = (s) => s.cat !== undefined && s.cat.split(',').includes('toplevel');

// Self times of the main thread's events by kind ({kind, name, start, self}
// in µs), through a stack of enclosing events.
function mainThreadWork(spans) {
  const out = [];
  const counts = { style: 0, layout: 0, paint: 0 };
  const stack = [];
  const close = (until) => {
    while (stack.length > 0 && stack[stack.length - 1].end <= until) {
      const done = stack.pop();
      let kind = kindOf(done.name);
      for (let i = stack.length - 1; kind === null && i >= 0; i -= 1) kind = kindOf(stack[i].name);
      out.push({
        kind: kind ?? 'other', name: done.name, start: done.start, self: Math.max(0, done.cpu - done.children),
        outermost: stack.length === 0, wall: done.end - done.start,
      });
      if (stack.length > 0) stack[stack.length - 1].children += done.cpu;
    }
  };
  for (const s of spans) {
    if (isTask(s) || s.end === s.start) continue;
    close(s.start);
    const kind = kindOf(s.name);
    if (kind === 'style' && (s.name === 'UpdateLayoutTree' || s.name === 'RecalculateStyles')) counts.style += 1;
    if (s.name === 'Layout') counts.layout += 1;
    if (s.name === 'Paint') counts.paint += 1;
    const parent = stack[stack.length - 1];
    stack.push({ ...s, end: parent ? Math.min(s.end, parent.end) : s.end, children: 0 });
  }
  close(Infinity);
  return { work: out, counts };
}

// The renderer main thread's CPU milliseconds by kind per frame, over `frames` frames,
// from a Chromium trace (the renderer with the most main-thread time).
function mainThreadPerFrame(trace, frames) {
  const totals = { script: 0, style: 0, layout: 0, paint: 0, gc: 0, other: 0, wall: 0, counts: { style: 0, layout: 0, paint: 0 } };
  const main = rendererMain(typeof trace === 'string' ? traceSpans(trace) : trace);
  if (!main) return totals;
  const { work, counts } = mainThreadWork(main.spans);
  for (const w of work) {
    totals[w.kind] += w.self;
    if (w.outermost) totals.wall += w.wall;
  }
  totals.counts = counts;
  for (const key of ['script', 'style', 'layout', 'paint', 'gc', 'other', 'wall']) totals[key] = totals[key] / 1000 / frames;
  return totals;
}

// Which group of threads a thread is in, for the time off the renderer's
// main thread: the renderer's compositor thread and its worker pool
// (raster tasks, V8's compiler and concurrent GC), the GPU process's display
// compositor (viz) and main thread, the browser.
function threadGroup(process, name) {
  if (process === 'Renderer') {
    if (name === 'CrRendererMain') return 'main';
    if (name === 'Compositor') return 'compositor';
    if (/^(ThreadPoolForegroundWorker|CompositorTileWorker)/.test(name)) return 'workers';
  }
  if (process === 'GPU Process') {
    if (name === 'VizCompositorThread') return 'viz';
    if (name === 'CrGpuMain') return 'gpu';
  }
  if (process === 'Browser' && name === 'CrBrowserMain') return 'browser';
  return 'other';
}

// The renderer's worker pool's tasks by what posted them: tile raster
// (cc's worker pool), V8's optimizing compilers, V8's concurrent GC.
const WORKER_PARTS = [
  ['workers: raster', /^cc\//],
  ['workers: v8 compile', /^v8\/src\/(compiler|maglev|baseline|codegen)/],
  ['workers: v8 gc', /^v8\/src\/heap\//],
];

// Milliseconds of [from, to) that the union of `spans` (sorted by start) covers.
function coveredMs(spans, from, to) {
  let covered = 0;
  let reach = from;
  for (const s of spans) {
    if (s.start >= to) break;
    const a = Math.max(reach, s.start);
    const b = Math.min(to, s.end);
    if (b > a) {
      covered += b - a;
      reach = b;
    }
  }
  return covered / 1000;
}

// The slow frames of a traced scroll: its frames are the intervals between
// the scroll's own frame marks (console.timeStamp 'bench-frame', one per
// animation frame, so interval k is frame time k). For the frames above
// the scroll's 95th percentile and for the others: the mean main-thread
// CPU by kind, the main thread's busiest event names, and each group of
// threads' busy wall time (the union of its tasks, per thread, summed).
function slowFrames(trace, times) {
  const spans = traceSpans(trace);
  const main = rendererMain(spans);
  if (!main) return null;
  const marks = main.spans.filter((s) => s.name === 'TimeStamp' && s.args?.data?.message === 'bench-frame')
    .map((s) => s.start);
  if (marks.length < times.length + 1) return { error: `${marks.length} frame marks for ${times.length} frames` };
  const threshold = percentile(times, 0.95);
  const windows = times.map((ms, k) => ({ ms, from: marks[k], to: marks[k + 1], slow: ms > threshold }));
  const { work } = mainThreadWork(main.spans);
  const kinds = ['script', 'style', 'layout', 'paint', 'gc', 'other'];
  // Busy wall time: the union of each thread's tasks, summed over the
  // group's threads; "workers: ..." the workers' tasks by kind. The main
  // thread's wall against its CPU by kind is time it waited for a core.
  const groups = new Map();
  const add = (group, tasks) => {
    if (tasks.length === 0) return;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(tasks);
  };
  for (const [thread, list] of spans.byThread) {
    const group = spans.group(thread);
    add(group, list.filter(isTask).filter((s) => group !== 'main' || thread === main.thread));
    if (group === 'workers') {
      const tasks = list.filter(isTask);
      for (const [part, file] of WORKER_PARTS) add(part, tasks.filter((s) => file.test(s.args?.src_file ?? '')));
    }
  }
  // Every frame: whether it laid out (the page's DOM changed) and whether
  // a GC ran in it on any thread, for the frame times of each sort.
  const sorted = [...work].sort((a, b) => a.start - b.start);
  const gcThreads = groups.get('workers: v8 gc') ?? [];
  let at = 0;
  for (const w of windows) {
    while (at < sorted.length && sorted[at].start < w.from) at += 1;
    w.layout = false;
    w.gc = false;
    for (let j = at; j < sorted.length && sorted[j].start < w.to; j += 1) {
      w.layout ||= sorted[j].name === 'Layout';
      w.gc ||= sorted[j].kind === 'gc';
    }
    w.gc ||= gcThreads.some((t) => coveredMs(t, w.from, w.to) > 0);
  }
  const summary = (slow) => {
    const chosen = windows.filter((w) => w.slow === slow);
    const out = {
      frames: chosen.length, frame_ms: 0, kinds: Object.fromEntries(kinds.map((k) => [k, 0])), names: new Map(), busy: {},
      with_layout: 0, with_gc: 0,
    };
    for (const w of chosen) out.frame_ms += w.ms;
    let i = 0;
    for (const w of chosen) {
      while (i < sorted.length && sorted[i].start < w.from) i += 1;
      for (let j = i; j < sorted.length && sorted[j].start < w.to; j += 1) {
        out.kinds[sorted[j].kind] += sorted[j].self / 1000;
        out.names.set(sorted[j].name, (out.names.get(sorted[j].name) ?? 0) + sorted[j].self / 1000);
      }
      for (const [group, threads] of groups) {
        out.busy[group] = (out.busy[group] ?? 0) + threads.reduce((sum, t) => sum + coveredMs(t, w.from, w.to), 0);
      }
      if (w.layout) out.with_layout += 1;
      if (w.gc) out.with_gc += 1;
    }
    const n = Math.max(1, chosen.length);
    out.frame_ms /= n;
    for (const k of kinds) out.kinds[k] /= n;
    for (const g of Object.keys(out.busy)) out.busy[g] /= n;
    out.names = [...out.names].map(([name, ms]) => [name, ms / n]).sort((a, b) => b[1] - a[1]).slice(0, 8);
    return out;
  };
  const sort = (chosen) => ({
    frames: chosen.length, p50: percentile(chosen.map((w) => w.ms), 0.5), p95: percentile(chosen.map((w) => w.ms), 0.95),
  });
  return {
    threshold, slow: summary(true), rest: summary(false), windows,
    laid_out: sort(windows.filter((w) => w.layout)), not_laid_out: sort(windows.filter((w) => !w.layout)),
  };
}

function printPerFrame(name, pass, t, times) {
  const ms = (v) => v.toFixed(2);
  console.log(`${name} pass ${pass} main thread per frame (ms): script ${ms(t.script)}, style ${ms(t.style)}, layout ${ms(t.layout)}, ` +
    `paint ${ms(t.paint)}, gc ${ms(t.gc)}, other ${ms(t.other)}, total ${ms(t.script + t.style + t.layout + t.paint + t.gc + t.other)} ` +
    `(thread time; wall ${ms(t.wall)}); over ${times.length} frames: ${t.counts.style} style recalculations, ` +
    `${t.counts.layout} layouts, ${t.counts.paint} paints; ` +
    `frame p50 ${percentile(times, 0.5).toFixed(1)}, p95 ${percentile(times, 0.95).toFixed(1)}, max ${Math.max(...times).toFixed(1)}`);
}

function printSlowFrames(name, pass, result) {
  if (!result) return;
  if (result.error) {
    console.log(`${name} pass ${pass} slow frames: ${result.error}`);
    return;
  }
  const ms = (v) => v.toFixed(2);
  const sort = (s) => (s.frames === 0 ? '0 frames' : `${s.frames} frames, p50 ${s.p50.toFixed(1)}, p95 ${s.p95.toFixed(1)} ms`);
  console.log(`${name} pass ${pass} frames that laid out: ${sort(result.laid_out)}; the others: ${sort(result.not_laid_out)}`);
  for (const [label, s] of [['slow', result.slow], ['rest', result.rest]]) {
    const kinds = Object.entries(s.kinds).map(([k, v]) => `${k} ${ms(v)}`).join(', ');
    const busy = Object.entries(s.busy).filter(([, v]) => v >= 0.05).sort((a, b) => b[1] - a[1])
      .map(([g, v]) => `${g} ${ms(v)}`).join(', ');
    const names = s.names.map(([n, v]) => `${n} ${ms(v)}`).join(', ');
    console.log(`${name} pass ${pass} ${label} frames (${s.frames}, ${label === 'slow' ? '>' : '<='} p95 ${result.threshold.toFixed(1)} ms; ` +
      `mean ${ms(s.frame_ms)} ms; ${s.with_layout} with a layout, ${s.with_gc} with a GC): main CPU ${kinds}; busy wall per frame: ${busy}; main by event: ${names}`);
  }
}

// The scroll is measured SCROLL_PASSES times in the same page, and the
// figure is the median of the passes' p95s: one 240-frame pass's p95 is its
// 12th slowest frame, which moves by several ms between passes on an idle
// machine, and the first pass also pays for V8 compiling the scroll path.
// Each pass's p50 and p95 are printed; the first pass's p95 is in the JSON
// too. With --profile each pass is traced and printed as well (the least
// busy pass is the one other processes disturbed least).
const SCROLL_PASSES = 3;
async function scrollPasses(browser, page, selector, options, name) {
  const passes = [];
  if (options.profile) mkdirSync(options.profile, { recursive: true });
  for (let pass = 1; pass <= SCROLL_PASSES; pass += 1) {
    if (!options.profile) {
      passes.push((await scrollFrameTimes(page, selector)).times);
      continue;
    }
    await browser.startTracing(page, { categories: ['devtools.timeline', 'v8', 'toplevel'] });
    const result = await scrollFrameTimes(page, selector, { mark: true });
    const trace = (await browser.stopTracing()).toString('utf8');
    writeFileSync(join(options.profile, `${name}-${pass}.json`), trace);
    writeFileSync(join(options.profile, `${name}-${pass}.times.json`), JSON.stringify(result.times));
    printPerFrame(name, pass, mainThreadPerFrame(trace, result.times.length), result.times);
    printSlowFrames(name, pass, slowFrames(trace, result.times));
    passes.push(result.times);
  }
  const p95s = passes.map((times) => percentile(times, 0.95));
  console.log(`${name} scroll: ${passes.map((times, i) => `pass ${i + 1} p50 ${percentile(times, 0.5).toFixed(1)} p95 ${p95s[i].toFixed(1)}`).join('; ')} ms (${passes[0].length} frames each)`);
  return { p95: median(p95s), firstP95: p95s[0] };
}

// Waits until the server process is idle: under 10% of one core for three
// seconds in a row (its background work after a start or a write —
// compaction, the service map's catch-up — shares the two cores with the
// browser, and a measurement taken during it measures the scheduler, not
// the page). Gives up after `limitMs`; returns the milliseconds waited.
async function settle(pid, limitMs = 900_000) {
  const cpuTicks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);  // utime + stime
  };
  const ticksPerSecond = 100;  // USER_HZ on Linux
  const started = Date.now();
  let quiet = 0;
  let before = cpuTicks();
  while (quiet < 3) {
    if (Date.now() - started > limitMs) throw new Error(`the server stayed busy for ${limitMs / 1000} s`);
    await new Promise((done) => setTimeout(done, 1000));
    const now = cpuTicks();
    quiet = (now - before) / ticksPerSecond < 0.1 ? quiet + 1 : 0;
    before = now;
  }
  return Date.now() - started;
}

// --analyse DIR: prints the analysis of the traces an earlier --profile
// run wrote to DIR, without running anything.
function analyseProfiles(dir) {
  for (const file of readdirSync(dir).filter((f) => /^[a-z-]+-\d+\.json$/.test(f)).sort()) {
    const [, name, pass] = /^([a-z-]+)-(\d+)\.json$/.exec(file);
    const timesFile = join(dir, `${name}-${pass}.times.json`);
    if (!existsSync(timesFile)) continue;
    const trace = readFileSync(join(dir, file), 'utf8');
    const times = JSON.parse(readFileSync(timesFile, 'utf8'));
    printPerFrame(name, pass, mainThreadPerFrame(trace, times.length), times);
    printSlowFrames(name, pass, slowFrames(trace, times));
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.analyse) return analyseProfiles(options.analyse);
  const require = createRequire(join(root, 'tests/ui/package.json'));
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch {
    throw new Error('playwright-core is not installed in tests/ui: run `bash scripts/setup.sh --tests`');
  }
  ensureBinary(options.binary);
  ensureData(options);

  const server = await serveStrata(options.binary, options.dir, 600_000);
  const browser = await chromium.launch({
    executablePath: process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-frame-rate-limit', '--disable-gpu-vsync'],
  });
  try {
    const { token, link } = credentials(options.binary, options.dir, server.api);
    const signIn = await browser.newContext();
    const signed = await signIn.request.post(`${server.api}/api/v1/auth/password`, {
      headers: { 'X-Strata-Request': '1' },
      data: { token: link, password: 'ui bench password, long enough' },
    });
    if (!signed.ok()) throw new Error(`setting the password: ${signed.status()} ${await signed.text()}`);
    const storage = await signIn.storageState();
    await signIn.close();
    const context = () => browser.newContext({ storageState: storage, viewport: { width: 1280, height: 800 } });

    const js = await firstPageJavaScript(server.api);
    console.log(`first page JavaScript: ${(js.bytes / 1024).toFixed(1)} KB brotli in ${js.files} files`);

    // The first visit after the server starts also reads every batch's
    // rollups (and shares the cores with the service map's start-up pass):
    // printed on its own; the key is the median of the visits after it.
    const services = [];
    for (let run = 0; run <= options.runs; run += 1) {
      const ctx = await context();
      const page = await ctx.newPage();
      services.push(await timeToSelector(page, `${server.api}/services?range=now-7d`, 'table tbody tr'));
      await ctx.close();
    }
    const servicesFirst = services.shift();
    console.log(`services page interactive: first after the server started ${servicesFirst.toFixed(0)} ms, then ${services.map((t) => t.toFixed(0)).join(', ')} ms`);

    const { traceId, requests } = bigTrace(50_000);
    for (const body of requests) {
      const answer = await fetch(`${server.otlpHttp}/v1/traces`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      if (!answer.ok) throw new Error(`sending the trace: ${answer.status} ${await answer.text()}`);
    }
    // The scroll and open times are the page's: measured once the server's
    // work after its start and after this write is done.
    console.log(`server idle after ${(await settle(server.pid) / 1000).toFixed(0)} s`);
    const traceOpen = [];
    let traceScroll = null;
    for (let run = 0; run < options.runs; run += 1) {
      const ctx = await context();
      const page = await ctx.newPage();
      traceOpen.push(await timeToSelector(page, `${server.api}/traces/${traceId}`, '[role="treegrid"] [role="row"]'));
      if (run === 0) {
        const shown = await page.locator('[role="treegrid"]').getAttribute('aria-rowcount');
        if (shown !== null && Number(shown) !== 50_000) throw new Error(`the waterfall has ${shown} rows, not 50000`);
        traceScroll = await scrollPasses(browser, page, '[role="treegrid"]', options, 'waterfall');
      }
      await ctx.close();
    }
    console.log(`50,000-span trace painted: ${traceOpen.map((t) => t.toFixed(0)).join(', ')} ms`);

    const ctx = await context();
    const page = await ctx.newPage();
    await page.goto(`${server.api}/logs?range=now-7d`);
    // The log table says how many records it holds in aria-rowcount
    // (only the rows in view are in the page).
    const table = page.locator('[data-log-table] table');
    const more = page.getByRole('button', { name: 'Load older records' });
    const loadStarted = Date.now();
    await table.waitFor({ timeout: 120_000 });
    for (let rows = Number(await table.getAttribute('aria-rowcount')); rows <= 10_000;) {
      await more.click({ timeout: 120_000 });
      await page.waitForFunction(
        (before) => Number(document.querySelector('[data-log-table] table')?.getAttribute('aria-rowcount')) > before,
        rows, { timeout: 120_000 },
      );
      rows = Number(await table.getAttribute('aria-rowcount'));
    }
    console.log(`log table: 10,000 rows loaded in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
    const logScroll = await scrollPasses(browser, page, '[data-log-table]', options, 'log table');
    await ctx.close();

    console.log(JSON.stringify({
      spans: options.spans,
      first_page_js_kb_br: Number((js.bytes / 1024).toFixed(1)),
      services_interactive_ms: Number(median(services).toFixed(0)),
      services_first_after_start_ms: Number(servicesFirst.toFixed(0)),
      trace50k_open_ms: Number(median(traceOpen).toFixed(0)),
      trace50k_scroll_p95_ms: Number(traceScroll.p95.toFixed(1)),
      logs10k_scroll_p95_ms: Number(logScroll.p95.toFixed(1)),
      trace50k_scroll_first_pass_p95_ms: Number(traceScroll.firstP95.toFixed(1)),
      logs10k_scroll_first_pass_p95_ms: Number(logScroll.firstP95.toFixed(1)),
    }));
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(`ui/bench.mjs: ${error.message}`);
  process.exit(1);
});
