/** A failed request's message, announced to screen readers. */
export function ErrorLine({ error, testId = 'action-error' }: { error: string | null; testId?: string }) {
  if (error === null) return null
  return (
    <p className="error" role="alert" data-testid={testId}>
      {error}
    </p>
  )
}
