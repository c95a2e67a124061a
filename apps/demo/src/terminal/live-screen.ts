import type { Interface } from 'node:readline'
import { Writable } from 'node:stream'

/** The spinner frames of the working indicator. */
export const WORKING_FRAMES: readonly string[] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
/** The words after the spinner. */
export const WORKING_LABEL = 'working…'

/**
 * Whether `pnpm start` draws a live screen (a prompt kept below the output,
 * typed text held there while the model streams, a working indicator): only
 * when both stdin and stdout are terminals and the terminal is not `dumb`.
 * Piped or redirected, the output is a plain transcript with no indicator.
 */
export function wantsLiveScreen(stdin: { isTTY?: boolean }, stdout: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stdin.isTTY === true && stdout.isTTY === true && env.TERM !== 'dumb'
}

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g

/** Columns a character takes in a terminal: 2 for wide (CJK, most emoji), 0 for combining marks, else 1. */
function charWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0
  if ((code >= 0x300 && code <= 0x36f) || code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f)) return 0
  if (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  ) {
    return 2
  }
  return 1
}

/** The terminal width of a one-line string, ANSI sequences excluded. */
export function displayWidth(text: string): number {
  let width = 0
  for (const char of text.replace(ANSI, '')) width += char === '\t' ? 8 - (width % 8) : charWidth(char.codePointAt(0)!)
  return width
}

type TerminalOut = Writable & { columns?: number; isTTY?: boolean }

/**
 * The interactive host's terminal when it is a TTY. Output goes above a
 * prompt line that stays at the bottom while a turn runs:
 *
 * - Output is written in rows no wider than the terminal, and the row being
 *   streamed (not yet ended by a newline) is drawn again above the prompt
 *   after every chunk, so the prompt never sits inside streamed text.
 * - readline writes through {@link readlineOutput}, which is muted while the
 *   prompt is not drawn: keys typed then are kept in readline's line and
 *   appear when the prompt is drawn again, never inside the output.
 * - A line the user sends is echoed by {@link insertLine} as part of the
 *   transcript (above a half-streamed row), not by readline.
 * - While the host is working and no review is open, the prompt starts with
 *   a spinner and "working…", refreshed ten times a second.
 */
export class LiveScreen {
  /** What readline writes to: the terminal while the prompt is drawn, nothing otherwise. */
  readonly readlineOutput: TerminalOut
  private rl: Interface | undefined
  private visible = false
  private partial = ''
  private base = ''
  private working = false
  private blankAbove = false
  private frame = 0
  private timer: ReturnType<typeof setInterval> | undefined
  private closed = false

  constructor(
    private readonly out: TerminalOut,
    private readonly decorate: (frame: string, label: string) => string = (frame, label) => `${frame} ${label} `,
  ) {
    const screen = this
    const proxy = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        if (screen.visible && !screen.closed) out.write(chunk)
        callback()
      },
    }) as TerminalOut
    Object.defineProperty(proxy, 'columns', { get: () => out.columns })
    Object.defineProperty(proxy, 'rows', { get: () => (out as { rows?: number }).rows })
    proxy.isTTY = true
    out.on('resize', () => {
      if (screen.visible) proxy.emit('resize')
    })
    this.readlineOutput = proxy
  }

  /** The readline interface whose line the prompt shows. */
  attach(rl: Interface): void {
    this.rl = rl
  }

  /** True while the prompt line is drawn. */
  get promptVisible(): boolean {
    return this.visible
  }

  /** The terminal width minus one column, so the cursor never waits at the right edge. */
  get width(): number {
    const columns = this.out.columns ?? 0
    return columns > 0 ? Math.max(20, columns - 1) : 79
  }

  /** Writes transcript output above the prompt. */
  write(chunk: string): void {
    if (this.closed) {
      this.out.write(chunk)
      return
    }
    this.hidePrompt()
    this.emit(chunk)
  }

  /** Writes one whole line into the transcript, above the row being streamed if there is one. */
  insertLine(text: string): void {
    if (this.closed) {
      this.out.write(`${text}\n`)
      return
    }
    this.hidePrompt()
    if (this.partial === '') {
      this.emit(`${text}\n`)
      return
    }
    const partial = this.partial
    this.out.write('\r\u001b[2K')
    this.partial = ''
    this.emit(`${text}\n`)
    this.out.write(partial)
    this.partial = partial
  }

  /**
   * Draws the prompt (`text`, with the typed line) below the output.
   * `blank` puts an empty line before a prompt that is not already drawn.
   */
  showPrompt(text: string, blank = false): void {
    const rl = this.rl
    if (rl === undefined || this.closed) return
    this.base = text
    if (this.visible && (!blank || this.blankAbove)) {
      this.redraw()
      return
    }
    this.hidePrompt()
    if (this.partial !== '' && blank) {
      this.out.write('\n')
      this.partial = ''
    }
    if (this.partial !== '' || (blank && !this.blankAbove)) this.out.write('\n')
    this.blankAbove = blank
    // readline thinks the cursor is still inside the line it drew last; it is at the start of a fresh row.
    ;(rl as unknown as { prevRows?: number }).prevRows = 0
    this.visible = true
    rl.setPrompt(this.promptText())
    rl.prompt(true)
    this.out.write('\u001b[?25h')
  }

  /** Erases the prompt line; the cursor goes back to the end of the output. */
  hidePrompt(): void {
    const rl = this.rl
    if (!this.visible || rl === undefined) return
    const rows = rl.getCursorPos().rows
    // Hide the cursor while it jumps; showPrompt shows it again.
    this.out.write(`\u001b[?25l${rows > 0 ? `\u001b[${rows}A` : ''}\r\u001b[J`)
    if (this.partial !== '') this.out.write(`\u001b[1A\r\u001b[2K${this.partial}`)
    this.visible = false
  }

  /** Turns the working indicator on or off (it shows on the prompt line). */
  setWorking(working: boolean): void {
    if (this.working === working) return
    this.working = working
    if (working && !this.closed) {
      this.timer = setInterval(() => {
        this.frame = (this.frame + 1) % WORKING_FRAMES.length
        if (this.visible) this.redraw()
      }, 100)
      this.timer.unref()
    } else {
      clearInterval(this.timer)
      this.timer = undefined
    }
    if (this.visible) this.redraw()
  }

  /** Stops the indicator and ends a half-written row; afterwards output is written as it comes and no prompt is drawn. */
  close(): void {
    this.setWorking(false)
    this.hidePrompt()
    if (this.partial !== '') this.out.write('\n')
    this.partial = ''
    this.out.write('\u001b[?25h')
    this.closed = true
  }

  private promptText(): string {
    return this.working ? `${this.decorate(WORKING_FRAMES[this.frame]!, WORKING_LABEL)}${this.base}` : this.base
  }

  private redraw(): void {
    const rl = this.rl!
    rl.setPrompt(this.promptText())
    rl.prompt(true)
  }

  /** Writes output in rows that fit the terminal, remembering the unfinished last row. */
  private emit(chunk: string): void {
    const width = this.width
    let text = ''
    let row = this.partial
    let rowWidth = displayWidth(row)
    for (const piece of chunk.split(/(\u001b\[[0-9;?]*[ -/]*[@-~]|\n)/)) {
      if (piece === '') continue
      if (piece === '\n') {
        text += '\n'
        row = ''
        rowWidth = 0
        continue
      }
      if (piece.startsWith('\u001b')) {
        text += piece
        row += piece
        continue
      }
      for (const char of piece) {
        const w = char === '\t' ? 8 - (rowWidth % 8) : charWidth(char.codePointAt(0)!)
        if (rowWidth + w > width) {
          text += '\n'
          row = ''
          rowWidth = 0
        }
        text += char
        row += char
        rowWidth += w
      }
    }
    this.partial = row
    if (text !== '') this.blankAbove = false
    this.out.write(text)
  }
}
