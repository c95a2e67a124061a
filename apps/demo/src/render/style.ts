/** Terminal styling that collapses to plain text when colour is off. */
export interface Style {
  readonly color: boolean
  bold(text: string): string
  dim(text: string): string
  italic(text: string): string
  red(text: string): string
  green(text: string): string
  yellow(text: string): string
  blue(text: string): string
  magenta(text: string): string
  cyan(text: string): string
}

/** True when colour is wanted: the stream is a TTY and `NO_COLOR` is unset or empty. */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const noColor = env.NO_COLOR
  if (noColor !== undefined && noColor !== '') return false
  return stream.isTTY === true
}

/** A {@link Style} with ANSI colours, or one that leaves text as it is. */
export function createStyle(color: boolean): Style {
  const wrap = (open: number, close: number) => (text: string) => (color ? `\u001b[${open}m${text}\u001b[${close}m` : text)
  return {
    color,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    italic: wrap(3, 23),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    blue: wrap(34, 39),
    magenta: wrap(35, 39),
    cyan: wrap(36, 39),
  }
}
