import type { PlanHandoffEventData } from '../wire.js'
import { Markdown } from './Markdown.js'

const sessionHref = (id: string): string => `#/s/${encodeURIComponent(id)}`

/** `web/handed-off` in the session a plan was approved in: where the plan went (SPEC §18), as a link. */
export function HandedOffRow({ seq, session }: { seq: number; session: string }) {
  return (
    <div className="handoff-row" data-testid="handed-off" data-seq={seq} data-session={session} role="note">
      The approved plan went to a fresh session:{' '}
      <a href={sessionHref(session)} data-testid="handed-off-link">
        open <code>{session}</code>
      </a>
    </div>
  )
}

/** `plan/handoff`, the first event of a session carrying out a plan approved elsewhere: which plan, from where, with which model. */
export function HandoffFromRow({ seq, data }: { seq: number; data: PlanHandoffEventData }) {
  return (
    <div
      className="handoff-row from"
      data-testid="handoff-from"
      data-seq={seq}
      data-from-session={data.from.session}
      data-model={data.model ?? ''}
      role="note"
    >
      This session carries out “{data.title}”, approved in{' '}
      <a href={sessionHref(data.from.session)} data-testid="handoff-from-link">
        <code>{data.from.session}</code>
      </a>
      {data.model !== undefined && (
        <>
          {' '}
          with model <code>{data.model}</code>
        </>
      )}
      .
    </div>
  )
}

const PLUGIN_MESSAGES: Readonly<Record<string, string>> = {
  handoff: 'The approved plan, sent to the model',
  progress: 'Plan progress, sent to the model',
  // SPEC §24: plan mode on again with the guidance already in the conversation costs one line.
  'guidance-again': 'Plan-mode guidance: one line pointing back to the guidance sent earlier',
}

/** Whether a plugin message is one {@link PluginMessageRow} shows: plan-tool's handoff message, plan-progress's tracking message or reminder, plan-policy's re-entry line. */
export const isPlanMessage = (form: string | undefined): boolean => form !== undefined && Object.hasOwn(PLUGIN_MESSAGES, form)

/** plan-tool's handoff message, plan-progress's message or plan-policy's re-entry line (SPEC §17, §18, §24): what the model was told, collapsed. */
export function PluginMessageRow({ seq, form, text }: { seq: number; form: string; text: string }) {
  return (
    <details className="guidance plan-message" data-testid="plan-message" data-form={form} data-seq={seq}>
      <summary>{PLUGIN_MESSAGES[form]}</summary>
      {form === 'handoff' ? <Markdown text={text} /> : <p className="pre">{text}</p>}
    </details>
  )
}
