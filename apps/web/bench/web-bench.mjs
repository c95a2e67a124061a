#!/usr/bin/env node
// The web app's speed (issue 14, item 6), measured with the real server
// (apps/web/dist/server/main.js, offline model) and Debian's Chromium through
// playwright-core:
//
//   - load: a page on a 2,000-event session (a valid JSONL log written by the
//     bench's generator, `node bench/dist/run.js jsonl`, opened by the
//     server's own store) — time from navigation to the transcript's first
//     paint (the last rendered event in the DOM, then the next animation
//     frame), and the client's own performance mark when it sets one;
//   - snapshot: the bytes of the session frame a fresh page loads
//     (`GET /api/sessions/:id`, the history tail plus `{ asOfSeq, values }`),
//     and of the `snapshot` part alone;
//   - push: a prompt posted from tab A until its user message is in tab B's
//     DOM (and, at the wire, until the `append` frame reaches a Node SSE
//     reader), over repeated prompts.
//
// Prints each figure beside its budget (figure / budget; below 1x is within
// budget) and never fails on a figure: it exits 1 only when a measurement
// cannot be made. `--results bench/RESULTS.md` rewrites the section between
// the web-bench markers there. `pnpm build` first.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const SERVER = join(root, 'apps/web/dist/server/main.js')
const GENERATOR = join(root, 'bench/dist/run.js')
const CHROMIUM = '/usr/bin/chromium'
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const { values: opts } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    loads: { type: 'string', default: '7' },
    pushes: { type: 'string', default: '25' },
    results: { type: 'string' },
    json: { type: 'string' },
  },
})
const EVENTS = Number(opts.events)
const LOADS = Number(opts.loads)
const PUSHES = Number(opts.pushes)

/** Budgets: what a user would call instant on a 2-core machine. */
const BUDGET = {
  firstPaintMs: 1500,
  snapshotBytes: 1024 * 1024,
  pushDomMs: 150,
  pushWireMs: 50,
}

// Selectors of the client (apps/web/client/TESTIDS.md).
const SEL = {
  transcript: '[data-testid="transcript"]',
  entry: '[data-testid="transcript"] [data-seq]',
}

for (const [what, path] of [
  ['the server', SERVER],
  ['the bench generator', GENERATOR],
  ['Chromium', CHROMIUM],
]) {
  if (!existsSync(path)) {
    console.error(
      `web-bench: ${what} is missing (${path}); run \`pnpm build\` first${what === 'Chromium' ? ' and `apt-get install -y chromium`' : ''}`,
    )
    process.exit(1)
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`
const ms = (n) => `${n.toFixed(1)} ms`
const ratio = (figure, budget) => `${(figure / budget).toFixed(2)}x`

function startServer(sessionDir) {
  const child = spawn(process.execPath, [SERVER, '--port', '0', '--session-dir', sessionDir], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no start line in 30 s:\n${out}`))
    }, 30_000)
    const onData = (chunk) => {
      out += chunk
      const match = /planmode web: (http:\/\/\S+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        const url = new URL(match[1])
        resolve({ child, origin: url.origin, token: url.searchParams.get('token'), output: () => out })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${code}):\n${out}`))
    })
  })
}

async function api(server, path, body) {
  const response = await fetch(server.origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${server.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
  return { text, json: text === '' ? undefined : JSON.parse(text) }
}

/** A Node reader of the session's SSE stream from after seq `from`: `waitFor(predicate)` resolves with the wall-clock arrival time of the first matching append and the event's own `time` (when the server appended it). */
async function sseReader(server, id, from) {
  const controller = new AbortController()
  const response = await fetch(`${server.origin}/api/sessions/${encodeURIComponent(id)}/stream?from=${from}&token=${server.token}`, {
    signal: controller.signal,
  })
  if (!response.ok) throw new Error(`stream: ${response.status}`)
  const waiters = []
  const frames = []
  let buffer = ''
  ;(async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of response.body) {
        const at = Date.now()
        buffer += decoder.decode(chunk, { stream: true })
        let cut
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          const type = /^event: (.*)$/m.exec(frame)?.[1]
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n')
          if (type === 'frame') frames.push(Buffer.byteLength(data))
          if (type !== 'append' || data === '') continue
          const payload = JSON.parse(data)
          for (let k = waiters.length - 1; k >= 0; k--) {
            if (waiters[k].predicate(payload.event)) {
              waiters[k].resolve({ at, time: payload.event.time })
              waiters.splice(k, 1)
            }
          }
        }
      }
    } catch {}
  })()
  return {
    waitFor: (predicate) => new Promise((resolve) => waiters.push({ predicate, resolve })),
    /** The byte sizes of the `frame` items' data seen so far. */
    frames,
    close: () => controller.abort(),
  }
}

const textOf = (event) =>
  (event?.data?.content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('')

async function waitIdle(server, id) {
  for (let k = 0; k < 400; k++) {
    const { json } = await api(server, `/api/sessions/${encodeURIComponent(id)}?tail=1`)
    if (!json.running) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('the session did not go idle')
}

// Records, in the page, when the transcript first holds `count` entries and the frame after that.
const PAINT_PROBE = `(() => {
  const want = Number(new URL(location.href).searchParams.get('benchEntries') || '0')
  window.__bench = {}
  const check = () => {
    const n = document.querySelectorAll(${JSON.stringify(SEL.entry)}).length
    if (window.__bench.inDom === undefined && n >= want && n > 0) {
      window.__bench.inDom = performance.now()
      window.__bench.entries = n
      requestAnimationFrame(() => requestAnimationFrame(() => { window.__bench.painted = performance.now() }))
      observer.disconnect()
    }
  }
  const observer = new MutationObserver(check)
  observer.observe(document, { childList: true, subtree: true })
})()`

const sessionDir = await mkdtemp(join(tmpdir(), 'planmode-web-bench-'))
const id = `bench${EVENTS}`
const started = Date.now()
const load0 = loadavg()
let server
let context
try {
  const gen = spawnSync(process.execPath, [GENERATOR, 'jsonl', '--size', String(EVENTS), '--out', join(sessionDir, `${id}.jsonl`)], {
    encoding: 'utf8',
  })
  if (gen.status !== 0) throw new Error(`generator failed: ${gen.stderr}`)
  const logBytes = readFileSync(join(sessionDir, `${id}.jsonl`)).length
  server = await startServer(sessionDir)

  // Snapshot: the frame a fresh page loads.
  const tail = await api(server, `/api/sessions/${encodeURIComponent(id)}`)
  const snapshotBytes = Buffer.byteLength(JSON.stringify(tail.json.snapshot))
  const frameBytes = Buffer.byteLength(tail.text)
  const tailEvents = tail.json.events.length
  const whole = await api(server, `/api/sessions/${encodeURIComponent(id)}?tail=${EVENTS}`)
  const wholeBytes = Buffer.byteLength(whole.text)
  const lastSeq = tail.json.events.at(-1)?.seq ?? -1

  const profile = await mkdtemp(join(tmpdir(), 'planmode-web-bench-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  })
  await context.addInitScript(PAINT_PROBE)
  const pageUrl = (extra = {}) => {
    const url = new URL('/', server.origin)
    url.searchParams.set('token', server.token)
    url.searchParams.set('session', id)
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v)
    return `${url.href}#/s/${encodeURIComponent(id)}`
  }

  // Load: fresh tab each time (the first is a warm-up of Chromium's caches and is dropped).
  const paints = []
  const inDoms = []
  const marks = []
  let rendered = 0
  for (let k = 0; k <= LOADS; k++) {
    const page = await context.newPage()
    // The warm-up load learns how many entries the tail renders; the timed loads wait for all of them.
    await page.goto(pageUrl({ benchEntries: String(k === 0 ? 1 : rendered) }), { waitUntil: 'commit' })
    await page
      .waitForFunction(() => window.__bench?.painted !== undefined, undefined, { timeout: 30_000 })
      .catch(async (error) => {
        throw new Error(
          `${error.message}\npage text: ${(
            await page
              .locator('body')
              .textContent()
              .catch(() => '')
          ).slice(0, 600)}`,
        )
      })
    if (k === 0) {
      // Until the count holds still for half a second (the tail arrives in one response).
      let last = -1
      let stable = 0
      while (stable < 5) {
        const n = await page.locator(SEL.entry).count()
        stable = n === last ? stable + 1 : 0
        last = n
        await page.waitForTimeout(100)
      }
      rendered = last
    } else {
      const b = await page.evaluate(() => window.__bench)
      const mark = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => ({ name: m.name, at: m.startTime })))
      paints.push(b.painted)
      inDoms.push(b.inDom)
      const own = mark.find((m) => /transcript/i.test(m.name))
      if (own) marks.push(own)
    }
    await page.close()
  }

  // Push: tab B watches; tab A posts prompts; a Node SSE reader on the side.
  const tabA = await context.newPage()
  const tabB = await context.newPage()
  await tabA.goto(pageUrl())
  await tabB.goto(pageUrl())
  await Promise.all([tabA.locator(SEL.entry).first().waitFor(), tabB.locator(SEL.entry).first().waitFor()])
  // The generated log may end in plan mode, where a prompt leads to a review that waits: chat in the default mode.
  await api(server, `/api/sessions/${encodeURIComponent(id)}/command`, { line: '/plan off' })
  const now = await api(server, `/api/sessions/${encodeURIComponent(id)}?tail=1`)
  const reader = await sseReader(server, id, now.json.events.at(-1)?.seq ?? lastSeq)
  const dom = []
  const fromAppend = []
  const wire = []
  for (let k = 0; k < PUSHES; k++) {
    await waitIdle(server, id)
    const text = `bench push ${k} ${Math.random().toString(36).slice(2)}`
    const seen = tabB.evaluate(
      (needle) =>
        new Promise((resolve) => {
          const test = () => document.querySelector('[data-testid="transcript"]')?.textContent?.includes(needle)
          if (test()) return resolve(performance.timeOrigin + performance.now())
          const observer = new MutationObserver(() => {
            if (test()) {
              observer.disconnect()
              resolve(performance.timeOrigin + performance.now())
            }
          })
          observer.observe(document, { childList: true, subtree: true, characterData: true })
        }),
      text,
    )
    const onWire = reader.waitFor((event) => event?.type === 'user/message' && textOf(event) === text)
    // Posted from tab A's page (its token, its origin), timed there.
    const sentAt = await tabA.evaluate(
      async ({ sid, body }) => {
        const token = sessionStorage.getItem('planmode.token')
        const t = performance.timeOrigin + performance.now()
        const response = await fetch(`/api/sessions/${encodeURIComponent(sid)}/prompt`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ text: body }),
        })
        if (!response.ok) throw new Error(`prompt: ${response.status}`)
        return t
      },
      { sid: id, body: text },
    )
    const [seenAt, onWireAt] = await Promise.all([seen, onWire])
    dom.push(seenAt - sentAt)
    // From the server's append (the event's own time, the same clock: one machine) to tab B's DOM and to a Node SSE reader.
    fromAppend.push(Math.max(0, seenAt - onWireAt.time))
    wire.push(Math.max(0, onWireAt.at - onWireAt.time))
  }
  // A real plan arc on the same session (two revisions, kept in planHistory), for the frames a plan review pushes.
  const framesBefore = reader.frames.length
  const pendingQuestion = async (not) => {
    for (let k = 0; k < 600; k++) {
      const { json } = await api(server, `/api/sessions/${encodeURIComponent(id)}?tail=1`)
      const open = json.questions.find((q) => q.id !== not)
      if (open) return open
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error('no plan review opened')
  }
  await api(server, `/api/sessions/${encodeURIComponent(id)}/command`, { line: '/plan Add due dates to tasks' })
  const first = await pendingQuestion()
  const asked = first.request.questions[0]
  const keep = asked.intent?.keep ?? asked.options.find((o) => o.label !== asked.intent?.approve)?.label
  await api(server, `/api/sessions/${encodeURIComponent(id)}/questions/${encodeURIComponent(first.id)}`, {
    answers: [{ id: asked.id, selected: [keep], custom: 'Also flag overdue tasks.' }],
  })
  const second = await pendingQuestion(first.id)
  await api(server, `/api/sessions/${encodeURIComponent(id)}/questions/${encodeURIComponent(second.id)}`, {
    answers: [{ id: second.request.questions[0].id, selected: [second.request.questions[0].intent.approve] }],
  })
  await waitIdle(server, id)
  const arcFrames = reader.frames.slice(framesBefore)
  const after = await api(server, `/api/sessions/${encodeURIComponent(id)}`)
  const arcSnapshotBytes = Buffer.byteLength(JSON.stringify(after.json.snapshot))
  reader.close()

  const result = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? '?',
      memGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      load: [load0, loadavg()].map((l) => l.map((x) => x.toFixed(1)).join(' ')).join(' → '),
    },
    events: EVENTS,
    logBytes,
    tailEvents,
    rendered,
    snapshotBytes,
    frameBytes,
    wholeBytes,
    firstPaintMs: { median: median(paints), p90: quantile(paints, 0.9), runs: paints.length },
    inDomMs: { median: median(inDoms) },
    clientMark: marks.length === 0 ? null : { name: marks[0].name, median: median(marks.map((m) => m.at)) },
    pushDomMs: { median: median(dom), p90: quantile(dom, 0.9), max: Math.max(...dom), runs: dom.length },
    pushAppendToDomMs: { median: median(fromAppend), p90: quantile(fromAppend, 0.9), runs: fromAppend.length },
    pushWireMs: { median: median(wire), p90: quantile(wire, 0.9), runs: wire.length },
    arcFrames: {
      count: arcFrames.length,
      maxBytes: Math.max(0, ...arcFrames),
      snapshotBytes: arcSnapshotBytes,
      frameBytes: Buffer.byteLength(after.text),
    },
    pushFrameBytes:
      reader.frames.length === 0 ? null : { median: median(reader.frames), max: Math.max(...reader.frames), count: reader.frames.length },
    seconds: (Date.now() - started) / 1000,
  }
  const rows = [
    [
      'first paint of the transcript (navigation → last tail event painted), median',
      ms(result.firstPaintMs.median),
      `${BUDGET.firstPaintMs} ms`,
      ratio(result.firstPaintMs.median, BUDGET.firstPaintMs),
    ],
    ['  … p90', ms(result.firstPaintMs.p90), `${BUDGET.firstPaintMs} ms`, ratio(result.firstPaintMs.p90, BUDGET.firstPaintMs)],
    ...(result.clientMark
      ? [
          [
            `  client mark \`${result.clientMark.name}\`, median`,
            ms(result.clientMark.median),
            `${BUDGET.firstPaintMs} ms`,
            ratio(result.clientMark.median, BUDGET.firstPaintMs),
          ],
        ]
      : []),
    ['session frame a fresh page loads (GET /api/sessions/:id, bytes)', kib(frameBytes), '1 MiB', ratio(frameBytes, BUDGET.snapshotBytes)],
    [`  the whole log instead (?tail=${EVENTS})`, kib(wholeBytes), '1 MiB', ratio(wholeBytes, BUDGET.snapshotBytes)],
    ['  … of it the snapshot `{ asOfSeq, values }`', kib(snapshotBytes), '1 MiB', ratio(snapshotBytes, BUDGET.snapshotBytes)],
    ...(result.pushFrameBytes
      ? [
          [
            `  every pushed \`frame\` item's data (${result.pushFrameBytes.count}, the chat's and the arc's), median`,
            kib(result.pushFrameBytes.median),
            '1 MiB',
            ratio(result.pushFrameBytes.median, BUDGET.snapshotBytes),
          ],
        ]
      : []),
    [
      `  after a plan arc on it (2 revisions): the largest of its ${arcFrames.length} pushed frames`,
      kib(result.arcFrames.maxBytes),
      '1 MiB',
      ratio(result.arcFrames.maxBytes, BUDGET.snapshotBytes),
    ],
    [
      "  … and a fresh page's frame then",
      kib(result.arcFrames.frameBytes),
      '1 MiB',
      ratio(result.arcFrames.frameBytes, BUDGET.snapshotBytes),
    ],
    [
      "push: prompt posted in tab A → its message in tab B's DOM, median",
      ms(result.pushDomMs.median),
      `${BUDGET.pushDomMs} ms`,
      ratio(result.pushDomMs.median, BUDGET.pushDomMs),
    ],
    ['  … p90', ms(result.pushDomMs.p90), `${BUDGET.pushDomMs} ms`, ratio(result.pushDomMs.p90, BUDGET.pushDomMs)],
    [
      "push: server append (event time) → tab B's DOM, median",
      ms(result.pushAppendToDomMs.median),
      `${BUDGET.pushDomMs} ms`,
      ratio(result.pushAppendToDomMs.median, BUDGET.pushDomMs),
    ],
    [
      'push at the wire: server append → a Node SSE reader (the bench process, busy driving Chromium), median',
      ms(result.pushWireMs.median),
      `${BUDGET.pushWireMs} ms`,
      ratio(result.pushWireMs.median, BUDGET.pushWireMs),
    ],
  ]
  const w0 = Math.max(...rows.map((r) => r[0].length))
  const table = [
    `| figure${' '.repeat(w0 - 6)} | measured | budget | figure / budget |`,
    `| ${'-'.repeat(w0)} | -------: | -----: | --------------: |`,
    ...rows.map((r) => `| ${r[0].padEnd(w0)} | ${r[1]} | ${r[2]} | ${r[3]} |`),
  ]
  const header = `${EVENTS.toLocaleString('en')}-event session (JSONL ${kib(logBytes)}; the page loads the last ${tailEvents} events and renders ${rendered} transcript entries); ${LOADS} loads after a warm-up, ${PUSHES} pushes; ${result.machine.cpus} cores, Node ${result.machine.node}, load ${result.machine.load}; ${result.seconds.toFixed(1)} s`
  console.log(`\n### Web app (apps/web/bench/web-bench.mjs)\n\n${header}\n\n${table.join('\n')}\n`)
  if (opts.json) writeFileSync(opts.json, JSON.stringify(result, null, 2) + '\n')
  if (opts.results) {
    const start = '<!-- web-bench:start (generated by apps/web/bench/web-bench.mjs --results) -->'
    const end = '<!-- web-bench:end -->'
    const block = `${start}\n- Date: ${result.date}\n- ${header}\n\n${table.join('\n')}\n${end}`
    const previous = readFileSync(opts.results, 'utf8')
    const a = previous.indexOf(start)
    const b = previous.indexOf(end)
    if (a < 0 || b < 0) throw new Error(`${opts.results} has no web-bench markers`)
    writeFileSync(opts.results, previous.slice(0, a) + block + previous.slice(b + end.length))
  }
} catch (error) {
  console.error(`web-bench: FAILED: ${error instanceof Error ? error.stack : error}`)
  if (server) console.error(server.output())
  process.exitCode = 1
} finally {
  await context?.close().catch(() => {})
  server?.child.kill('SIGTERM')
  await rm(sessionDir, { recursive: true, force: true })
}
