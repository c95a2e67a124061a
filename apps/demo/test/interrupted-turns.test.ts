import type { PlanHistoryView, PlanRevision } from '@planmode/plan-projection/client'
import { INTERRUPTED_TURN_ERROR, type SessionEvent, type SessionEventType } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createStyle } from '../src/render/style.js'
import { interruptedCallIds, interruptedTurns, lastTurnInterrupted } from '../src/terminal/interrupted-turns.js'
import { runPlansCommand, shownStatus } from '../src/terminal/plans-command.js'

function log(...entries: [SessionEventType, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ type, seq, time: seq, data }) as SessionEvent)
}
const call = (toolCallId: string, toolName: string) => ({ type: 'tool-call', toolCallId, toolName, input: {} })
const result = (toolCallId: string, toolName: string) => ({ toolCallId, toolName, isError: false, content: [{ type: 'text', text: 'ok' }] })

/** Turn 1 cut while exit_plan_mode waited (closed the new way), turn 2 cut while enter_plan_mode and a read waited (the old way), turn 3 completed. */
const events = log(
  ['turn/start', { turn: 1 }],
  ['assistant/message', { content: [call('c1', 'read_file')], turn: 1, step: 1 }],
  ['tool/result', result('c1', 'read_file')],
  ['assistant/message', { content: [call('c2', 'exit_plan_mode')], turn: 1, step: 2 }],
  ['step/end', { turn: 1, step: 2 }],
  ['turn/end', { turn: 1, reason: 'interrupted' }],
  ['turn/start', { turn: 2 }],
  ['assistant/message', { content: [call('c3', 'enter_plan_mode'), call('c4', 'read_file')], turn: 2, step: 1 }],
  ['turn/end', { turn: 2, reason: 'error', error: INTERRUPTED_TURN_ERROR }],
  ['turn/start', { turn: 3 }],
  ['assistant/message', { content: [call('c5', 'exit_plan_mode')], turn: 3, step: 1 }],
  ['turn/end', { turn: 3, reason: 'error', error: 'the model failed' }],
)

describe('interrupted turns of a log', () => {
  it('finds both forms of an interrupted turn, each with the calls it left without a result; an error is not one', () => {
    expect(interruptedTurns(events)).toEqual([
      { turn: 1, unanswered: [{ toolCallId: 'c2', toolName: 'exit_plan_mode' }] },
      {
        turn: 2,
        unanswered: [
          { toolCallId: 'c3', toolName: 'enter_plan_mode' },
          { toolCallId: 'c4', toolName: 'read_file' },
        ],
      },
    ])
    expect([...interruptedCallIds(events)]).toEqual(['c2', 'c3', 'c4'])
  })

  it('names the last turn only when it is the one interrupted', () => {
    expect(lastTurnInterrupted(events)).toBeUndefined()
    expect(lastTurnInterrupted(events.slice(0, 9))).toMatchObject({ turn: 2 })
    // A turn started after it: a resume after that has nothing to report.
    expect(lastTurnInterrupted(events.slice(0, 10))).toBeUndefined()
    expect(lastTurnInterrupted([])).toBeUndefined()
  })
})

describe('a review left open by an interrupted turn', () => {
  const revision = (rev: number, toolCallId: string, status: PlanRevision['status']): PlanRevision => ({
    rev,
    toolCallId,
    seq: rev,
    title: `Plan ${rev}`,
    plan: `# Plan ${rev}`,
    status,
  })
  const history: PlanHistoryView = { revisions: [revision(1, 'c2', 'open'), revision(2, 'c5', 'open'), revision(3, 'c9', 'approved')] }
  const interrupted = interruptedCallIds(events)

  it('shows as interrupted, not open; a review still open or already settled keeps its status', () => {
    expect(history.revisions.map((item) => shownStatus(item, interrupted))).toEqual(['interrupted', 'open', 'approved'])
    expect(shownStatus({ ...history.revisions[0]!, status: 'approved' }, interrupted)).toBe('approved')
    expect(shownStatus(history.revisions[0]!)).toBe('open')
  })

  it('in /plans and /plans show', () => {
    const plain = createStyle(false)
    expect(runPlansCommand('', history, plain, process.cwd(), interrupted).lines).toEqual([
      '3 plan revisions:',
      '  #1  “Plan 1”  interrupted',
      '  #2  “Plan 2”  open',
      '  #3  “Plan 3”  approved',
    ])
    expect(runPlansCommand('show 1', history, plain, process.cwd(), interrupted).lines[0]).toBe('#1  “Plan 1”  interrupted')
  })
})
