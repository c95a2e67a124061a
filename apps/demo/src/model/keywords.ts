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

/** A single-line summary of a file: its first comment, heading or non-empty line. */
export function firstLine(text: string): string {
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#!')) continue
    const cleaned = line.replace(/^(\/\/+|#+|\/\*+|\*+|<!--)\s*/, '').replace(/\*\/$/, '').trim()
    if (cleaned === '') continue
    return cleaned.length > 90 ? `${cleaned.slice(0, 87)}...` : cleaned
  }
  return '(empty)'
}
