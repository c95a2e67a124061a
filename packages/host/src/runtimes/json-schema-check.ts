import type { JsonSchema } from '@planmode/seams'

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value)
  if (type === 'number') return actual === 'number' || actual === 'integer'
  return actual === type
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

function at(path: string): string {
  return path === '' ? 'the input' : path
}

/**
 * Checks `value` against the subset of JSON Schema tools use: `type` (one or
 * several), `properties`, `required`, `additionalProperties`, `items`,
 * `enum`, `const`, `anyOf`/`oneOf`/`allOf`, string length, number bounds and
 * array length. Returns one message per problem, each with a JSON-pointer
 * style path; an empty list means valid. Unknown keywords are ignored.
 */
export function checkJsonSchema(schema: JsonSchema | boolean, value: unknown, path = ''): string[] {
  if (schema === true || schema === undefined) return []
  if (schema === false) return [`${at(path)}: no value is allowed here`]
  const issues: string[] = []
  const types = schema.type === undefined ? undefined : ([] as unknown[]).concat(schema.type)
  if (types !== undefined && !types.some((type) => matchesType(value, String(type)))) {
    return [`${at(path)}: expected ${types.join(' or ')}, got ${typeOf(value)}`]
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => equal(option, value))) {
    issues.push(
      `${at(path)}: expected one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}, got ${JSON.stringify(value)}`,
    )
  }
  if ('const' in schema && schema.const !== undefined && !equal(schema.const, value)) {
    issues.push(`${at(path)}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`)
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) {
      issues.push(`${at(path)}: expected at least ${schema.minLength} characters`)
    }
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
      issues.push(`${at(path)}: expected at most ${schema.maxLength} characters`)
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) issues.push(`${at(path)}: expected >= ${schema.minimum}`)
    if (typeof schema.maximum === 'number' && value > schema.maximum) issues.push(`${at(path)}: expected <= ${schema.maximum}`)
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      issues.push(`${at(path)}: expected at least ${schema.minItems} items`)
    }
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      issues.push(`${at(path)}: expected at most ${schema.maxItems} items`)
    }
    if (schema.items !== undefined) {
      value.forEach((item, index) => issues.push(...checkJsonSchema(schema.items as JsonSchema, item, `${path}/${index}`)))
    }
  }
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>
    for (const name of schema.required ?? []) {
      if (!(name in record) || record[name] === undefined) issues.push(`${path}/${name}: required property is missing`)
    }
    const properties = schema.properties ?? {}
    for (const [name, item] of Object.entries(record)) {
      const property = properties[name]
      if (property !== undefined) {
        if (item !== undefined) issues.push(...checkJsonSchema(property, item, `${path}/${name}`))
      } else if (schema.additionalProperties === false) {
        issues.push(`${path}/${name}: unknown property`)
      } else if (typeof schema.additionalProperties === 'object') {
        issues.push(...checkJsonSchema(schema.additionalProperties, item, `${path}/${name}`))
      }
    }
  }
  const anyOf = schema.anyOf as JsonSchema[] | undefined
  if (Array.isArray(anyOf) && !anyOf.some((option) => checkJsonSchema(option, value, path).length === 0)) {
    issues.push(`${at(path)}: matches none of the allowed shapes (anyOf)`)
  }
  const oneOf = schema.oneOf as JsonSchema[] | undefined
  if (Array.isArray(oneOf)) {
    const matches = oneOf.filter((option) => checkJsonSchema(option, value, path).length === 0).length
    if (matches !== 1) issues.push(`${at(path)}: must match exactly one allowed shape (oneOf), matched ${matches}`)
  }
  const allOf = schema.allOf as JsonSchema[] | undefined
  if (Array.isArray(allOf)) for (const part of allOf) issues.push(...checkJsonSchema(part, value, path))
  return issues
}
