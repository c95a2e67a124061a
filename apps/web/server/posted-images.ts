import { randomUUID } from 'node:crypto'
import type { ImageAttachment } from '@planmode/seams'
import { HttpError } from './http-error.js'

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** One image as posted: base64 bytes and an `image/*` media type. */
export interface PostedImage {
  /** `image/png`, `image/jpeg`, … */
  readonly mediaType: string
  /** The bytes, base64. */
  readonly data: string
  /** The file name, when the browser knew it. */
  readonly name?: string
}

/** The images as the seams' attachments, each with a fresh id `img_<uuid>`. */
export function attachments(images: readonly PostedImage[]): ImageAttachment[] {
  return images.map((image) => ({
    id: `img_${randomUUID()}`,
    mediaType: image.mediaType,
    data: image.data,
    ...(image.name === undefined ? {} : { name: image.name }),
  }))
}

/** Checks a posted `images` value (absent: none): an array of `{ mediaType: 'image/…', data: <base64>, name? }`; anything else is a 400. */
export function parseImages(raw: unknown): PostedImage[] {
  if (raw === undefined) return []
  if (!Array.isArray(raw)) throw new HttpError(400, 'images must be an array of { mediaType, data, name? }')
  return raw.map((image: unknown, index) => {
    if (typeof image !== 'object' || image === null || Array.isArray(image)) throw new HttpError(400, `images[${index}] must be an object`)
    const { mediaType, data, name, ...extra } = image as Record<string, unknown>
    const unknown = Object.keys(extra)[0]
    if (unknown !== undefined) throw new HttpError(400, `images[${index}] has an unknown member ${JSON.stringify(unknown)}`)
    if (typeof mediaType !== 'string' || !/^image\/[a-z0-9.+-]+$/i.test(mediaType))
      throw new HttpError(400, `images[${index}].mediaType must be an image/* media type`)
    if (typeof data !== 'string' || data === '' || data.length % 4 !== 0 || !BASE64.test(data))
      throw new HttpError(400, `images[${index}].data must be non-empty base64`)
    if (name !== undefined && typeof name !== 'string') throw new HttpError(400, `images[${index}].name must be a string`)
    return { mediaType, data, ...(name === undefined ? {} : { name }) }
  })
}
