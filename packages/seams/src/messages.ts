/**
 * An image handed to the host with a message (a composer attachment).
 *
 * @public
 */
export interface ImageAttachment {
  /** Host-assigned identifier, stable for the life of the session. */
  readonly id: string
  /** IANA media type, e.g. `image/png`. */
  readonly mediaType: string
  /** The image bytes, base64-encoded. */
  readonly data: string
  /** Original file name, when known. */
  readonly name?: string
}

/** A text block of a user or assistant message. @public */
export interface TextBlock {
  /** Discriminant. */
  readonly type: 'text'
  /** The text, as written. */
  readonly text: string
}

/** An image block of a user message, referring to its attachment. @public */
export interface ImageBlock {
  /** Discriminant. */
  readonly type: 'image'
  /** The image itself. */
  readonly attachment: ImageAttachment
}

/** A block of a user message. @public */
export type UserContentBlock = TextBlock | ImageBlock

/**
 * Who wrote a user message: the person at the keyboard, or a plugin speaking
 * on the user's behalf (`form: 'notice'` for short state-change notices).
 *
 * @public
 */
export type MessageSource =
  | { readonly kind: 'user' }
  | {
      readonly kind: 'plugin'
      /** The plugin's id, e.g. `plan-mode`. */
      readonly plugin: string
      /** What the message is, e.g. `notice`. */
      readonly form: string
      /** A short label a UI may show instead of the full text. */
      readonly summary?: string
    }

/**
 * A user message: logged as a `user/message` event and part of the model
 * transcript.
 *
 * @public
 */
export interface UserMessage {
  /** The blocks, in order (images usually first). */
  readonly content: readonly UserContentBlock[]
  /** Who wrote it. */
  readonly source: MessageSource
}

/** A tool call the model made. @public */
export interface ToolCallBlock {
  /** Discriminant. */
  readonly type: 'tool-call'
  /** The id that pairs the call with its `tool/result`. */
  readonly toolCallId: string
  /** The name of the tool called. */
  readonly toolName: string
  /** The parsed arguments, as the model sent them. */
  readonly input: unknown
}

/** Model reasoning text, kept in the log but not re-sent by every host. @public */
export interface ReasoningBlock {
  /** Discriminant. */
  readonly type: 'reasoning'
  /** The reasoning text. */
  readonly text: string
}

/** A block of an assistant message. @public */
export type AssistantContentBlock = TextBlock | ToolCallBlock | ReasoningBlock

/** An assistant message: the model's answer for one step. @public */
export interface AssistantMessage {
  /** Text, reasoning and tool calls, in the order the model produced them. */
  readonly content: readonly AssistantContentBlock[]
}
