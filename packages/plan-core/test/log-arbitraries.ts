import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import type {} from '@planmode/plan-core'
import fc from 'fast-check'

/** A bare event body (type and data); `seq`/`time` are assigned when it is placed in a log. */
export type Body = { [K in SessionEventType]: { type: K; data: SessionEventMap[K] } }[SessionEventType]

const ids = fc.constantFrom('c1', 'c2', 'c3')
const args = fc.option(fc.constantFrom('', 'off', ' off ', 'OFF', 'draft X', '  plan it  '), { nil: undefined })

export const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  fc
    .tuple(
      fc.boolean(),
      fc.constantFrom(undefined, 'user', 'review', 'model', 'inherit') as fc.Arbitrary<'user' | 'review' | 'model' | 'inherit' | undefined>,
    )
    .map(([active, cause]): Body => ({
      type: 'plan/mode',
      data: cause === undefined ? { active } /* a log from before cause */ : { active, cause },
    })),
  // plan/review records as plan-tool writes them (SPEC §11); plan-core reads them structurally.
  fc
    .constantFrom<Record<string, unknown>>(
      { outcome: 'approved' },
      { outcome: 'approved', plan: '# Edited plan' },
      { outcome: 'approved', unattended: true },
      { outcome: 'stopped', feedback: 'not now', comments: [{ line: 1, text: 'no' }] },
      { outcome: 'dismissed' },
      { outcome: 'keep-planning', feedback: 'more', comments: [{ line: 2, text: 'why?' }] },
    )
    .map((data): Body => ({ type: 'plan/review', data: { toolCallId: 't', ...data } }) as unknown as Body),
  fc.constant<Body>({
    type: 'request/header',
    data: { reason: 'initial', turn: 1, step: 1, model: 'test:model', system: '', tools: [] },
  }),
  fc.nat(5).map((turn): Body => ({ type: 'turn/start', data: { turn } })),
  fc.nat(5).map((turn): Body => ({ type: 'turn/end', data: { turn, reason: 'completed' } })),
  fc.tuple(ids, fc.constantFrom('plan', 'plan', 'other'), args).map(([commandId, name, a]): Body => ({
    type: 'command/run',
    data:
      a === undefined
        ? ({ commandId, name, source: { kind: 'user' } } as SessionEventMap['command/run']) /* a log from before args was always logged */
        : { commandId, name, args: a, source: { kind: 'user' } },
  })),
  fc
    .tuple(ids, fc.constantFrom<'success' | 'error'>('success', 'success', 'error'))
    .map(([commandId, kind]): Body => ({ type: 'command/done', data: { commandId, kind } })),
  fc.constant<Body>({ type: 'user/message', data: { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } }),
  // plan-mode notices and guidance messages as the controller and plan-policy write them (SPEC §3.4, §13),
  // a notice read by its summary alone, and another plugin's notice (ignored)
  fc
    .constantFrom<Body['data']>(
      {
        content: [{ type: 'text', text: 'The user switched this session to plan mode.' }],
        source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: 'Plan mode on' },
      },
      {
        content: [{ type: 'text', text: 'The user switched this session back to the default mode.' }],
        source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: 'Plan mode off' },
      },
      {
        content: [{ type: 'text', text: 'Plan mode is off now.' }],
        source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: 'Plan mode off' },
      },
      { content: [{ type: 'text', text: '# Plan mode\nPlan first.' }], source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' } },
      {
        content: [{ type: 'text', text: 'The user switched this session to plan mode.' }],
        source: { kind: 'plugin', plugin: 'other', form: 'notice' },
      },
    )
    .map((data): Body => ({ type: 'user/message', data }) as Body),
  fc
    .tuple(
      fc.constantFrom('exit_plan_mode', 'exit_plan_mode', 'enter_plan_mode', 'enter_plan_mode', 'read'),
      fc.boolean(),
      fc.constantFrom<unknown>(
        { approved: true },
        { approved: true, plan: '# Edited' },
        undefined,
        { approved: false },
        { entered: true },
        { entered: false },
      ),
    )
    .map(
      ([toolName, isError, value]): Body =>
        ({
          type: 'tool/result',
          data: { toolCallId: 't', toolName, isError, content: [{ type: 'text', text: 'r' }], ...(value === undefined ? {} : { value }) },
        }) as Body,
    ),
)

export function place(bodies: readonly Body[], from = 0): SessionEvent[] {
  return bodies.map((body, index) => ({ ...body, seq: from + index, time: 0 }) as SessionEvent)
}

/** A minimal in-memory session whose `events` array the test controls (push, replace, shorten). */
export class LogSession implements Session {
  readonly id = 'log-session'
  events: SessionEvent[] = []
  push(bodies: readonly Body[]): void {
    this.events.push(...place(bodies, this.events.length))
  }
  async append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    const event = { type, data, seq: this.events.length, time: 0 } as SessionEvent<T>
    this.events.push(event as SessionEvent)
    return event
  }
}
