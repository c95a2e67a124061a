import { type ClipboardEvent, type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react'
import type { ImageUpload } from '../api.js'
import type { CommandResult } from '../wire.js'
import { useAction } from '../use-action.js'
import { ErrorLine } from './ErrorLine.js'

interface Attachment extends ImageUpload {
  readonly key: number
  readonly name: string
  readonly url: string
}

const MAX_IMAGE_BYTES = 5 * 1024 * 1024

function readImage(file: File): Promise<ImageUpload> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onerror = () => reject(new Error(`Could not read ${file.name || 'the image'}.`))
    reader.onload = () => {
      const url = String(reader.result)
      const comma = url.indexOf(',')
      resolve({ mediaType: file.type, data: url.slice(comma + 1) })
    }
    reader.readAsDataURL(file)
  })
}

/** What the composer sends: a prompt, or a slash command line. */
export interface ComposerSend {
  prompt(text: string, images: readonly ImageUpload[]): Promise<void>
  command(line: string, images: readonly ImageUpload[]): Promise<CommandResult | null>
}

/** What the empty composer says: what a message would do now. */
function placeholderOf(running: boolean, waiting: 'review' | 'question' | undefined, readOnly: boolean): string {
  if (readOnly) return 'Read-only here: messages are sent from the page of the server that writes this session'
  if (waiting === 'review') return 'The plan review above waits for you…'
  if (waiting === 'question') return 'The question above waits for you…'
  return running ? 'Steer the running turn… (/plan, /plan off, /plan <message>)' : 'Message… (/plan, /plan off, /plan <message>)'
}

/**
 * The composer: a message (Enter sends, Shift+Enter breaks the line), or a
 * slash command such as `/plan`, `/plan off`, `/plan <message>`, with image
 * attachments from the file picker or pasted. The command's reply is shown
 * under it.
 */
export function Composer({
  send,
  running,
  onCancel,
  closed = false,
  waiting,
  readOnly,
}: {
  send: ComposerSend
  running: boolean
  onCancel: () => Promise<void>
  /** The tab lost its server for good: nothing can be sent from here. */
  closed?: boolean
  /** The turn waits for the person: a plan review, or another question, shown above. */
  waiting?: 'review' | 'question'
  /** Why nothing can be sent from this page (another server writes the session): said in place of the controls it would refuse. */
  readOnly?: string
}) {
  const [text, setText] = useState('')
  const [images, setImages] = useState<Attachment[]>([])
  const [reply, setReply] = useState<{ text: string; error: boolean } | null>(null)
  const [attachError, setAttachError] = useState<string | null>(null)
  const action = useAction()
  const cancel = useAction()
  const fileInput = useRef<HTMLInputElement>(null)
  const nextKey = useRef(0)
  const inputId = useId()

  const attach = async (files: readonly File[]) => {
    setAttachError(null)
    const added: Attachment[] = []
    for (const file of files) {
      if (!file.type.startsWith('image/')) {
        setAttachError(`${file.name || 'That file'} is not an image.`)
        continue
      }
      if (file.size > MAX_IMAGE_BYTES) {
        setAttachError(`${file.name || 'The image'} is larger than 5 MB.`)
        continue
      }
      try {
        const image = await readImage(file)
        added.push({ ...image, key: nextKey.current++, name: file.name || 'pasted image', url: URL.createObjectURL(file) })
      } catch (error) {
        setAttachError(error instanceof Error ? error.message : String(error))
      }
    }
    if (added.length > 0) setImages((held) => [...held, ...added])
  }

  const remove = (key: number) =>
    setImages((held) =>
      held.filter((image) => {
        if (image.key === key) URL.revokeObjectURL(image.url)
        return image.key !== key
      }),
    )

  useEffect(() => {
    if (reply === null) return
    const timer = setTimeout(() => setReply(null), 10_000)
    return () => clearTimeout(timer)
  }, [reply])

  const submit = async (event?: FormEvent) => {
    event?.preventDefault()
    const line = text.trim()
    if (closed || (line === '' && images.length === 0)) return
    const uploads = images.map(({ mediaType, data }) => ({ mediaType, data }))
    setReply(null)
    const ok = await action.run(async () => {
      if (line.startsWith('/')) {
        const result = await send.command(line, uploads)
        setReply(
          result === null
            ? { text: `Unknown command: ${line.split(/\s/)[0]}`, error: true }
            : { text: result.text, error: result.kind === 'error' },
        )
      } else {
        await send.prompt(text, uploads)
      }
    })
    if (ok) {
      setText('')
      for (const image of images) URL.revokeObjectURL(image.url)
      setImages([])
    }
  }

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      void submit()
    }
  }

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = [...event.clipboardData.files].filter((file) => file.type.startsWith('image/'))
    if (files.length > 0) {
      event.preventDefault()
      void attach(files)
    }
  }

  return (
    <form className="composer" data-testid="composer" onSubmit={submit} aria-label="Composer">
      {images.length > 0 && (
        <ul className="attachments" aria-label="Attached images">
          {images.map((image) => (
            <li key={image.key} data-testid="composer-attachment">
              <img src={image.url} alt={image.name} />
              <button
                type="button"
                aria-label={`Remove ${image.name}`}
                data-testid="composer-attachment-remove"
                onClick={() => remove(image.key)}
                disabled={action.busy}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="composer-row">
        <label htmlFor={inputId} className="visually-hidden">
          Message, or a command such as /plan
        </label>
        <textarea
          id={inputId}
          data-testid="composer-input"
          value={text}
          rows={2}
          placeholder={placeholderOf(running, waiting, readOnly !== undefined)}
          disabled={readOnly !== undefined}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
          readOnly={action.busy}
          aria-describedby={`${inputId}-hint`}
        />
        <input
          ref={fileInput}
          type="file"
          accept="image/*"
          multiple
          hidden
          data-testid="composer-file"
          aria-label="Attach images"
          onChange={(event) => {
            const files = [...(event.target.files ?? [])]
            event.target.value = ''
            void attach(files)
          }}
        />
        {readOnly === undefined && (
          <>
            <button
              type="button"
              className="secondary"
              data-testid="composer-attach"
              onClick={() => fileInput.current?.click()}
              disabled={action.busy || closed}
              aria-label="Attach images"
            >
              Attach
            </button>
            <button
              type="submit"
              data-testid="composer-send"
              disabled={closed || action.busy || (text.trim() === '' && images.length === 0)}
            >
              {action.busy ? 'Sending…' : 'Send'}
            </button>
          </>
        )}
        {running && !closed && readOnly === undefined && (
          <button
            type="button"
            className="secondary"
            data-testid="composer-cancel"
            disabled={cancel.busy}
            onClick={() => void cancel.run(onCancel)}
          >
            Stop turn
          </button>
        )}
      </div>
      <p id={`${inputId}-hint`} className="hint" data-testid={readOnly === undefined ? 'composer-hint' : 'composer-read-only'}>
        {readOnly ??
          (waiting === 'review'
            ? 'The review above waits for your decision; a message sent now reaches the model only after it (Chat about it talks it over instead).'
            : waiting === 'question'
              ? 'The question above waits for your answer; a message sent now reaches the model only after it.'
              : 'Enter sends, Shift+Enter starts a new line. Paste or attach images.')}
      </p>
      <ErrorLine error={attachError} testId="composer-attach-error" />
      <ErrorLine error={action.error} testId="composer-error" />
      <ErrorLine error={cancel.error} testId="composer-cancel-error" />
      {reply !== null && (
        <p className={`command-result ${reply.error ? 'error' : ''}`} data-testid="command-result" role="status">
          {reply.text}
        </p>
      )}
    </form>
  )
}
