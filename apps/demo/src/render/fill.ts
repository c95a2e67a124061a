/**
 * Splits `text` at spaces into rows: the first at most `first` columns, the
 * others at most `rest` (a word longer than a row gets a row of its own). A
 * placeholder stays with the word before it (`2: <note>`, `c <line> <text>`).
 */
export function fill(text: string, first: number, rest: number): string[] {
  const rows: string[] = []
  let row = ''
  for (const word of text.split(/ (?!<)/)) {
    const limit = rows.length === 0 ? first : rest
    if (row !== '' && row.length + 1 + word.length > limit) {
      rows.push(row)
      row = word
    } else row = row === '' ? word : `${row} ${word}`
  }
  rows.push(row)
  return rows
}
