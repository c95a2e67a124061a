import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { chmod, chown, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createConnection, createServer, type Server } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerResult, OpenAsks } from '@planmode/seams'
import { REVIEW_QUESTION, startChild, stopChildren, type StartedChild as Child } from '@planmode/testkit'
import { bundleChild } from './helpers.js'

/**
 * Who may answer through the JSONL store's local channel, probed for real:
 * a writer running as root, and other local users created for the test
 * (`useradd`, removed after) whose processes attack it: a user whose folder
 * holds root's runtime folder swaps the socket folder and binds the
 * socket's path; a user who may write the session folder replaces the
 * announcement; a FIFO is planted as the announcement; a stale announcement
 * names another live socket; the socket's group decides who may connect;
 * SIGTERM must not leave the channel behind. Root only: creating users and
 * running processes as them needs it.
 */

const isRoot = process.getuid?.() === 0
const hasTools = existsSync('/usr/sbin/useradd') && existsSync('/usr/sbin/userdel') && existsSync('/usr/bin/mkfifo')
/** A bound on work that either finishes at once or hangs forever (a read blocked on a FIFO): it detects the hang, it measures nothing. */
const HANG_MS = 30_000

// The writer: the JSONL store and the user-questions runtime, from their own source files (a bundle that needs
// nothing from node_modules, so a copy runs anywhere). It opens or creates the session, says `ready`, asks when told
// `ask`, and answers at its own terminal when told `local`. Its warnings go to stdout.
const writerSource = `
import { Context } from '@planmode/context'
import { sessionInvariantsPlugin } from './runtimes/session-invariants.ts'
import { sessionStorePlugin } from './session/session-store.ts'
import { userQuestionsPlugin } from './runtimes/user-questions.ts'
const [dir, id, config] = process.argv.slice(2)
const quiet = () => {}
const ctx = new Context({ logger: { debug: quiet, info: quiet, warn: (m) => process.stdout.write('warn ' + m.replace(/\\n/g, ' ') + '\\n'), error: quiet } })
ctx.plugin(sessionInvariantsPlugin)
ctx.plugin(sessionStorePlugin, { dir, durability: 'never', answers: JSON.parse(config) })
ctx.plugin(userQuestionsPlugin)
const sessions = ctx.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
const lines = []
let heard
process.stdin.on('data', (chunk) => { lines.push(...String(chunk).split('\\n').filter(Boolean)); heard?.() })
const next = (word) => new Promise((resolve) => { const look = () => { const at = lines.indexOf(word); if (at >= 0) { lines.splice(at, 1); resolve() } else heard = look }; look() })
ctx.on('session/event', ({ event }) => { if (event.type === 'question/asked') process.stdout.write('asked ' + event.data.questionId + '\\n') })
ctx.require('userQuestions').registerProvider({
  ask: ({ signal }) => new Promise((resolve, reject) => {
    void next('local').then(() => resolve([{ id: 'plan-review', selected: ['Keep planning'], custom: 'at the terminal' }]))
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
  }),
})
process.stdout.write('ready\\n')
await next('ask')
const agent = { id: 'writer-agent', session, steer() {}, inject() {} }
const answers = await ctx.require('userQuestions').ask({ agent, questions: [${JSON.stringify(REVIEW_QUESTION)}] })
process.stdout.write('answered ' + JSON.stringify(answers) + '\\n')
await sessions.close(session)
ctx.dispose()
process.stdin.destroy()
`

// A submitter (what \`planmode questions\` and \`planmode answer\` run): \`questions\`, or \`submit\` with { questionId, answers, by }.
const submitterSource = `
import { localAnswers } from './answers/local-inbox.ts'
const [dir, id, action, payload] = process.argv.slice(2)
const inbox = localAnswers({ dir })
const result = action === 'questions' ? await inbox.questions(id) : await inbox.submit({ sessionId: id, ...JSON.parse(payload) })
process.stdout.write('result ' + JSON.stringify(result) + '\\n')
`

// What another local user does to steal answers (plain Node, run as that user).
//   swap <home>: the socket folder of root's is <home>/planmode and <home> is this user's: move it away, make a new
//     one, and bind every socket path root listened on there (socket paths are public in /proc/net/unix).
//   impersonate <dir> <id> <folder> <pid>: replace the session's announcement (this user may write <dir>) with one
//     that names root's live writer <pid> but a socket of this user's in <folder>.
// Either way it prints `stole <line>` for every request it gets, and tells the submitter it was logged.
const attackerSource = `
const { readFileSync, renameSync, mkdirSync, writeFileSync, statSync } = require('node:fs')
const { createServer } = require('node:net')
const { hostname } = require('node:os')
const { join } = require('node:path')
const [mode, ...args] = process.argv.slice(2)
const steal = (path) => new Promise((resolve) => {
  const server = createServer((socket) => {
    let line = ''
    socket.on('data', (chunk) => {
      line += chunk
      if (line.includes('\\n')) {
        process.stdout.write('stole ' + line.split('\\n')[0] + '\\n')
        socket.end(JSON.stringify({ status: 'accepted', seq: 99 }) + '\\n')
      }
    })
  })
  server.listen(path, () => resolve())
})
async function main() {
  if (mode === 'swap') {
    const [home] = args
    const folder = join(home, 'planmode')
    const paths = readFileSync('/proc/net/unix', 'utf8').split('\\n').map((l) => l.trim().split(/\\s+/)[7]).filter((p) => p !== undefined && p.startsWith(folder + '/'))
    if (paths.length > 0) {
      renameSync(folder, join(home, 'moved-away'))
      mkdirSync(folder, { mode: 0o711 })
      for (const path of paths) await steal(path)
    }
    process.stdout.write('bound ' + paths.length + '\\n')
  } else {
    const [dir, id, folder, pid] = args
    const stat = readFileSync('/proc/' + pid + '/stat', 'utf8')
    const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const pidns = statSync('/proc/self/ns/pid').ino // the same namespace as root's writer (its own is not readable)
    const socket = join(folder, 'ab'.repeat(16) + '.sock')
    await steal(socket)
    const forged = { v: 1, session: id, socket, token: 'cd'.repeat(16), pid: Number(pid), host: hostname(), boot, start, pidns }
    const file = join(dir, id + '.jsonl.answers')
    writeFileSync(file + '.forged', JSON.stringify(forged) + '\\n', { mode: 0o644 })
    renameSync(file + '.forged', file)
    process.stdout.write('bound 1\\n')
  }
}
main()
`

interface User {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

let work: string
let writerFile: string
let submitterFile: string
let attackerFile: string
const users: User[] = []

/** A new local user with a group of its own, removed after the file. */
function newUser(): User {
  const name = `pm${randomBytes(4).toString('hex')}`
  execFileSync('useradd', ['--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', name])
  const user = {
    name,
    uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' })),
    gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' })),
  }
  users.push(user)
  return user
}

/** A folder for one case: `mode` 0755 unless given, owned by root. */
async function folder(name: string, mode = 0o755): Promise<string> {
  const path = join(work, `${name}-${randomBytes(3).toString('hex')}`)
  await mkdir(path)
  await chmod(path, mode)
  return path
}

/** `promise`, or a failure naming `what` when it has not settled after {@link HANG_MS}. */
function unlessHung<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hung: ${what}`)), HANG_MS)))
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer))
}

/** Runs the submitter as `user` (root when absent) and resolves with what it prints. */
async function submitter(
  dir: string,
  id: string,
  action: 'questions' | 'submit',
  payload?: unknown,
  user?: User,
): Promise<OpenAsks & AnswerResult> {
  const child = startChild(
    submitterFile,
    [dir, id, action, JSON.stringify(payload ?? {})],
    user === undefined ? {} : { uid: user.uid, gid: user.gid },
  )
  try {
    return JSON.parse(await unlessHung(child.line(/^result (.+)$/m), `${action} of session ${id}`)) as OpenAsks & AnswerResult
  } finally {
    child.child.kill('SIGKILL')
  }
}

/** Starts the writer over session `id` of `dir` (root, with `gid` when given) and has it ask; resolves once the ask is logged. */
async function asking(
  dir: string,
  id: string,
  config: Record<string, unknown>,
  gid?: number,
): Promise<{ writer: Child; questionId: string }> {
  const writer = startChild(writerFile, [dir, id, JSON.stringify(config)], gid === undefined ? {} : { uid: 0, gid })
  await unlessHung(writer.line(/^(ready)$/m), 'the writer starting')
  writer.child.stdin!.write('ask\n')
  const questionId = await unlessHung(writer.line(/^asked (\S+)$/m), 'the writer asking (logging question/asked)')
  return { writer, questionId }
}

const approve = (questionId: string, by = 'root') => ({
  questionId,
  answers: [{ id: 'plan-review', selected: ['Approve'] }],
  by: { id: by },
})

beforeAll(async () => {
  if (!isRoot || !hasTools) return
  work = await mkdtemp(join(tmpdir(), 'planmode-users-'))
  await chmod(work, 0o755)
  // Copies anyone may read: the bundles need nothing from node_modules.
  for (const [name, source] of [
    ['users-writer', writerSource],
    ['users-submitter', submitterSource],
  ] as const) {
    const built = await bundleChild(name, source)
    await copyFile(built, join(work, `${name}.mjs`))
  }
  writerFile = join(work, 'users-writer.mjs')
  submitterFile = join(work, 'users-submitter.mjs')
  attackerFile = join(work, 'attacker.cjs')
  await writeFile(attackerFile, attackerSource)
  for (const file of [writerFile, submitterFile, attackerFile]) await chmod(file, 0o644)
})

afterAll(async () => {
  stopChildren()
  for (const user of users.splice(0)) spawnSync('userdel', [user.name])
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

describe.skipIf(!isRoot || !hasTools)(
  `the local answer channel lets no one in${isRoot ? '' : ' — skipped: creating users and running processes as them needs root'}${hasTools ? '' : ' — skipped: useradd, userdel or mkfifo is missing'}`,
  () => {
    it('a FIFO planted as the announcement blocks nothing: `planmode questions` and a submission return, and the writer opens its channel over it', async () => {
      const dir = await folder('fifo')
      const id = 'fifo'
      await writeFile(
        join(dir, `${id}.jsonl`),
        JSON.stringify({ type: 'question/asked', seq: 0, time: 0, data: { questionId: 'q0', agent: 'a', question: [REVIEW_QUESTION] } }) +
          '\n',
      )
      execFileSync('mkfifo', [join(dir, `${id}.jsonl.answers`)])
      const listed = await submitter(dir, id, 'questions')
      expect(listed).toMatchObject({ open: [{ questionId: 'q0' }], writer: false })
      expect(await submitter(dir, id, 'submit', approve('q0'))).toMatchObject({
        status: 'refused',
        code: 'UNAVAILABLE',
        message: expect.stringContaining('a FIFO, not a regular file'),
      })
      const sockets = await folder('fifo-sockets', 0o755)
      const { writer, questionId } = await asking(dir, id, { socketDir: join(sockets, 's') })
      expect(statSync(join(dir, `${id}.jsonl.answers`)).isFile()).toBe(true)
      expect(await submitter(dir, id, 'submit', approve(questionId))).toMatchObject({ status: 'accepted' })
      expect((await writer.exited).code).toBe(0)
    })

    it('root’s runtime folder inside another user’s folder (after su without -): the writer never puts its socket there, so the user who swaps it steals nothing', async () => {
      const mallory = newUser()
      const home = await folder('xdg', 0o700)
      await chown(home, mallory.uid, mallory.gid)
      const dir = await folder('xdg-sessions')
      // The folder given: refused, the ask goes on without answers from other processes.
      const given = await asking(dir, 'given', { socketDir: join(home, 'planmode') })
      expect(await unlessHung(given.writer.line(/^warn (.*takes no answers from other processes.*)$/m), 'the warning')).toContain(
        `${home} belongs to user ${mallory.uid}`,
      )
      const thief = startChild(attackerFile, ['swap', home], { uid: mallory.uid, gid: mallory.gid })
      expect(await unlessHung(thief.line(/^bound (\d+)$/m), 'the attacker looking for sockets')).toBe('0')
      expect(await submitter(dir, 'given', 'submit', approve(given.questionId))).toMatchObject({ status: 'refused', code: 'NO_WRITER' })
      given.writer.child.stdin!.write('local\n')
      expect((await given.writer.exited).code).toBe(0)
      // $XDG_RUNTIME_DIR pointing there: passed over for a private folder, and answers work.
      const writer = startChild(writerFile, [dir, 'xdg', '{}'], { env: { ...process.env, XDG_RUNTIME_DIR: home } })
      await unlessHung(writer.line(/^(ready)$/m), 'the writer starting')
      writer.child.stdin!.write('ask\n')
      const questionId = await unlessHung(writer.line(/^asked (\S+)$/m), 'the writer asking')
      const announced = JSON.parse(await readFile(join(dir, 'xdg.jsonl.answers'), 'utf8')) as { socket: string }
      expect(announced.socket.startsWith(`${home}/`)).toBe(false)
      expect(await submitter(dir, 'xdg', 'submit', approve(questionId))).toMatchObject({ status: 'accepted' })
      expect((await writer.exited).code).toBe(0)
      expect(thief.stdout()).not.toContain('stole')
    })

    it('an announcement replaced by a user who may write the session folder: the submitter refuses it and sends nothing; the writer still takes the real answer', async () => {
      const mallory = newUser()
      const dir = await folder('shared', 0o777)
      const own = await folder('mallory-sockets', 0o711)
      await chown(own, mallory.uid, mallory.gid)
      const sockets = await folder('root-sockets')
      const { writer, questionId } = await asking(dir, 'replaced', { socketDir: join(sockets, 's') })
      const real = await readFile(join(dir, 'replaced.jsonl.answers'), 'utf8')
      const thief = startChild(attackerFile, ['impersonate', dir, 'replaced', own, String(writer.child.pid)], {
        uid: mallory.uid,
        gid: mallory.gid,
      })
      await unlessHung(thief.line(/^(bound 1)$/m), 'the attacker replacing the announcement')
      expect(statSync(join(dir, 'replaced.jsonl.answers')).uid).toBe(mallory.uid)
      const refused = await submitter(dir, 'replaced', 'submit', approve(questionId, 'root'))
      expect(refused).toMatchObject({
        status: 'refused',
        code: 'UNAVAILABLE',
        message: expect.stringContaining(`belongs to user ${mallory.uid}`),
      })
      expect(await submitter(dir, 'replaced', 'questions')).toMatchObject({ writer: false })
      // A root-owned announcement that names a socket of another user's: refused as well.
      const forged = JSON.parse(await readFile(join(dir, 'replaced.jsonl.answers'), 'utf8')) as Record<string, unknown>
      await rm(join(dir, 'replaced.jsonl.answers'))
      await writeFile(join(dir, 'replaced.jsonl.answers'), JSON.stringify(forged), { mode: 0o644 })
      expect(await submitter(dir, 'replaced', 'submit', approve(questionId))).toMatchObject({
        status: 'refused',
        code: 'UNAVAILABLE',
        message: expect.stringContaining(`belongs to user ${mallory.uid}`),
      })
      thief.child.kill('SIGKILL')
      await thief.exited
      expect(thief.stdout()).not.toContain('stole')
      // The real channel still works once its announcement is back.
      await writeFile(join(dir, 'replaced.jsonl.answers'), real, { mode: 0o640 })
      expect(await submitter(dir, 'replaced', 'submit', approve(questionId))).toMatchObject({ status: 'accepted' })
      expect((await writer.exited).code).toBe(0)
    })

    it('a stale announcement naming another live socket: the new channel replaces the announcement and never deletes that socket', async () => {
      const dir = await folder('stale')
      const live = join(await folder('live'), `${randomBytes(16).toString('hex')}.sock`)
      const server: Server = createServer((socket) => socket.end('alive\n'))
      await new Promise<void>((resolve) => server.listen(live, resolve))
      try {
        const dead = spawnSync(process.execPath, ['-e', '']).pid!
        const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
        await writeFile(
          join(dir, 'stale.jsonl.answers'),
          JSON.stringify({ v: 1, session: 'stale', socket: live, token: 'ef'.repeat(16), pid: dead, host: hostname(), boot, start: 1 }),
        )
        const { writer, questionId } = await asking(dir, 'stale', { socketDir: join(await folder('stale-sockets'), 's') })
        expect(existsSync(live)).toBe(true)
        const reply = await new Promise<string>((resolve, reject) => {
          const probe = createConnection(live)
          let text = ''
          probe.on('data', (chunk) => (text += chunk))
          probe.on('end', () => resolve(text))
          probe.on('error', reject)
        })
        expect(reply).toBe('alive\n')
        expect(await submitter(dir, 'stale', 'submit', approve(questionId))).toMatchObject({ status: 'accepted' })
        expect((await writer.exited).code).toBe(0)
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    })

    it('the socket and the announcement get the log’s group: its members who may write the log answer; a user of the writer’s own group who may not write it is refused', async () => {
      const member = newUser()
      const outsider = newUser()
      const dir = await folder('group')
      const log = join(dir, 'group.jsonl')
      await writeFile(log, '')
      await chown(log, 0, member.gid)
      await chmod(log, 0o664) // the group may write it; others may read it, not write it
      const sockets = await folder('group-sockets')
      // A writer (root) whose own group is the outsider's, not the log's.
      const { writer, questionId } = await asking(dir, 'group', { socketDir: join(sockets, 's') }, outsider.gid)
      const announced = JSON.parse(await readFile(join(dir, 'group.jsonl.answers'), 'utf8')) as { socket: string }
      expect(statSync(announced.socket)).toMatchObject({ gid: member.gid })
      expect(statSync(announced.socket).mode & 0o777).toBe(0o660)
      expect(statSync(join(dir, 'group.jsonl.answers'))).toMatchObject({ gid: member.gid })
      expect(statSync(join(dir, 'group.jsonl.answers')).mode & 0o777).toBe(0o640)
      const refused = await submitter(dir, 'group', 'submit', approve(questionId, 'outsider'), outsider)
      expect(refused).toMatchObject({ status: 'refused' })
      expect((refused as { code?: string }).code).not.toBe('INVALID_ANSWER')
      expect(await submitter(dir, 'group', 'submit', approve(questionId, 'member'), member)).toMatchObject({ status: 'accepted' })
      expect(await unlessHung(writer.line(/^(answered .+)$/m), 'the writer answered')).toContain('"by":{"id":"member"}')
      expect((await writer.exited).code).toBe(0)
    })

    it('SIGTERM ends the writer as it would have, and its announcement and socket go with it', async () => {
      const dir = await folder('term')
      const { writer } = await asking(dir, 'term', { socketDir: join(await folder('term-sockets'), 's') })
      const announced = JSON.parse(await readFile(join(dir, 'term.jsonl.answers'), 'utf8')) as { socket: string }
      expect(existsSync(announced.socket)).toBe(true)
      writer.child.kill('SIGTERM')
      expect(await writer.exited).toEqual({ code: null, signal: 'SIGTERM' })
      expect(existsSync(join(dir, 'term.jsonl.answers'))).toBe(false)
      expect(existsSync(announced.socket)).toBe(false)
    })
  },
)
