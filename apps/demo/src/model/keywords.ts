const STOP = new Set(
  'about above after again also and any are because been before being below both but can could does doing down during each few for from further have having here how into its itself just let like make more most must need only other our out over own same should show some such than that the their them then there these they this those through too under until very was were what when where which while who why will with would your also want please instead every each when able'.split(
    ' ',
  ),
)

/** Lower-case words of `text` worth searching for, longest first (ties keep order). */
export function keywords(text: string): string[] {
  const words = text
    .toLowerCase()
    .split(/[^a-z0-9_]+/)
    .filter((word) => word.length >= 4 && !STOP.has(word))
  const unique = [...new Set(words)]
  return unique.sort((a, b) => b.length - a.length)
}

const COMMENT = /^(\/\/+|\/\*+|\*(?!\/)|#+|<!--)\s*/
const DECLARATION = /^(export |class |function |const |let |def |fn |pub |interface |type )/

function clip(text: string): string {
  return text.length > 90 ? `${text.slice(0, 87)}...` : text
}

/** A single-line summary of a file: its first comment or heading, else its first declaration, else its first line. */
export function firstLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim())
  for (const line of lines.slice(0, 60)) {
    if (line.startsWith('#!') || !COMMENT.test(line)) continue
    const cleaned = line
      .replace(COMMENT, '')
      .replace(/\*\/$|-->$/, '')
      .trim()
    if (cleaned !== '' && !/^@[a-zA-Z]+(\s|$)/.test(cleaned) && !/^eslint|^prettier/.test(cleaned)) return clip(cleaned)
  }
  const declaration = lines.find((line) => DECLARATION.test(line))
  if (declaration !== undefined) return clip(declaration)
  const first = lines.find((line) => line !== '')
  return first === undefined ? '(empty)' : clip(first)
}
