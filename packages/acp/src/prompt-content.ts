import type { ContentBlock } from '@agentclientprotocol/sdk'
import { RequestError } from '@agentclientprotocol/sdk'
import type { ImageAttachment, UserContentBlock, UserMessage } from '@planmode/seams'

/**
 * The user message of a `session/prompt`: text as text, images as image
 * blocks (their base64 data and MIME type), a resource link as a markdown
 * link, an embedded text resource as its URI and text. Audio and embedded
 * binary resources are refused (the agent does not advertise them) with
 * `-32602`, naming the block.
 */
export function promptMessage(prompt: readonly ContentBlock[]): UserMessage {
  const content: UserContentBlock[] = []
  prompt.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text })
        return
      case 'image': {
        const attachment: ImageAttachment = {
          id: `acp-image-${index + 1}`,
          mediaType: block.mimeType,
          data: block.data,
          ...(block.uri == null ? {} : { name: block.uri }),
        }
        content.push({ type: 'image', attachment })
        return
      }
      case 'resource_link':
        content.push({ type: 'text', text: `[${block.title ?? block.name}](${block.uri})` })
        return
      case 'resource':
        if ('text' in block.resource) {
          content.push({ type: 'text', text: `${block.resource.uri}\n\n${block.resource.text}` })
          return
        }
        throw RequestError.invalidParams(
          { block: index },
          `prompt block ${index + 1} is an embedded binary resource, which this agent does not take (it advertises embeddedContext for text only)`,
        )
      default:
        throw RequestError.invalidParams(
          { block: index },
          `prompt block ${index + 1} is of type "${block.type}", which this agent does not take (text, image, resource_link and text resources)`,
        )
    }
  })
  if (content.length === 0) throw RequestError.invalidParams(undefined, 'the prompt is empty: send at least one text block')
  return { content, source: { kind: 'user' } }
}

/** The text of a prompt's text blocks, joined: a command line when it starts with `/`. */
export function promptText(message: UserMessage): string {
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
}

/** The image attachments of a message (a command such as `/plan` may take them). */
export function promptImages(message: UserMessage): ImageAttachment[] {
  return message.content.flatMap((block) => (block.type === 'image' ? [block.attachment] : []))
}
