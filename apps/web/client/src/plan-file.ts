/** A file name for `<title>.md`: no path separators or characters file systems refuse. */
export function planFileName(title: string): string {
  const base = title
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120)
  return `${base === '' ? 'plan' : base}.md`
}
