/**
 * The Standard Schema interface (v1), copied as its authors recommend so
 * that seams has no runtime dependency. zod, valibot, arktype and others
 * implement it.
 *
 * @public
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

/** Members of the `StandardSchemaV1` interface. @public */
export declare namespace StandardSchemaV1 {
  /** The `~standard` property. */
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
    readonly types?: Types<Input, Output> | undefined
  }
  /** A validation result. */
  export type Result<Output> = SuccessResult<Output> | FailureResult
  /** A successful validation. */
  export interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  /** A failed validation. */
  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  /** One problem found by validation. */
  export interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  /** A segment of an issue path. */
  export interface PathSegment {
    readonly key: PropertyKey
  }
  /** Type-level input and output. */
  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
  /** The input type of a schema. */
  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input']
  /** The output type of a schema. */
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output']
}

/**
 * A JSON Schema object (draft 2020-12 subset) as sent to the model in a tool
 * catalog.
 *
 * @public
 */
export interface JsonSchema {
  readonly type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null'
  readonly description?: string
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: readonly string[]
  readonly items?: JsonSchema
  readonly enum?: readonly unknown[]
  readonly const?: unknown
  readonly additionalProperties?: boolean | JsonSchema
  readonly [keyword: string]: unknown
}
